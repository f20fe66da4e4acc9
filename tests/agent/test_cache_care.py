"""Prompt-cache care (agent/cache_care.py) against a local server that reports caching."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from ama.messages import ToolResultMessage
from ama.session.entries import MessageEntry, UsageEntry
from tests.agent.cache_server import CacheServer
from tests.agent.helpers import make_agent

COST = {"input": 3, "output": 15, "cacheRead": 0.3}


def setup(home: Path, ws: Path, server: CacheServer, **cache: Any) -> None:
    (ws / "big.txt").write_text("".join(f"line {n:04d}: {'y' * 60}\n" for n in range(120)))  # ~2,000 tokens
    provider = server.provider("openai-completions", cost=COST)
    provider["models"].append({"id": "m2", "contextWindow": 200_000, "maxTokens": 1000})
    (home / "config.json").write_text(json.dumps({"providers": {"c": provider}, "cache": cache}))


def plan(n: int) -> Any:
    return ("read", {"path": "big.txt"}) if n % 3 != 2 else f"reply {n}"


def misses(events: list[dict]) -> list[dict]:
    return [e for e in events if e["type"] == "cache_miss"]


def test_turns_within_the_ttl_hit_and_a_changed_prefix_names_the_first_differing_message(tmp_path: Path, ama_home: Path) -> None:
    server = CacheServer(plan)
    setup(ama_home, tmp_path, server)

    async def go():
        agent, events = await make_agent(tmp_path, "c/m", permission_mode="full-auto")
        await agent.prompt("one")
        await agent.prompt("two")
        clean = list(events)
        first_result = next(e for e in agent.session.branch() if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage))
        agent.session.append_context_edit(first_result.id, "[gone]", "manual")
        await agent.prompt("three")
        await agent.close()
        return clean, events

    try:
        clean, events = asyncio.run(go())
    finally:
        server.close()
    assert sum(1 for r in server.cache_reads if r > 0) >= 4
    assert misses(clean) == []  # no false alarm while the cache is hit
    (miss,) = misses(events)
    assert miss["reason"] == "prefix_changed"
    assert miss["detail"] == "message 3 (toolResult read) differs: replaced by context_edit{reason: manual}"
    assert miss["missedTokens"] > 1024 and miss["idleMs"] >= 0
    assert miss["missedCost"] == round(miss["missedTokens"] * 2.7 / 1e6, 6)


def test_idle_past_the_ttl_and_a_model_change_are_named(tmp_path: Path, ama_home: Path) -> None:
    server = CacheServer(plan, ttl=0.3)
    setup(ama_home, tmp_path, server, ttlSeconds=0.3)

    async def go():
        agent, events = await make_agent(tmp_path, "c/m", permission_mode="full-auto")
        await agent.prompt("one")
        await asyncio.sleep(0.5)
        await agent.prompt("two")
        agent.set_model("c/m2")
        await agent.prompt("three")
        await agent.close()
        return events

    try:
        events = asyncio.run(go())
    finally:
        server.close()
    reasons = [(m["reason"], m.get("detail")) for m in misses(events)]
    assert reasons[0][0] == "ttl_expired" and misses(events)[0]["idleMs"] >= 300
    assert ("model_changed", "c/m → c/m2") in reasons
    assert "missedCost" not in [m for m in misses(events) if m["reason"] == "model_changed"][0]  # m2 has no price


def test_keep_warm_sends_minimal_requests_before_the_ttl_and_stops_after_the_count(tmp_path: Path, ama_home: Path) -> None:
    server = CacheServer(plan, ttl=60)
    setup(ama_home, tmp_path, server, ttlSeconds=0.4, warm=True, warmMax=2)

    async def go():
        agent, events = await make_agent(tmp_path, "c/m", permission_mode="full-auto")
        await agent.prompt("one")
        deadline = time.monotonic() + 20
        while not any(e["type"] == "cache_warm" and e["phase"] == "stopped" for e in events):
            assert time.monotonic() < deadline, "keep-warm never stopped"
            await asyncio.sleep(0.05)
        turn_requests = len(server.turns)
        await agent.prompt("two")
        await agent.close()
        return agent, events, turn_requests

    try:
        agent, events, turn_requests = asyncio.run(go())
    finally:
        server.close()
    warm = [e for e in events if e["type"] == "cache_warm"]
    # two warm requests, stop at the count; the second prompt's run schedules anew, and
    # closing the session drops that one
    assert [e["phase"] for e in warm] == ["scheduled", "sent", "scheduled", "sent", "stopped", "scheduled", "stopped"]
    assert warm[4]["reason"] == "max" and warm[6]["reason"] == "closed" and warm[1]["usage"]["cacheRead"] > 0 and warm[1]["cost"] > 0
    assert misses(events) == []  # the warm requests kept the prefix cached
    usage = [e for e in agent.session.entries if isinstance(e, UsageEntry)]
    assert [u.kind for u in usage] == ["cache_warm", "cache_warm"] and usage[0].model == "m"
    warm_bodies = [r for r in server.requests if "keep-alive" in json.dumps(r["messages"][-1])]
    assert len(warm_bodies) == 2 and all(r["max_tokens"] == 1 or r.get("max_completion_tokens") == 1 for r in warm_bodies)
    last_turn = server.turns[turn_requests - 1]["messages"]
    assert warm_bodies[0]["messages"][: len(last_turn)] == last_turn  # the same prefix as the turns
    # warm requests never become messages of the conversation
    assert not any("keep-alive" in json.dumps(m) for m in server.turns[-1]["messages"])
