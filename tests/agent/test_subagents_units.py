"""Pure parts of the sub-agents: text coalescing, TaskInfo round trip and registry rebuild,
definition parsing, mode capping, caps within the parent's budget."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest

from ama.agent.guard import Limits, RunGuard
from ama.agent.subagents.caps import TaskCaps, within_parent
from ama.agent.subagents.definitions import load_definition
from ama.agent.subagents.registry import TaskInfo, TaskRegistry
from ama.agent.subagents.relay import Relay
from ama.agent.subagents.runner import capped_mode
from ama.errors import InvalidArguments


def info() -> TaskInfo:
    return TaskInfo("t1", "explore", "ama", "d", False, "running", "2026-01-01T00:00:00Z", "c1", "/w")


def delta(text: str) -> dict:
    return {"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "delta": text}}


def test_text_deltas_are_merged_over_250_ms() -> None:
    now = [100.0]
    out: list[dict] = []

    async def main() -> None:
        relay = Relay(out.append, info(), clock=lambda: now[0])
        relay(delta("a"))  # the first goes at once
        relay(delta("b"))
        relay(delta("c"))  # within 250 ms: held
        assert [e.get("textDelta") for e in out] == ["a"]
        now[0] += 0.3
        await asyncio.sleep(0.3)  # the timer flushes what was held
        assert [e.get("textDelta") for e in out] == ["a", "bc"]
        relay(delta("d"))
        relay({"type": "tool_execution_start", "toolName": "read", "args": {"path": "x.py"}})  # flushes first
        assert [(e["kind"], e.get("textDelta") or e.get("toolName")) for e in out[2:]] == [("text", "d"), ("tool", "read")]
        assert relay.info.last_action == "read x.py"

    asyncio.run(main())


def test_taskinfo_round_trips_and_rebuild_reads_running_as_interrupted() -> None:
    t = info()
    t.usage = {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.5}}
    data = t.to_data()
    back = TaskInfo.from_data(data)
    assert back is not None and back.to_data() == data
    assert TaskInfo.from_data({"taskId": "x", "agent": "a"}) is None  # a child's own first entry
    done = dict(data, taskId="t2", status="completed")
    entries = [
        SimpleNamespace(type="custom", custom_type="ama.task", data=data),
        SimpleNamespace(type="custom", custom_type="ama.task", data=done),
        SimpleNamespace(type="custom", custom_type="ama.other", data=dict(data, taskId="t3")),
    ]
    reg = TaskRegistry()
    reg.rebuild(entries)
    assert [(x["taskId"], x["status"]) for x in reg.view()] == [("t1", "interrupted"), ("t2", "completed")]


def test_claude_code_definition_is_read_as_is(tmp_path: Path) -> None:
    p = tmp_path / "rev.md"
    p.write_text("---\nname: rev\ndescription: Reviews\ntools: Read, Glob, Bash(git log:*), mcp__x__y, WebFetch\nmodel: inherit\npermissionMode: acceptEdits\n---\nBe strict.\n")
    d = load_definition(str(p), "project")
    assert (d.tools, d.model, d.permission_mode, d.prompt) == (("read", "find", "bash", "webfetch"), None, "auto-edit", "Be strict.")
    bad = tmp_path / "bad.md"
    bad.write_text("---\nname: bad\n---\n")
    with pytest.raises(InvalidArguments, match=r"bad.md:1: missing or empty 'description'"):
        load_definition(str(bad), "project")
    reserved = tmp_path / "codex.md"
    reserved.write_text("---\ndescription: x\n---\n")
    with pytest.raises(InvalidArguments, match="reserved"):
        load_definition(str(reserved), "user")


def test_a_child_mode_never_exceeds_the_parent() -> None:
    assert capped_mode("plan", "full-auto") == "plan"
    assert capped_mode("full-auto", "plan") == "plan"
    assert capped_mode("default", "auto-edit") == "default"
    assert capped_mode("auto-edit", None) == "auto-edit"


def test_caps_defaults_and_the_parent_budget() -> None:
    caps = TaskCaps.from_config(None)
    assert (caps.max_parallel, caps.max_depth, caps.max_per_session) == (4, 1, 20)
    assert caps.limits() == Limits(max_turns=40, max_cost=2.0, max_wall_time=1800.0)
    clock = [0.0]
    guard = RunGuard(Limits(max_cost=1.0, max_tokens=500, max_wall_time=60), clock=lambda: clock[0])
    guard.cost, guard.tokens, clock[0] = 0.25, 100, 50.0
    got = within_parent(caps.limits(), guard)
    assert (got.max_turns, got.max_cost, got.max_tokens, got.max_wall_time) == (40, 0.75, 400, 10.0)
    assert within_parent(caps.limits(), None) == caps.limits()
