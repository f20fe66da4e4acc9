"""Compaction (docs/compaction.md) against a local server with a small context window."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ama.session.entries import CompactionEntry, ContextEditEntry
from tests.agent.helpers import make_agent
from tests.agent.window_server import WindowServer


def run(coro):
    return asyncio.run(coro)


def configure(home: Path, server: WindowServer, api: str = "openai-completions", **compaction: Any) -> None:
    (home / "config.json").write_text(json.dumps({"providers": {"win": server.provider(api)}, "compaction": compaction}))


def compactions(agent) -> list[CompactionEntry]:
    return [e for e in agent.session.branch() if isinstance(e, CompactionEntry)]


def assert_paired(messages: list[dict]) -> None:
    """Every tool call has its result right after its assistant message, and vice versa."""
    pending: set[str] = set()
    for m in messages:
        if m["role"] == "tool":
            assert m["tool_call_id"] in pending, m
            pending.discard(m["tool_call_id"])
            continue
        assert not pending, f"unanswered calls {pending} before {m['role']}"
        for c in m.get("tool_calls") or []:
            pending.add(c["id"])
    assert not pending


def summary_index(messages: list[dict]) -> int:
    for i, m in enumerate(messages):
        if m["role"] == "user" and "<summary>" in json.dumps(m["content"]):
            return i
    raise AssertionError("no summary in the request")


def test_long_run_compacts_and_never_sends_a_request_over_the_window(tmp_path: Path, ama_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(3):  # ~1,600 tokens each
        (ws / f"big{i}.txt").write_text("".join(f"line {n:04d} of file {i}: {'x' * 40}\n" for n in range(130)))
    turns = 60
    server = WindowServer(12_000, lambda n: ("read", {"path": f"big{n % 3}.txt", "limit": 200 + n}) if n < turns else "all files read")
    configure(ama_home, server, threshold=0.7, reserveTokens=1000, keepRecentTokens=3000)
    events: list[dict] = []

    async def go():
        agent, ev = await make_agent(ws, "win/m", permission_mode="full-auto")
        res = await agent.prompt("read the big files over and over")
        events.extend(ev)
        comps = compactions(agent)
        ctx_after = agent.session.context()
        await agent.close()
        return res, comps, ctx_after

    try:
        res, comps, _ctx = run(go())
    finally:
        server.close()
    assert res.exit_code == 0 and res.text == "all files read"
    assert server.overflows == 0 and max(server.sizes) <= server.window
    assert len(server.turns) == turns + 1
    assert len(comps) >= 3 and len(server.summaries) == len(comps)
    starts = [e for e in events if e["type"] == "compaction_start"]
    ends = [e for e in events if e["type"] == "compaction_end"]
    assert [e["trigger"] for e in starts] == ["threshold"] * len(comps)
    assert all(e["willRetry"] is False and e["aborted"] is False and e["result"]["tokensBefore"] > 8000 for e in ends)
    for comp in comps:
        assert comp.details == {"readFiles": ["big0.txt", "big1.txt", "big2.txt"], "modifiedFiles": []}
        assert comp.summary.rstrip().endswith("</post-compact-state>")
        assert "## Last user request (verbatim)\n\nread the big files over and over" in comp.summary
        assert "Files read: big0.txt, big1.txt, big2.txt" in comp.summary
        assert comp.usage.input > 0 and comp.tokens_before > 8000
    # each turn request right after a compaction: system, then the summary, then the kept
    # messages exactly as the request before the compaction had them, calls paired
    bodies = server.turns
    for i in range(1, len(bodies)):
        msgs, prev = bodies[i]["messages"], bodies[i - 1]["messages"]
        assert_paired(msgs)
        if sum("<summary>" in json.dumps(m["content"]) for m in msgs) == 0:
            continue
        s = summary_index(msgs)
        assert msgs[0]["role"] == "system" and s == 1
        if "<summary>" not in json.dumps(prev[1]["content"]) or prev[1] != msgs[1]:  # a new compaction
            kept = msgs[s + 1 :]
            j = prev.index(kept[0]) if kept[0] in prev else len(prev)
            assert prev[j:] == kept[: len(prev) - j]
            # what follows is only the reply to ``prev`` and its tool result, verbatim
            assert [m["role"] for m in kept[len(prev) - j :]] == ["assistant", "tool"]
    # later requests without a new compaction share the previous one's prefix
    assert any(b["messages"][:3] == bodies[k + 1]["messages"][:3] for k, b in enumerate(bodies[:-1]) if "<summary>" in json.dumps(b["messages"]))


@pytest.mark.parametrize("api", ["openai-completions", "anthropic-messages"])
def test_overflow_is_recovered_once_then_fails_clearly(tmp_path: Path, ama_home: Path, api: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    server = WindowServer(100_000, lambda n: f"reply {n}")
    configure(ama_home, server, api, keepRecentTokens=10)
    events: list[dict] = []

    async def go():
        agent, ev = await make_agent(ws, "win/m", permission_mode="full-auto")
        await agent.prompt("first question")
        await agent.prompt("second question")
        server.force_overflow = 1
        ok = await agent.prompt("third question")
        n_ok = len(events)
        events.extend(ev)
        server.force_overflow = 2
        bad = await agent.prompt("fourth question")
        events.extend(ev[n_ok:])
        edits = [e for e in agent.session.branch() if isinstance(e, ContextEditEntry)]
        await agent.close()
        return ok, bad, edits

    try:
        ok, bad, edits = run(go())
    finally:
        server.close()
    assert ok.exit_code == 0 and ok.text == "reply 2"
    ends = [e for e in events if e["type"] == "compaction_end"]
    assert ends[0]["trigger"] == "overflow" and ends[0]["willRetry"] is True and ends[0]["result"]["firstKeptEntryId"]
    assert [e.reason for e in edits][:1] == ["overflow"]
    retried = server.turns[2]
    text = json.dumps(retried["messages"])
    assert "<summary>" in text and "third question" in text and "first question" not in text.split("<summary>")[0]
    assert bad.exit_code != 0
    assert bad.record.error_code == "context_overflow"
    assert "does not fit the model's context window (100000 tokens) even after compaction" in bad.record.error_message
    assert server.overflows == 3


def test_compaction_disabled_fails_clearly_on_overflow(tmp_path: Path, ama_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    server = WindowServer(100_000, lambda n: f"reply {n}")
    configure(ama_home, server, enabled=False, threshold=0.01, keepRecentTokens=10)

    async def go():
        agent, ev = await make_agent(ws, "win/m", permission_mode="full-auto")
        await agent.prompt("first question")  # far past the (tiny) threshold: no compaction
        server.force_overflow = 1
        bad = await agent.prompt("second question")
        comps = compactions(agent)
        await agent.close()
        return bad, comps, ev

    try:
        bad, comps, ev = run(go())
    finally:
        server.close()
    assert comps == [] and not [e for e in ev if e["type"].startswith("compaction")]
    assert bad.exit_code != 0 and "compaction is off (compaction.enabled: false)" in bad.record.error_message
    assert server.overflows == 1 and len(server.summaries) == 0


def test_context_pressure_is_reported_once_per_crossing(tmp_path: Path, ama_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "big.txt").write_text("".join(f"line {n:04d}: {'x' * 40}\n" for n in range(60)))  # ~800 tokens
    server = WindowServer(10_000, lambda n: ("read", {"path": "big.txt", "limit": 100 + n}))
    configure(ama_home, server, enabled=False)

    async def go():
        agent, ev = await make_agent(ws, "win/m", permission_mode="full-auto")
        res = await agent.prompt("read it until the window is full")
        await agent.close()
        return res, ev

    try:
        res, ev = run(go())
    finally:
        server.close()
    pressure = [e for e in ev if e["type"] == "context_pressure"]
    assert [e["threshold"] for e in pressure] == [70, 90]
    for e in pressure:
        assert e["percent"] >= e["threshold"] and e["remainingTokens"] == pytest.approx(10_000 * (1 - e["percent"] / 100), abs=10)
        assert isinstance(e["estimatedTurnsLeft"], int) and e["estimatedTurnsLeft"] >= 0
    assert pressure[1]["estimatedTurnsLeft"] < pressure[0]["estimatedTurnsLeft"]
    # compaction is off: the run ends at the window with the clear message
    assert res.exit_code != 0 and "compaction is off" in res.record.error_message


def test_post_compact_state_points_at_the_running_tasks() -> None:
    from types import SimpleNamespace

    from ama.agent.compaction import _running_tasks

    rows = [{"taskId": "t1", "status": "running", "agent": "explore", "description": "find it"},
            {"taskId": "t2", "status": "completed", "agent": "general"}]  # fmt: skip
    agent = SimpleNamespace(tasks=SimpleNamespace(view=lambda: rows))
    assert _running_tasks(agent) == rows[:1]  # type: ignore[arg-type]
    assert _running_tasks(SimpleNamespace(tasks=None)) == []  # type: ignore[arg-type]
