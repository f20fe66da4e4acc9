"""run_hooks with real /bin/sh hooks: protocol, aggregation, errors, timeouts."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest

from ama.hooks import HookOutcome, interpret, run_hooks


def run(event: str, hooks: list[dict], cwd: Path, payload: dict | None = None, **kw) -> HookOutcome:
    return asyncio.run(run_hooks(event, payload or {}, {event: hooks}, cwd=str(cwd), **kw))


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def echo_json(obj: dict) -> str:
    return "printf '%s\\n' " + "'" + json.dumps(obj) + "'"


@pytest.mark.parametrize("decision", ["allow", "deny", "ask"])
def test_pre_tool_use_json_decision(tmp_path: Path, decision: str) -> None:
    out = run("PreToolUse", [{"command": echo_json({"decision": decision, "reason": f"said {decision}"})}], tmp_path,
              {"toolName": "bash", "toolInput": {"command": "ls"}})  # fmt: skip
    assert (out.decision, out.reason) == (decision, f"said {decision}")
    assert out.records[0].exit_code == 0 and out.records[0].decision == decision
    assert out.blocked is (decision == "deny")


def test_payload_cwd_and_environment(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    hook = script(tmp_path, "record.sh", f'cat > {tmp_path}/stdin.json\npwd > {tmp_path}/pwd\n'
                  f'echo "$AMA_PROJECT_DIR $AMA_HOOK_EVENT $AMA_SESSION_ID $EXTRA" > {tmp_path}/env\n')  # fmt: skip
    payload = {"sessionId": "s1", "toolName": "edit", "toolInput": {"path": "a.py"}, "cwd": "ignored"}
    out = run("PreToolUse", [{"matcher": "edit", "command": hook}], ws, payload, env={"EXTRA": "x"})
    assert out.decision is None and out.records[0].error is None
    assert json.loads((tmp_path / "stdin.json").read_text()) == {
        "event": "PreToolUse", "cwd": str(ws), "sessionId": "s1", "toolName": "edit", "toolInput": {"path": "a.py"},
    }  # fmt: skip
    assert (tmp_path / "pwd").read_text().strip() == str(ws)
    assert (tmp_path / "env").read_text().split() == [str(ws), "PreToolUse", "s1", "x"]


def test_matcher_filters_tools(tmp_path: Path) -> None:
    hooks = [{"matcher": "bash|edit", "command": "exit 2"}]
    assert run("PreToolUse", hooks, tmp_path, {"toolName": "read"}).records == ()
    assert run("PreToolUse", hooks, tmp_path, {"toolName": "bash"}).decision == "deny"


def test_exit_2_denies_with_stderr(tmp_path: Path) -> None:
    out = run("PreToolUse", [{"command": "echo 'not on main' >&2; exit 2"}], tmp_path, {"toolName": "bash"})
    assert (out.decision, out.reason) == ("deny", "not on main")
    assert out.records[0].exit_code == 2


def test_aggregation_deny_beats_ask_beats_allow(tmp_path: Path) -> None:
    allow = {"command": echo_json({"decision": "allow", "reason": "a"})}
    ask = {"command": echo_json({"decision": "ask", "reason": "b"})}
    ask2 = {"command": echo_json({"decision": "ask", "reason": "c"}) + " # second"}
    deny = {"command": "echo d >&2; exit 2"}
    p = {"toolName": "bash"}
    assert run("PreToolUse", [allow, ask, ask2], tmp_path, p).reason == "b\nc"
    out = run("PreToolUse", [allow, ask, deny], tmp_path, p)
    assert (out.decision, out.reason) == ("deny", "d")
    assert [r.decision for r in out.records] == ["allow", "ask", "deny"]
    assert run("PreToolUse", [allow], tmp_path, p).decision == "allow"


def test_claude_code_hook_specific_output(tmp_path: Path) -> None:
    body = {"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "double-check"}}
    out = run("PreToolUse", [{"command": echo_json(body)}], tmp_path, {"toolName": "bash"})
    assert (out.decision, out.reason) == ("ask", "double-check")


@pytest.mark.parametrize(
    ("command", "error"),
    [
        ("echo '{not json'", "invalid JSON on stdout"),
        (
            'echo \'{"decision": "maybe"}\'',
            "decision 'maybe' is not valid for PreToolUse (expected allow, deny or ask)",
        ),
        ("echo '{\"reason\": 5}'", "'reason' and 'additionalContext' must be strings"),
        ("echo boom >&2; exit 1", "exit code 1: boom"),
        ("no-such-command-for-ama-tests", "exit code 127"),
        ("kill -9 $$", "killed by signal 9"),
    ],
)
def test_errors_are_reported_not_raised(tmp_path: Path, command: str, error: str) -> None:
    out = run("PreToolUse", [{"command": command}], tmp_path, {"toolName": "bash"})
    assert out.decision is None
    (record,) = out.records
    assert record.error is not None and record.error.startswith(error), record.error
    assert record.to_event()["error"] == record.error


def test_plain_text_on_stdout_is_ignored_for_tool_events(tmp_path: Path) -> None:
    out = run("PreToolUse", [{"command": "echo checking...; echo '[1]'"}], tmp_path, {"toolName": "bash"})
    assert out.decision is None and out.records[0].error is None and out.additional_context == ""


def test_user_prompt_submit_context(tmp_path: Path) -> None:
    hooks = [
        {"command": echo_json({"additionalContext": "branch: main"})},
        {"command": "echo 'today is Tuesday'"},
        {"command": "true"},
    ]
    out = run("UserPromptSubmit", hooks, tmp_path, {"prompt": "hi"})
    assert out.additional_context == "branch: main\n\ntoday is Tuesday"
    assert out.decision is None


def test_user_prompt_submit_block(tmp_path: Path) -> None:
    out = run("UserPromptSubmit", [{"command": "echo 'no secrets in prompts' >&2; exit 2"}], tmp_path)
    assert (out.decision, out.reason, out.blocked) == ("block", "no secrets in prompts", True)


def test_stop_block_continues_with_reason(tmp_path: Path) -> None:
    out = run(
        "Stop", [{"command": echo_json({"decision": "block", "reason": "tests fail: fix them"})}], tmp_path
    )
    assert (out.decision, out.reason) == ("block", "tests fail: fix them")
    out = run("Stop", [{"command": echo_json({"decision": "allow"})}], tmp_path)
    assert out.decision is None and "not valid for Stop" in (out.records[0].error or "")


def test_post_tool_use_block_and_post_rewind_cannot_block(tmp_path: Path) -> None:
    out = run("PostToolUse", [{"command": "echo 'lint failed' >&2; exit 2"}], tmp_path, {"toolName": "edit"})
    assert (out.decision, out.reason) == ("block", "lint failed")
    out = run("PostRewind", [{"command": "exit 2"}], tmp_path, {"entryId": "e1", "mode": "both", "files": []})
    assert out.decision is None
    assert out.records[0].error == "exit code 2 (PostRewind hooks cannot block): hook exited with code 2"


def _gone(pid: int) -> bool:
    """The process no longer runs (reaped, or a zombie waiting for its new parent)."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self/stat").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
        except FileNotFoundError:
            return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_timeout_kills_the_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    hook = {"command": f"sleep 60 & echo $! > {pidfile}; wait", "timeout": 0.5}
    out = run("Stop", [hook], tmp_path)
    (record,) = out.records
    assert record.timed_out and record.exit_code is None and out.decision is None
    assert "timed out after 0.5 s" in (record.error or "")
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 10  # waiting for the kernel, not asserting on time
    while not _gone(grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _gone(grandchild)


def test_default_timeout_applies(tmp_path: Path) -> None:
    out = run("Stop", [{"command": "sleep 30"}], tmp_path, timeout_default=0.3)
    assert out.records[0].timed_out


def test_no_hooks_no_processes(tmp_path: Path) -> None:
    out = asyncio.run(run_hooks("Stop", {}, {}, cwd=str(tmp_path)))
    assert out == HookOutcome("Stop")


def test_record_event_shape(tmp_path: Path) -> None:
    out = run("PreToolUse", [{"command": "exit 2"}], tmp_path, {"toolName": "bash"})
    event = out.records[0].to_event()
    assert set(event) == {"event", "command", "exitCode", "durationMs", "timedOut", "decision"}
    assert (event["event"], event["command"], event["exitCode"], event["timedOut"]) == (
        "PreToolUse",
        "exit 2",
        2,
        False,
    )
    assert isinstance(event["durationMs"], int)


def test_interpret_is_pure() -> None:
    assert interpret("PreToolUse", 0, '{"decision": "approve"}', "").decision == "allow"
    assert interpret("PreToolUse", 0, '{"decision": "block", "reason": "r"}', "").decision == "deny"
    assert interpret("Stop", 0, "", "").decision is None
    assert interpret("UserPromptSubmit", 0, "ctx", "").context == "ctx"
    assert interpret("PreToolUse", 2, "", "").reason == "hook exited with code 2"


def test_cancelling_kills_the_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"

    async def main() -> None:
        hooks = {
            "Stop": [{"command": f"sleep 60 & echo $! > {pidfile}.tmp; mv {pidfile}.tmp {pidfile}; wait"}]
        }
        task = asyncio.ensure_future(run_hooks("Stop", {}, hooks, cwd=str(tmp_path)))
        while not pidfile.exists():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while not _gone(grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _gone(grandchild)
