"""Tier 1 pruning and the image budget (agent/pruning.py, docs/compaction.md "Pruning")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from ama.agent.pruning import LARGE_RESULT_TOKENS, PruneSettings, plan_image_budget, plan_prune
from ama.messages import AssistantMessage, ImageContent, TextContent, ToolCall, ToolResultMessage, UserMessage
from ama.session.entries import CompactionEntry, ContextEditEntry
from tests.agent.helpers import make_agent
from tests.agent.test_compaction import assert_paired, configure
from tests.agent.window_server import WindowServer

SETTINGS = PruneSettings(True, keep_tokens=3000, min_tokens=3000, image_budget=4, image_budget_bytes=0)


def _result(i: int, chars: int) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=f"c{i}", tool_name="read", content=[TextContent(text="x" * chars)])


def _call(i: int) -> AssistantMessage:
    return AssistantMessage(content=[ToolCall(id=f"c{i}", name="read", arguments={"path": f"f{i}"})])


def test_plan_prune_waits_for_a_batch_then_takes_every_old_large_result() -> None:
    msgs: list = [UserMessage(content="go")]
    for i in range(4):
        msgs += [_call(i), _result(i, 6400)]  # ~1,600 tokens each
    ids = [(f"e{k}",) for k in range(len(msgs))]
    # the newest 3,000 tokens (the last result and its call) are protected; two old
    # results save ~3,100 tokens: over the 3,000 minimum
    edits = plan_prune(msgs[:7], ids[:7], SETTINGS)
    assert [e.target_id for e in edits] == ["e2", "e4"]
    assert all(e.reason == "prune" and "read result pruned" in e.replacement for e in edits)
    # one old result alone is not worth a prefix change
    assert plan_prune(msgs[:5], ids[:5], SETTINGS) == []
    # small results are never candidates
    small = [UserMessage(content="go")] + [m for i in range(20) for m in (_call(i), _result(i, LARGE_RESULT_TOKENS * 2))]
    assert plan_prune(small, [(f"s{k}",) for k in range(len(small))], SETTINGS) == []


def test_plan_image_budget_drops_the_oldest_images_down_to_half_the_budget() -> None:
    img = ImageContent(data="aGVsbG8=", mime_type="image/png")
    msgs: list = [UserMessage(content=[TextContent(text=f"shot {i}"), img]) for i in range(5)]
    ids = [(f"u{i}",) for i in range(5)]
    assert plan_image_budget(msgs[:4], ids[:4], SETTINGS) == []  # 4 images: within the budget
    edits = plan_image_budget(msgs, ids, SETTINGS)
    assert [e.target_id for e in edits] == ["u0", "u1", "u2"]  # 5 > 4: keep at most 2
    assert edits[0].reason == "image_budget" and edits[0].replacement.startswith("shot 0\n[image removed")
    by_bytes = PruneSettings(True, 3000, 3000, image_budget=0, image_budget_bytes=len(img.data) * 3)
    assert [e.target_id for e in plan_image_budget(msgs, ids, by_bytes)] == ["u0", "u1", "u2", "u3"]


def _batches(agent) -> int:
    """Runs of consecutive prune edits in the file: one per batch."""
    runs, prev = 0, False
    for e in agent.session.entries:
        now = isinstance(e, ContextEditEntry) and e.reason == "prune"
        runs += now and not prev
        prev = now
    return runs


def test_pruning_changes_the_request_prefix_once_per_batch_not_every_turn(tmp_path: Path, ama_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(3):  # ~1,600 tokens each
        (ws / f"big{i}.txt").write_text("".join(f"line {n:04d} of file {i}: {'x' * 40}\n" for n in range(130)))
    turns = 14
    server = WindowServer(24_000, lambda n: ("read", {"path": f"big{n % 3}.txt", "limit": 200 + n}) if n < turns else "done")
    configure(ama_home, server, threshold=0.8, reserveTokens=1000, pruneKeepTokens=3000, pruneMinTokens=7000)

    async def go():
        agent, _ = await make_agent(ws, "win/m", permission_mode="full-auto")
        res = await agent.prompt("read the big files")
        batches = _batches(agent)
        comps = [e for e in agent.session.entries if isinstance(e, CompactionEntry)]
        await agent.close()
        return res, batches, comps

    try:
        res, batches, comps = asyncio.run(go())
    finally:
        server.close()
    assert res.exit_code == 0 and res.text == "done" and comps == []
    bodies = [[json.dumps(m, sort_keys=True) for m in t["messages"]] for t in server.turns]
    changed = [k for k in range(1, len(bodies)) if bodies[k][: len(bodies[k - 1])] != bodies[k - 1]]
    assert batches >= 1 and len(changed) == batches  # each batch changes the prefix once
    assert len(changed) <= len(bodies) // 3, (changed, server.sizes)
    for k in changed:
        assert "result pruned from the context" in "".join(bodies[k])
        assert "result pruned from the context" not in "".join(bodies[k - 1][-2:])
        assert_paired(server.turns[k]["messages"])
    # the pruned requests are smaller than the unpruned context would be
    assert max(server.sizes) < 14_000, server.sizes


def test_image_budget_applies_before_a_request_even_with_compaction_off(tmp_path: Path, ama_home: Path) -> None:
    (ama_home / "config.json").write_text(json.dumps({"compaction": {"enabled": False, "imageBudget": 4}}))
    from tests.agent.helpers import write_script

    model = write_script(tmp_path / "s.json", [f"seen {i}" for i in range(6)])
    img = ImageContent(data="aGVsbG8=", mime_type="image/png")

    async def go():
        agent, _ = await make_agent(tmp_path, model)
        counts = []
        for i in range(6):
            await agent.prompt(f"shot {i}", images=[img])
            ctx = agent.session.context()
            counts.append(sum(isinstance(b, ImageContent) for m in ctx.messages for b in (getattr(m, "content", None) or []) if not isinstance(b, str)))
        edits = [e for e in agent.session.entries if isinstance(e, ContextEditEntry)]
        await agent.close()
        return counts, edits

    counts, edits = asyncio.run(go())
    # the 5th image passes the budget of 4: the oldest go until 2 are left (one batch), then it grows again
    assert counts == [1, 2, 3, 4, 2, 3]
    assert [e.reason for e in edits] == ["image_budget"] * 3
    assert all(e.replacement.startswith("shot ") and "[image removed" in e.replacement for e in edits)
