"""The repeated-call guard and the wall-time budget, in process with the scripted provider."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from ama.agent.guard import Limits
from ama.session.entries import CustomMessageEntry
from ama.session.reader import read_session
from tests.agent.helpers import make_agent, write_script

LS = {"name": "ls", "arguments": {"path": "."}}


def test_fifth_identical_call_ends_the_run_after_reminders(tmp_path: Path) -> None:
    model = write_script(tmp_path / "loop.json", [{"toolCalls": [LS]}] * 8)

    async def go():
        agent, events = await make_agent(tmp_path, model)
        res = await agent.prompt("loop")
        await agent.close()
        return agent, events, res

    agent, events, res = asyncio.run(go())
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert len(ends) == 5 and not ends[3]["isError"]
    assert ends[4]["isError"] and 'ls({"path": "."})' in ends[4]["result"]["content"][0]["text"]
    assert events[-1] == {"type": "agent_settled", "warning": "repeated_tool_call"}
    assert res.record.status == "FAILED" and res.record.error_code == "repeated_tool_call" and res.exit_code == 1
    assert 'ls({"path": "."})' in (res.record.error_message or "")
    entries = read_session(agent.session.path).entries
    reminders = [e for e in entries if isinstance(e, CustomMessageEntry) and e.custom_type == "ama.repeat-reminder"]
    assert len(reminders) == 2 and "3 times" in str(reminders[0].content) and "4 times" in str(reminders[1].content)
    # the reminder is part of what the model sees next
    assert any("3 times" in json.dumps(m, default=str) for m in agent.session.context().messages if "custom" in type(m).__name__.lower())


def test_polling_bash_output_is_not_a_loop_and_different_args_are_not_repeats(tmp_path: Path) -> None:
    poll = {"name": "bash_output", "arguments": {"job_id": "nope"}}
    turns = [{"toolCalls": [poll]}] * 6 + [{"toolCalls": [{"name": "ls", "arguments": {"path": str(i)}}]} for i in range(6)]
    model = write_script(tmp_path / "poll.json", [*turns, "finished"])

    async def go():
        agent, events = await make_agent(tmp_path, model)
        res = await agent.prompt("poll")
        await agent.close()
        return events, res

    events, res = asyncio.run(go())
    assert res.record.status == "COMPLETED" and res.text == "finished"
    assert events[-1] == {"type": "agent_settled"}


def test_wall_time_budget_interrupts_a_slow_reply_and_fails_with_timeout(tmp_path: Path) -> None:
    model = write_script(tmp_path / "slow.json", ["a slow reply"], chunkSize=1, delayMs=2000)

    async def go():
        agent, events = await make_agent(tmp_path, model)
        res = await agent.prompt("hurry", limits=Limits(max_wall_time=0.3))
        await agent.close()
        return events, res

    events, res = asyncio.run(go())
    assert res.record.status == "FAILED" and res.record.terminal_reason == "timeout" and res.exit_code == 1
    assert res.record.limit is not None and res.record.limit["kind"] == "wallTime"
    assert [e["kind"] for e in events if e["type"] == "limit_reached"] == ["wallTime"]
    assert events[-1] == {"type": "agent_settled", "warning": "limit_reached"}


def test_per_prompt_limits_override_the_agents(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [{"toolCalls": [{"name": "ls", "arguments": {"path": str(i)}}]} for i in range(9)])

    async def go():
        agent, events = await make_agent(tmp_path, model, max_turns=5)
        res = await agent.prompt("go", limits=Limits(max_turns=1))
        await agent.close()
        return events, res

    events, res = asyncio.run(go())
    assert [e for e in events if e["type"] == "limit_reached"] == [{"type": "limit_reached", "kind": "turns", "value": 1, "limit": 1}]
    assert res.record.limit == {"kind": "turns", "value": 1, "limit": 1}
