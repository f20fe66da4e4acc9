"""After a compaction: a stable, byte-identical prefix; resume rebuilds the same context;
rewind to before the compaction gives the conversation back (docs/compaction.md)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from ama.session.entries import CompactionEntry
from tests.agent.helpers import make_agent
from tests.agent.window_server import WindowServer


def plan(n: int):
    return ("read", {"path": "notes.txt", "offset": 1 + n % 3}) if n % 2 == 0 else f"reply {n}"


def setup(tmp_path: Path, ama_home: Path) -> tuple[Path, WindowServer]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("".join(f"note {i}: {'z' * 50}\n" for i in range(40)))
    server = WindowServer(100_000, plan)
    (ama_home / "config.json").write_text(json.dumps({"providers": {"win": server.provider("openai-completions")}}))
    return ws, server


def extends(later: bytes, earlier: bytes) -> bool:
    """``later`` starts with all of ``earlier`` but its closing ``]}`` (messages come last)."""
    assert earlier.endswith(b"]}")
    return later.startswith(earlier[:-2])


def test_the_two_requests_after_a_compaction_share_a_byte_identical_prefix(tmp_path: Path, ama_home: Path) -> None:
    ws, server = setup(tmp_path, ama_home)

    async def go():
        agent, _ = await make_agent(ws, "win/m", permission_mode="full-auto")
        for p in ("one", "two", "three"):
            await agent.prompt(p)
        before = len(server.raw_turns)
        await agent.compact()
        await agent.prompt("four")  # a tool call and a reply: two requests
        await agent.prompt("five")
        await agent.close()
        return before

    try:
        before = asyncio.run(go())
    finally:
        server.close()
    after = server.raw_turns[before:]
    assert len(after) >= 3
    first = json.loads(after[0])["messages"]
    assert first[0]["role"] == "system" and "<summary>" in json.dumps(first[1])
    assert not extends(after[0], server.raw_turns[before - 1])  # the compaction changed the prefix once
    assert extends(after[1], after[0]) and extends(after[2], after[1])  # and then it is stable


def test_resume_after_compaction_rebuilds_the_same_context(tmp_path: Path, ama_home: Path) -> None:
    ws, server = setup(tmp_path, ama_home)

    async def go():
        agent, _ = await make_agent(ws, "win/m", permission_mode="full-auto")
        await agent.prompt("one")
        await agent.prompt("two")
        await agent.compact()
        await agent.prompt("three")
        ctx = agent.session.context()
        sid = agent.session.id
        await agent.close()
        last = server.raw_turns[-1]
        again, _ = await make_agent(ws, None, session=sid, permission_mode="full-auto")
        ctx2 = again.session.context()
        await again.prompt("four")
        await again.close()
        return ctx, ctx2, last

    try:
        ctx, ctx2, last = asyncio.run(go())
    finally:
        server.close()
    assert ctx2.messages == ctx.messages and ctx2.entry_ids == ctx.entry_ids
    resumed = server.raw_turns[-2]  # the first request of the resumed process
    assert extends(resumed, last)


def test_rewind_to_before_a_compaction_gives_the_full_conversation_back(tmp_path: Path, ama_home: Path) -> None:
    ws, server = setup(tmp_path, ama_home)

    async def go():
        agent, _ = await make_agent(ws, "win/m", permission_mode="full-auto")
        await agent.prompt("one")
        await agent.prompt("two")
        at_two = len(server.raw_turns)
        await agent.compact()
        await agent.prompt("three")
        two = next(p for p in agent.rewind_points() if p["text"] == "two")
        await agent.rewind(two["entryId"], "conversation")
        comps = [e for e in agent.session.branch() if isinstance(e, CompactionEntry)]
        mark = len(server.raw_turns)
        await agent.prompt("two, again")
        await agent.close()
        return at_two, mark, comps

    try:
        at_two, mark, comps = asyncio.run(go())
    finally:
        server.close()
    assert comps == []  # the compaction is on the abandoned branch
    first = json.loads(server.raw_turns[mark])["messages"]
    assert not any("<summary>" in json.dumps(m) for m in first)
    assert "two, again" in json.dumps(first[-1])
    # everything before "two" is sent exactly as before the compaction
    before = json.loads(server.raw_turns[at_two - 1])["messages"]
    cut = next(i for i, m in enumerate(before) if m["role"] == "user" and m["content"] == "two")
    assert first[:cut] == before[:cut]
