"""AgentSession in process: retries, abort, steering, follow-up, approvals, hooks, resume."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ama.agent.approvals import CallbackBroker
from ama.messages import ToolResultMessage, UserMessage
from ama.session.entries import ContextEditEntry, CustomMessageEntry, MessageEntry
from ama.session.reader import read_session
from tests.agent.helpers import make_agent, write_script


def run(coro):
    return asyncio.run(coro)


def types(events: list[dict]) -> list[str]:
    return [e["type"] for e in events]


def test_retryable_error_is_retried_and_removed_from_context(tmp_path: Path, ama_home: Path) -> None:
    (ama_home / "config.json").write_text(json.dumps({"retry": {"baseDelayMs": 1}}))
    model = write_script(
        tmp_path / "s.json",
        [{"error": {"status": 529, "type": "overloaded_error", "message": "overloaded"}}, "recovered"],
    )

    async def go():
        agent, events = await make_agent(tmp_path, model)
        res = await agent.prompt("hi")
        ctx = agent.session.context()
        await agent.close()
        return agent, events, res, ctx

    agent, events, res, ctx = run(go())
    assert res.record.status == "COMPLETED" and res.text == "recovered"
    starts = [e for e in events if e["type"] == "auto_retry_start"]
    assert len(starts) == 1 and starts[0]["attempt"] == 1 and starts[0]["maxAttempts"] == 3
    assert [e for e in events if e["type"] == "auto_retry_end"][0]["success"] is True
    edits = [e for e in agent.session.entries if isinstance(e, ContextEditEntry)]
    assert len(edits) == 1 and edits[0].reason == "retry" and edits[0].replacement is None
    assert [m.content if isinstance(m, UserMessage) else "" for m in ctx.messages][1] == "hi"
    assert [type(m).__name__ for m in ctx.messages] == ["SystemMessage", "UserMessage", "AssistantMessage"]
    requests = [e.data for e in agent.session.entries if getattr(e, "custom_type", None) == "ama.request"]
    assert [r["attempt"] for r in requests] == [1, 2] and requests[0]["stopReason"] == "error"


def test_abort_keeps_partial_reply_and_appends_note(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [{"text": ["a", "b", "c", "d", "e", "f"], "delayMs": 200}])

    async def go():
        agent, events = await make_agent(tmp_path, model)
        task = agent.start("write a lot")
        while not any(e.get("assistantMessageEvent", {}).get("type") == "text_delta" for e in events):
            await asyncio.sleep(0.01)
        agent.abort()
        res = await task
        await agent.close()
        return agent, events, res

    agent, events, res = run(go())
    assert res.record.status == "CANCELLED" and res.exit_code == 130
    assert res.message.stop_reason == "aborted" and 0 < len(res.text) < 6
    last_entries = agent.session.entries[-3:]
    note = [e for e in last_entries if isinstance(e, CustomMessageEntry)]
    assert note and note[0].custom_type == "ama.aborted" and note[0].display is False
    assert types(events)[-1] == "agent_settled"


def test_steering_skips_remaining_calls_and_is_delivered(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("A")
    model = write_script(
        tmp_path / "s.json",
        [
            {"toolCalls": [{"name": "bash", "arguments": {"command": "sleep 0.3; echo one"}}, {"name": "read", "arguments": {"path": "a.txt"}}]},
            "ok, switching to the new request",
        ],
    )

    async def go():
        agent, events = await make_agent(tmp_path, model, permission_mode="full-auto")
        task = agent.start("do two things")
        while not any(e["type"] == "tool_execution_start" for e in events):
            await asyncio.sleep(0.01)
        agent.steer("actually, stop and do X")
        res = await task
        await agent.close()
        return agent, events, res

    agent, events, res = run(go())
    results = [e.message for e in agent.session.entries if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage)]
    assert "one" in results[0].content[0].text
    assert results[1].is_error and "Skipped" in results[1].content[0].text
    steer = [e.message for e in agent.session.entries if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage)][-1]
    assert steer.content == "actually, stop and do X" and steer.origin == "steer"
    assert res.text == "ok, switching to the new request"
    queue = [e for e in events if e["type"] == "queue_update"]
    assert queue[0]["steering"] == ["actually, stop and do X"] and queue[-1]["steering"] == []


def test_follow_up_runs_after_the_reply(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [{"text": "first", "delayMs": 100}, "second"])

    async def go():
        agent, events = await make_agent(tmp_path, model)
        task = agent.start("one")
        assert agent.start("two", behavior="followUp") is None
        with pytest.raises(Exception) as err:
            agent.start("three")
        assert getattr(err.value, "code", "") == "busy"
        res = await task
        await agent.close()
        return agent, res

    agent, res = run(go())
    users = [e.message for e in agent.session.entries if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage)]
    assert [(u.content, u.origin if isinstance(u.origin, str) else None) for u in users] == [("one", None), ("two", "followUp")]
    assert res.text == "second"


def test_approvals_through_a_broker(tmp_path: Path) -> None:
    model = write_script(
        tmp_path / "s.json",
        [
            {"toolCalls": [{"name": "bash", "arguments": {"command": "echo first > f1"}}]},
            {"toolCalls": [{"name": "bash", "arguments": {"command": "echo second > f2"}}]},
            {"toolCalls": [{"name": "bash", "arguments": {"command": "echo third > f3"}}]},
            "done",
        ],
    )
    answers = iter(["allow", "deny", "allow"])
    asked: list[dict] = []

    async def answer(req):
        asked.append(req)
        return next(answers)

    async def go():
        agent, events = await make_agent(tmp_path, model, broker=CallbackBroker(answer))
        await agent.prompt("make files")
        await agent.close()
        return events

    events = run(go())
    assert [r["toolName"] for r in asked] == ["bash", "bash", "bash"] and asked[0]["reason"] == "mode"
    assert (tmp_path / "f1").exists() and not (tmp_path / "f2").exists() and (tmp_path / "f3").exists()
    resolved = [e["decision"] for e in events if e["type"] == "permission_resolved"]
    assert resolved == ["allow", "deny", "allow"]
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert ends[1].get("denied") is True and "denied" in ends[1]["result"]["content"][0]["text"]


def test_allow_for_session_is_remembered(tmp_path: Path) -> None:
    call = {"name": "bash", "arguments": {"command": "npm --version >/dev/null 2>&1; echo ran"}}
    model = write_script(tmp_path / "s.json", [{"toolCalls": [call]}, {"toolCalls": [call]}, "done"])
    asked: list[dict] = []

    async def answer(req):
        asked.append(req)
        return "allow_session"

    async def go():
        agent, events = await make_agent(tmp_path, model, broker=CallbackBroker(answer))
        await agent.prompt("run it twice")
        await agent.close()

    run(go())
    assert len(asked) == 1


def test_hooks_add_context_and_deny(tmp_path: Path, ama_home: Path) -> None:
    hooks = {
        "UserPromptSubmit": [{"command": "echo '{\"additionalContext\": \"branch is main\"}'"}],
        "PreToolUse": [{"matcher": "bash", "command": "echo 'no bash today' >&2; exit 2"}],
    }
    (ama_home / "config.json").write_text(json.dumps({"hooks": hooks}))
    model = write_script(tmp_path / "s.json", [{"toolCalls": [{"name": "bash", "arguments": {"command": "echo hi"}}]}, "ok"])

    async def go():
        agent, events = await make_agent(tmp_path, model, permission_mode="full-auto")
        await agent.prompt("hello")
        await agent.close()
        return agent, events

    agent, events = run(go())
    ctx_entries = [e for e in agent.session.entries if isinstance(e, CustomMessageEntry)]
    assert ctx_entries[0].custom_type == "ama.hook_context" and ctx_entries[0].content == "branch is main"
    end = [e for e in events if e["type"] == "tool_execution_end"][0]
    assert end["denied"] is True and "no bash today" in end["result"]["content"][0]["text"]
    assert {e["event"] for e in events if e["type"] == "hook_executed"} == {"UserPromptSubmit", "PreToolUse"}


def test_resume_restores_model_thinking_and_context(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", ["one", "two"])

    async def first():
        agent, _ = await make_agent(tmp_path, model, thinking="high")
        await agent.prompt("hello")
        path = agent.session.path
        await agent.close()
        return path

    path = run(first())

    async def second():
        agent, _ = await make_agent(tmp_path, None, session=path)
        assert agent.model.ref == model and agent.thinking_level == "high"
        res = await agent.prompt("again")
        await agent.close()
        return res

    res = run(second())
    assert res.text == "two"
    d = read_session(path)
    systems = [e for e in d.entries if isinstance(e, MessageEntry) and type(e.message).__name__ == "SystemMessage"]
    assert len(systems) == 1  # the system prompt is written once, never regenerated


def test_max_turns_stops_with_max_steps(tmp_path: Path) -> None:
    call = {"name": "ls", "arguments": {"path": "."}}
    model = write_script(tmp_path / "s.json", [{"toolCalls": [call]}] * 5)

    async def go():
        agent, _ = await make_agent(tmp_path, model, max_turns=2)
        res = await agent.prompt("loop")
        await agent.close()
        return res

    res = run(go())
    assert res.record.status == "COMPLETED" and res.record.terminal_reason == "max_steps" and res.exit_code == 0
