"""A background sub-agent counts against its parent's budget (docs/agents.md "Limits"):
while the run that started it runs, each child reply is charged to that run's guard; after
that run ended, to the parent's next run.  Models are scripted files with a price."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ama.agent.approvals import CallbackBroker
from ama.agent.guard import Limits
from ama.session.reader import read_session
from tests.agent.helpers import make_agent, write_script
from tests.agent.test_subagents import of, setup, sync, task_call

#: $1 per reply of the child (1 input token at $1M per million)
PRICE = {"input": 1_000_000}


def run_records(path: str) -> list[dict[str, Any]]:
    """The last ``ama.run`` entry of each run, in order."""
    last: dict[str, dict[str, Any]] = {}
    for e in read_session(path).entries:
        if getattr(e, "custom_type", None) == "ama.run":
            last[e.data["executionId"]] = e.data
    return list(last.values())


async def until(cond: Any, what: str) -> None:
    for _ in range(1200):
        if cond():
            return
        await asyncio.sleep(0.025)
    raise AssertionError(f"timed out waiting for {what}")


@sync
async def test_a_background_childs_cost_stops_the_running_parent(tmp_path: Path) -> None:
    pricey = {"toolCalls": [{"name": "ls", "arguments": {}}], "usage": {"input": 1}}
    ws, _ = setup(tmp_path, [pricey] * 6, cost=PRICE)
    write = {"toolCalls": [{"name": "write", "arguments": {"path": "w.txt", "content": "x"}}]}
    parent = write_script(
        tmp_path / "p.json", [task_call(agent="explore", background=True), write, "never"], mode="sequence"
    )
    events: list[dict] = []

    async def answer(req: dict) -> str:  # the parent's write waits until the child has spent
        await until(lambda: of(events, "subagent_end"), "the background child to end")
        return "allow"

    agent, events = await make_agent(ws, parent, limits=Limits(max_cost=1.5), broker=CallbackBroker(answer))
    try:
        r = await agent.prompt("go")
        agent.tasks.begin_close()  # no notification turn: this test is about the first run
    finally:
        await agent.close()
    info = agent.tasks.registry.view()[0]
    assert info["background"] is True and info["costUsd"] == 2.0
    # the parent ran its write (a tool call of the reply before the check), then stopped
    assert (ws / "w.txt").read_text() == "x"
    hit, = of(events, "limit_reached")
    assert hit == {"type": "limit_reached", "kind": "cost", "value": 2.0, "limit": 1.5}
    assert r.record.limit == {"kind": "cost", "value": 2.0, "limit": 1.5} and r.text != "never"
    record, = run_records(agent.session.path)
    assert record["limit"] == {"kind": "cost", "value": 2.0, "limit": 1.5} and record["terminalReason"] == "max_steps"


@sync
async def test_usage_after_the_parent_run_ended_counts_against_its_next_run(tmp_path: Path) -> None:
    # the child's first reply is free and asks for approval; its second costs $1
    child_turns = [{"toolCalls": [{"name": "write", "arguments": {"path": "c.txt", "content": "c"}}]}, {"text": "bg done", "usage": {"input": 1}}]
    ws, child = setup(tmp_path, child_turns, cost=PRICE)
    parent = write_script(
        tmp_path / "p.json", [task_call(agent="general", background=True, model=child), "started it", "never"], mode="sequence"
    )
    events: list[dict] = []

    async def answer(req: dict) -> str:  # the child goes on once the parent's run has ended
        await until(lambda: of(events, "agent_settled"), "the parent's first run to settle")
        return "allow"

    agent, events = await make_agent(ws, parent, limits=Limits(max_cost=0.5), broker=CallbackBroker(answer))
    try:
        r = await agent.prompt("go")
        assert r.text == "started it" and r.record.limit is None
        await until(lambda: len(of(events, "agent_settled")) >= 2, "the notification turn")
    finally:
        await agent.close()
    assert (ws / "c.txt").read_text() == "c"
    info = agent.tasks.registry.view()[0]
    assert info["status"] == "completed" and info["costUsd"] == 1.0
    # the notification turn starts over budget: no model call, the record names the limit
    hit, = of(events, "limit_reached")
    assert hit["kind"] == "cost" and hit["value"] == 1.0 and hit["limit"] == 0.5
    first, second = run_records(agent.session.path)
    assert "limit" not in first
    assert second["limit"] == {"kind": "cost", "value": 1.0, "limit": 0.5} and second["terminalReason"] == "max_steps"
    assistant = [e["message"] for e in of(events, "message_end") if e["message"]["role"] == "assistant"]
    assert "never" not in [m["content"][0].get("text") for m in assistant if m["content"]]
    assert of(events, "agent_settled")[-1].get("warning") == "limit_reached"


@sync
async def test_a_grandchilds_cost_counts_against_every_ancestor(tmp_path: Path, ama_home: Path) -> None:
    import json

    (ama_home / "config.json").write_text(json.dumps({"tasks": {"maxDepth": 2}}))
    pricey = {"toolCalls": [{"name": "ls", "arguments": {}}], "usage": {"input": 1}}
    ws, _ = setup(tmp_path, [pricey, {"text": "found", "usage": {"input": 1}}], cost=PRICE)
    mid = write_script(tmp_path / "mid.json", [task_call(agent="explore", description="deeper"), "child relayed it"], mode="sequence")
    parent = write_script(tmp_path / "p.json", [task_call(agent="general", model=mid), "more", "never"], mode="sequence")
    agent, events = await make_agent(ws, parent, limits=Limits(max_cost=1.5))
    try:
        r = await agent.prompt("go")
    finally:
        await agent.close()
    # the child's own replies are free: only its child's $2 can have reached the parent
    child = agent.tasks.registry.view()[0]
    assert child["status"] == "max_turns" and child["limit"]["kind"] == "cost"
    assert r.record.limit == {"kind": "cost", "value": 2.0, "limit": 1.5}
