"""Rate telemetry: the meter's definitions, and a real stream at a known token rate."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from ama.agent.telemetry import Telemetry, format_footer
from ama.sdk import create_agent
from tests.agent.helpers import write_script
from tests.ai.server import LocalServer, Reply
from tests.guards.priced import write_config
from tests.rpc.helpers import Rpc


class Clock:
    def __init__(self) -> None:
        self.t = 1_000_000

    def __call__(self) -> int:
        return self.t


def meter(ticks: bool = True) -> tuple[Telemetry, Clock, list[dict]]:
    clock, seen = Clock(), []
    return Telemetry(seen.append, ticks=ticks, clock=clock), clock, seen


def test_ttft_tps_and_at_most_two_ticks_a_second() -> None:
    tm, clock, ticks = meter()
    assert tm.snapshot() == {"sessionStartedAt": 1_000_000}
    tm.start("turn")
    clock.t += 300  # time to first token
    for _ in range(30):  # 30 deltas of 8 chars, 100 ms apart: 3 s of generation
        tm.delta("abcdefgh")
        clock.t += 100
    assert ticks == [{"type": "telemetry_tick"}] * 5  # at 500, 1000, ... 2500 ms after the first token
    live = tm.snapshot()["live"]
    # 2 s window: 20 samples from 1.0 s to 2.9 s after the first token, 19 deltas of 2 tokens in 1.9 s
    assert live == {"outputTokens": 60, "elapsedMs": 3000, "tps": 20.0}
    tm.done(90)
    snap = tm.snapshot()
    assert "live" not in snap
    assert snap["last"] == {
        "requestAt": 1_000_000,
        "firstTokenAt": 1_000_300,
        "ttftMs": 300,
        "doneAt": 1_003_300,
        "outputTokens": 90,
        "tps": 30.0,
    }
    assert snap["avgTps"] == 30.0
    assert format_footer(snap) == "TTFT 0.30s · 30 tok/s · avg 30 tok/s"


def test_short_generations_other_purposes_and_no_animation_do_not_count() -> None:
    tm, clock, ticks = meter()
    tm.start("turn")
    clock.t += 50
    tm.delta("x" * 40)
    clock.t += 200  # 200 ms of generation: below 250 ms, no tps, not in avgTps
    tm.delta("y")
    tm.done(500)
    snap = tm.snapshot()
    assert "tps" not in snap["last"] and "avgTps" not in snap and ticks == []
    tm.start("compaction")
    clock.t += 10
    tm.delta("z" * 400)
    clock.t += 5000
    tm.done(100)
    assert tm.snapshot()["last"]["requestAt"] == snap["last"]["requestAt"]  # not measured
    quiet, clock, ticks = meter(ticks=False)
    quiet.start()
    for _ in range(20):
        quiet.delta("abcd")
        clock.t += 200
    quiet.done(20)
    assert ticks == [] and quiet.snapshot()["avgTps"] == 5.0  # 20 tokens in 4 s
    assert format_footer({"sessionStartedAt": 1}) == ""


def stream_at(rate: int, tokens: int) -> Reply:
    """An OpenAI-compatible stream of ``tokens`` one-token chunks, one every 1/rate s."""
    base = {"id": "c1", "object": "chat.completion.chunk", "model": "m"}

    def chunk(body: dict) -> bytes:
        return b"data: " + json.dumps({**base, **body}).encode() + b"\n\n"

    first = chunk({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "w0 "}}]})
    words = [chunk({"choices": [{"index": 0, "delta": {"content": f"w{i} "}}]}) for i in range(1, tokens)]
    usage = {"prompt_tokens": 10, "completion_tokens": tokens, "total_tokens": 10 + tokens}
    end = (
        chunk({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        + chunk({"choices": [], "usage": usage})
        + b"data: [DONE]\n\n"
    )
    return Reply(chunks=[first, *words, end], delay=1 / rate)


def test_avg_tps_of_a_stream_at_a_known_rate(tmp_path: Path, ama_home: Path, server: LocalServer) -> None:
    write_config(ama_home, server.url)
    server.replies = [stream_at(40, 40), stream_at(40, 40)]

    async def go() -> tuple[dict, list[dict]]:
        agent = await create_agent(cwd=str(tmp_path), model="local/main", session="memory")
        seen: list[dict] = []
        agent.subscribe(lambda ev: seen.append(ev) if ev["type"] == "telemetry_tick" else None)
        await agent.prompt("count")
        await agent.prompt("again")
        stats = agent.stats()
        await agent.close()
        return stats["telemetry"], seen

    telemetry, ticks = asyncio.run(go())
    assert abs(telemetry["avgTps"] - 40) <= 4, telemetry  # within 10 % of the server's rate
    assert abs(telemetry["last"]["tps"] - 40) <= 4 and telemetry["last"]["outputTokens"] == 40
    assert telemetry["last"]["ttftMs"] >= 0 and "live" not in telemetry
    # two replies of about 1 s each: a tick every 500 ms at most, after the first token
    assert 2 <= len(ticks) <= 4


def test_no_ticks_without_animation_and_rpc_stats_carry_telemetry(
    tmp_path: Path, ama_home: Path, server: LocalServer
) -> None:
    write_config(ama_home, server.url, ui={"animation": False})
    server.replies = [stream_at(40, 30)]

    async def go() -> int:
        agent = await create_agent(cwd=str(tmp_path), model="local/main", session="memory")
        seen: list[dict] = []
        agent.subscribe(lambda ev: seen.append(ev) if ev["type"] == "telemetry_tick" else None)
        await agent.prompt("count")
        await agent.close()
        return len(seen)

    assert asyncio.run(go()) == 0
    rpc = Rpc(tmp_path, "--model", write_script(tmp_path / "s.json", [{"text": "hi"}]))
    try:
        assert rpc.call("prompt", message="hello")["success"] is True
        rpc.event("agent_settled")
        stats = rpc.call("get_session_stats")["data"]
        telemetry = stats["telemetry"]
        assert telemetry["sessionStartedAt"] <= telemetry["last"]["requestAt"] <= telemetry["last"]["doneAt"]
        assert "avgTps" not in telemetry  # an instant reply is not a rate
        assert not [m for m in rpc.seen if m.get("type") == "telemetry_tick"]
    finally:
        rpc.close()
