"""`ama -p` with a tool call against a server with a strict chat template: a fresh session,
and a pi session continued (it has no ama system message, so ama adds one at its leaf).
The default suite uses the local stub (tests/ai/strict_template.py); set
``AMA_TEST_LLAMA_SERVER=http://host:port`` (a running llama.cpp ``llama-server`` or other
OpenAI-compatible server with a strict template) to run the same against it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.ai.strict_template import StrictTemplateServer, provider_config, template_error
from tests.conftest import FIXTURES, ama_cmd

PI_V3 = FIXTURES / "pi" / "v3-session.jsonl"


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("remember the milk\n")
    return ws


def pi_session(ws: Path, tmp_path: Path) -> Path:
    """The pi v3 fixture, moved into this workspace (its cwd rewritten)."""
    path = tmp_path / "pi.jsonl"
    path.write_text(PI_V3.read_text().replace('"cwd":"/home/me/proj"', json.dumps({"cwd": str(ws)})[1:-1]))
    return path


def run(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(ama_cmd(*args), cwd=ws, capture_output=True, text=True, timeout=180)


def prompt(ws: Path, model: str, *extra: str) -> subprocess.CompletedProcess:
    return run(ws, "-p", "what do my notes say? read notes.txt", "--model", model, "--permission-mode", "full-auto", *extra)


def test_fresh_and_pi_continued_sessions_pass_the_strict_template(tmp_path: Path, ama_home: Path) -> None:
    ws = workspace(tmp_path)
    with StrictTemplateServer() as server:
        (ama_home / "config.json").write_text(json.dumps(provider_config(server.base_url)))
        fresh = prompt(ws, "strict/strict")
        assert fresh.returncode == 0, fresh.stderr
        assert "remember the milk" in fresh.stdout
        pi = pi_session(ws, tmp_path)
        cont = prompt(ws, "strict/strict", "--resume", str(pi))
        assert cont.returncode == 0, (cont.stderr, server.errors)
        assert "remember the milk" in cont.stdout
        again = run(ws, "-p", "and again", "--model", "strict/strict", "--permission-mode", "full-auto", "--resume", str(pi))
        assert again.returncode == 0, (again.stderr, server.errors)
    assert server.errors == []
    assert len(server.requests) == 6  # three prompts, each a tool call and a reply
    for body in server.requests[2:]:  # the continued pi session: system first, exactly once
        roles = [m["role"] for m in body["messages"]]
        assert roles[0] == "system" and "system" not in roles[1:]
        assert any("parser" in json.dumps(m) for m in body["messages"])  # with pi's history


def test_the_stub_refuses_what_strict_templates_refuse() -> None:
    sys_ = {"role": "system", "content": "s"}
    u, a = {"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}
    call = {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}]}
    res = {"role": "tool", "tool_call_id": "c1", "content": "r"}
    assert template_error([sys_, u, call, res, a, u]) is None
    assert template_error([u, a, sys_, u]) == "System message must be at the beginning."
    assert "alternate" in template_error([sys_, u, u])
    assert "alternate" in template_error([sys_, a, u])
    assert "tool result" in template_error([sys_, u, call, u])
    assert "tool result" in template_error([sys_, u, res])


LLAMA = os.environ.get("AMA_TEST_LLAMA_SERVER")


@pytest.mark.skipif(not LLAMA, reason="set AMA_TEST_LLAMA_SERVER=http://host:port to run against a real server")
def test_a_real_strict_template_server(tmp_path: Path, ama_home: Path) -> None:
    ws = workspace(tmp_path)
    base = LLAMA.rstrip("/")  # type: ignore[union-attr]
    base = base if base.endswith("/v1") else base + "/v1"
    model = os.environ.get("AMA_TEST_LLAMA_MODEL", "default")
    (ama_home / "config.json").write_text(json.dumps(provider_config(base, model)))
    fresh = prompt(ws, f"strict/{model}", "--output-format", "json")
    assert fresh.returncode == 0, fresh.stderr
    pi = pi_session(ws, tmp_path)
    cont = prompt(ws, f"strict/{model}", "--resume", str(pi), "--output-format", "json")
    assert cont.returncode == 0, cont.stderr
