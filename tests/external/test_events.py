"""The pure mappings: ACP updates and permission answers, Claude / Codex edge cases."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ama.agent.external import ExternalTaskRequest, run_external_task
from ama.agent.external.acp_events import chosen_option, input_summary, update_payload
from ama.agent.external.cli_events import ClaudeStream, CodexStream
from tests.external.host import FakeHost

OPTIONS = [
    {"optionId": "a1", "name": "Allow", "kind": "allow_once"},
    {"optionId": "a2", "name": "Always", "kind": "allow_always"},
    {"optionId": "r1", "name": "Reject", "kind": "reject_once"},
]


def test_chosen_option() -> None:
    assert chosen_option("a2", OPTIONS) == "a2"
    assert chosen_option("allow", OPTIONS) == "a1"
    assert chosen_option("allow_session", OPTIONS) == "a2"
    assert chosen_option("deny", OPTIONS) == "r1"
    assert chosen_option("", OPTIONS) == "r1"  # denied / unanswered picks a reject option
    assert chosen_option("bogus", OPTIONS) is None  # an unknown answer is the cancelled outcome
    assert chosen_option("", OPTIONS[:2]) is None
    assert chosen_option("allow_session", OPTIONS[:1]) == "a1"


def test_input_summary() -> None:
    assert input_summary({"command": "ls  -la\n/tmp"}) == "ls -la /tmp"
    assert input_summary({"file_path": "/a/b.py", "content": "x"}) == "/a/b.py"
    assert input_summary({"cmd": ["git", "status"]}) == "git status"
    assert input_summary({"b": 1, "a": 2}) == '{"a": 2, "b": 1}'
    assert input_summary(None) is None and input_summary({}) is None
    long = input_summary({"command": "x" * 500})
    assert long is not None and len(long) == 200 and long.endswith("…")


def test_update_payload() -> None:
    assert update_payload({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}) == {
        "kind": "text",
        "text": "hi",
    }
    assert update_payload({"sessionUpdate": "agent_message_chunk", "content": {"type": "image", "data": "x"}}) is None
    call = update_payload(
        {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read a.txt", "kind": "read",
         "locations": [{"path": "/w/a.txt", "line": 1}], "rawInput": {"path": "a.txt"}}
    )  # fmt: skip
    assert call == {"kind": "tool_call", "toolCallId": "c1", "title": "Read a.txt", "toolKind": "read",
                    "status": "pending", "locations": [{"path": "/w/a.txt", "line": 1}], "inputSummary": "a.txt"}  # fmt: skip
    upd = update_payload(
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
         "content": [{"type": "content", "content": {"type": "text", "text": "one\n"}}]}
    )  # fmt: skip
    assert upd == {"kind": "tool_update", "toolCallId": "c1", "status": "completed", "output": "one\n"}
    plan = update_payload({"sessionUpdate": "plan", "entries": [{"content": "a", "status": "done", "priority": "high"}]})
    assert plan == {"kind": "plan", "entries": [{"content": "a", "status": "done"}]}
    assert update_payload({"sessionUpdate": "current_mode_update", "currentModeId": "plan"}) is None


def test_claude_error_result_and_subagent_messages() -> None:
    s = ClaudeStream()
    sub = {"type": "assistant", "parent_tool_use_id": "toolu_1", "session_id": "s1",
           "message": {"content": [{"type": "text", "text": "inner"}]}}  # fmt: skip
    assert s.feed(sub) == []  # Claude's own sub-agent is not forwarded
    s.feed({"type": "result", "subtype": "success", "is_error": True, "result": "Credit balance is too low",
            "session_id": "s1", "total_cost_usd": 0})  # fmt: skip
    assert s.status == "failed" and s.error == "claude failed: Credit balance is too low"
    assert s.usage is not None and s.usage.cost == 0.0 and not s.usage.known


def test_codex_usage_over_several_turns_and_failed_commands() -> None:
    s = CodexStream()
    out = s.feed({"type": "item.completed", "item": {"id": "i1", "type": "command_execution", "command": "false",
                                                      "aggregated_output": "", "exit_code": 1, "status": "failed"}})  # fmt: skip
    assert [p["kind"] for p in out] == ["tool_call", "tool_update"] and out[1]["status"] == "failed"
    s.feed({"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 4, "output_tokens": 2}})
    s.feed({"type": "turn.completed", "usage": {"input_tokens": 5, "cached_input_tokens": 0, "output_tokens": 1}})
    assert s.usage is not None and (s.usage.input, s.usage.cache_read, s.usage.output) == (11, 4, 3)
    assert s.status == "completed"


@pytest.mark.anyio
async def test_cancel_while_the_first_run_confirmation_waits(tmp_path: Path) -> None:
    host = FakeHost()
    host.hold = True  # nobody answers
    cancel = asyncio.Event()
    req = ExternalTaskRequest(agent="acp:ama", prompt="x", cwd=str(tmp_path), task_id="t")
    task = asyncio.create_task(run_external_task(req, host, cancel, {}))
    while not host.asks:
        await asyncio.sleep(0.01)
    cancel.set()
    async with asyncio.timeout(30):
        res = await task
    assert res.status == "aborted" and res.error == "cancelled" and host.records == []
