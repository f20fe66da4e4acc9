"""``claude`` and ``codex`` runners against fake executables on PATH that print recorded
JSON events (tests/fixtures/external)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ama.agent.external import ExternalTaskRequest, run_external_task
from tests.conftest import FIXTURES
from tests.external.host import FakeHost

pytestmark = pytest.mark.anyio
FIX = FIXTURES / "external"


@pytest.fixture
def fake_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH holding only fake ``claude`` and ``codex`` (and the shell tools)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("claude", "codex"):
        exe = bin_dir / name
        exe.write_text(f"#!{sys.executable}\n" + (FIX / "fake_cli.py").read_text())
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "calls.jsonl"))
    return bin_dir


def _calls(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]


async def _run(agent: str, tmp_path: Path, host: FakeHost, config: dict[str, Any] | None = None,
               cancel: asyncio.Event | None = None, **kw: Any):  # fmt: skip
    req = ExternalTaskRequest(agent=agent, prompt="count the python files", cwd=str(tmp_path), task_id="t7", **kw)
    async with asyncio.timeout(60):
        return await run_external_task(req, host, cancel or asyncio.Event(), config or {})


async def test_claude_stream_json(tmp_path: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_EVENTS", str(FIX / "claude-stream.jsonl"))
    host = FakeHost(answers=["allow"])
    res = await _run("claude", tmp_path, host, model="sonnet")
    assert res.status == "completed", res.error
    assert res.text == "There are 42 Python files."
    sid = "5f0c1c9e-8d0a-4c1b-9a57-2f3b6f1e9d21"
    assert res.session_id == sid
    assert res.usage == {"input": 10, "output": 108, "cacheRead": 25708, "cacheWrite": 1940,
                         "cost": {"total": 0.0156231}}  # fmt: skip
    (call,) = _calls(tmp_path)
    assert call["argv"] == ["-p", "--output-format", "stream-json", "--verbose", "--model", "sonnet"]
    assert call["stdin"] == "count the python files" and call["cwd"] == str(tmp_path)
    assert host.kinds() == ["thinking", "text", "tool_call", "tool_update", "text"]
    tool = host.updates[2]
    assert tool == {"kind": "tool_call", "toolCallId": "toolu_01AbC", "title": "Bash", "toolKind": "execute",
                    "status": "in_progress", "inputSummary": "find . -name '*.py' | wc -l"}  # fmt: skip
    assert host.updates[3] == {"kind": "tool_update", "toolCallId": "toolu_01AbC", "status": "completed", "output": "42"}
    confirm = host.asks[0]
    assert confirm["toolName"] == "task" and confirm["input"]["mode"] == "default"
    assert host.of("ama.agent-session") == [
        {"agent": "claude", "runner": "claude", "sessionId": sid, "cwd": str(tmp_path), "taskId": "t7"}
    ]
    assert host.of("ama.agent-usage") == [
        {"agent": "claude", "sessionId": sid, "unit": "usd", "amount": 0.0156231,
         "tokens": {"input": 10, "output": 108, "cacheRead": 25708, "cacheWrite": 1940}}
    ]  # fmt: skip


async def test_claude_resume_and_configured_args(tmp_path: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_EVENTS", str(FIX / "claude-stream.jsonl"))
    config = {"agents": {"external": {"agents": {"claude": {"args": ["--permission-mode", "acceptEdits"],
                                                            "env": {"FAKE_VERSION": "x"}}}}}}  # fmt: skip
    host = FakeHost()
    res = await _run("claude", tmp_path, host, config, session_id="5f0c1c9e-8d0a-4c1b-9a57-2f3b6f1e9d21")
    assert res.status == "completed"
    (call,) = _calls(tmp_path)
    assert call["argv"] == ["--permission-mode", "acceptEdits", "-p", "--output-format", "stream-json",
                            "--verbose", "--resume", "5f0c1c9e-8d0a-4c1b-9a57-2f3b6f1e9d21"]  # fmt: skip
    assert host.asks == []  # a continued session was confirmed when it started


async def test_claude_max_turns_is_failed_with_its_usage(tmp_path: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_EVENTS", str(FIX / "claude-max-turns.jsonl"))
    host = FakeHost(answers=["allow"])
    res = await _run("claude", tmp_path, host)
    assert res.status == "failed" and res.error == "claude stopped at its turn limit"
    assert res.usage["cost"] == {"total": 0.0041}
    assert host.updates[-1]["status"] == "failed"
    assert [d["unit"] for d in host.of("ama.agent-usage")] == ["usd"]


async def test_codex_exec_json(tmp_path: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_EVENTS", str(FIX / "codex-exec.jsonl"))
    host = FakeHost(answers=["allow"])
    res = await _run("codex", tmp_path, host, {"agents.external.agents": {"codex": {"args": ["--full-auto"]}}})
    assert res.status == "completed", res.error
    assert res.text == "There are 42 Python files; I wrote the number to COUNT.txt."
    tid = "0199a213-81c0-7800-8aa1-bbab2a035a53"
    assert res.session_id == tid
    assert res.usage == {"input": 315, "output": 122, "cacheRead": 24448, "cacheWrite": 0, "cost": {"total": 0.0}}
    (call,) = _calls(tmp_path)
    assert call["argv"] == ["exec", "--json", "--full-auto", "-"]
    assert host.asks[0]["input"]["mode"] == "workspace-write"
    assert host.kinds() == ["thinking", "tool_call", "tool_update", "plan", "tool_call", "tool_update", "plan", "text"]
    assert host.updates[1]["toolKind"] == "execute" and host.updates[2]["output"] == "42\n"
    assert host.updates[4]["locations"] == [{"path": "/work/project/COUNT.txt"}]
    assert host.updates[6]["entries"][1] == {"content": "Write COUNT.txt", "status": "completed"}
    assert host.of("ama.agent-usage") == [
        {"agent": "codex", "sessionId": tid, "unit": "tokens", "amount": 24885,
         "tokens": {"input": 315, "output": 122, "cacheRead": 24448, "cacheWrite": 0}}
    ]  # fmt: skip


async def test_codex_resume_argv(tmp_path: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_EVENTS", str(FIX / "codex-exec.jsonl"))
    res = await _run("codex", tmp_path, FakeHost(), session_id="0199a213-81c0-7800-8aa1-bbab2a035a53", model="gpt-5")
    assert res.status == "completed"
    (call,) = _calls(tmp_path)
    assert call["argv"] == ["exec", "--json", "--model", "gpt-5", "resume", "0199a213-81c0-7800-8aa1-bbab2a035a53", "-"]


async def test_codex_turn_failed(tmp_path: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_EVENTS", str(FIX / "codex-failed.jsonl"))
    res = await _run("codex", tmp_path, FakeHost(answers=["allow"]))
    assert res.status == "failed"
    assert res.error == "codex turn failed: stream disconnected before completion: Your input exceeds the context window of this model."


async def test_cli_crash_mid_turn(tmp_path: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_EVENTS", str(FIX / "claude-stream.jsonl"))
    monkeypatch.setenv("FAKE_EXIT_AFTER", "3")
    host = FakeHost(answers=["allow"])
    res = await _run("claude", tmp_path, host)
    assert res.status == "failed"
    assert res.error == "claude exited with code 1: fatal: lost the connection to the model mid-turn"
    assert res.session_id == "5f0c1c9e-8d0a-4c1b-9a57-2f3b6f1e9d21"
    assert res.text == ""  # no result came
    assert host.of("ama.agent-usage") == []


async def test_cli_cancel_interrupts_the_process(tmp_path: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_EVENTS", str(FIX / "codex-exec.jsonl"))
    monkeypatch.setenv("FAKE_HANG_AFTER", "4")
    cancel = asyncio.Event()
    host = FakeHost(answers=["allow"])
    orig = host.update

    def update(payload: dict[str, Any]) -> None:
        orig(payload)
        if payload["kind"] == "tool_call":
            cancel.set()

    host.update = update  # type: ignore[method-assign]
    res = await _run("codex", tmp_path, host, cancel=cancel)
    assert res.status == "aborted" and res.error == "cancelled"
    assert res.session_id == "0199a213-81c0-7800-8aa1-bbab2a035a53"


async def test_absent_runner_fails_clearly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    host = FakeHost(answers=["allow"])
    res = await _run("claude", tmp_path, host)
    assert res.status == "failed"
    assert res.error == (
        "claude is not installed: no 'claude' on PATH (install it, or set agents.external.agents['claude'].command)"
    )
    assert host.asks == [] and host.records == []


async def test_not_allowed_and_unknown_agents(tmp_path: Path) -> None:
    host = FakeHost()
    res = await _run("codex", tmp_path, host, {"agents.external.allow": ["claude"]})
    assert res.status == "failed"
    assert res.error == "external agent codex is not allowed (agents.external.allow: claude)"
    res = await _run("acp:gemini", tmp_path, host)
    assert res.error is not None and "acp:gemini is not allowed" in res.error
    res = await _run("gpt", tmp_path, host)
    assert res.error == "unknown external agent 'gpt': use claude, codex or acp:<program>"
    res = await _run("claude", tmp_path, host, {"agents.external.agents": {"claude": {"args": "-p"}}})
    assert res.error == "agents.external.agents claude.args must be a list of strings, got '-p'"
    assert host.asks == []
