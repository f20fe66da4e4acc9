"""The agent with the OS sandbox for bash (real bwrap): no prompt inside, a hint on denial,
``sandbox: false`` goes through approval (denied when unattended)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ama.sandbox import detect
from tests.agent.helpers import write_script
from tests.conftest import ama_cmd

status = detect(refresh=True)
pytestmark = pytest.mark.skipif(
    status.kind != "bwrap", reason=f"no working bubblewrap here: {status.explanation}"
)


def test_sandboxed_bash_needs_no_prompt_escape_fails_with_hint_and_retry_is_denied(tmp_path: Path, ama_home: Path) -> None:
    (ama_home / "config.json").write_text(json.dumps({"sandbox": {"bash": "auto"}}))
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "escape.txt"
    model = write_script(
        tmp_path / "s.json",
        [
            {"toolCalls": [{"name": "bash", "arguments": {"command": "echo inside > made.txt && cat made.txt"}}]},
            {"toolCalls": [{"name": "bash", "arguments": {"command": f"echo x > {target}"}}]},
            {"toolCalls": [{"name": "bash", "arguments": {"command": f"echo x > {target}", "sandbox": False}}]},
            "done",
        ],
    )
    p = subprocess.run(
        ama_cmd("-p", "go", "--model", model, "--output-format", "stream-json"),
        cwd=ws, capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0, p.stderr
    events = [json.loads(x) for x in p.stdout.splitlines()]
    assert not any(e["type"] == "permission_request" for e in events)  # unattended: never asks
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert (ws / "made.txt").read_text() == "inside\n"
    assert ends[0]["result"]["details"]["sandboxed"] is True and not ends[0]["isError"]
    text1 = ends[1]["result"]["content"][0]["text"]
    assert ends[1]["isError"] and "[sandbox: this command ran in ama's OS sandbox" in text1
    assert ends[2].get("denied") is True and "sandbox: false" in ends[2]["result"]["content"][0]["text"]
    assert not target.exists()  # checked on the host


def test_sandbox_off_by_default_asks_in_default_mode(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    model = write_script(tmp_path / "s.json", [{"toolCalls": [{"name": "bash", "arguments": {"command": "touch f"}}]}, "ok"])
    p = subprocess.run(
        ama_cmd("-p", "go", "--model", model, "--output-format", "stream-json"),
        cwd=ws, capture_output=True, text=True, timeout=120,
    )
    end = [json.loads(x) for x in p.stdout.splitlines() if '"tool_execution_end"' in x][0]
    assert end.get("denied") is True and not (ws / "f").exists()
