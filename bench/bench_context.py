"""Long sessions: the per-turn context check and the 300-turn soak run, in-process.

    python3 bench/bench_context.py               # both
    python3 bench/bench_context.py --no-soak     # only the per-turn check

* **Per-turn check** on a 150,000-token context (~350 messages: user prompts, tool calls and
  ~1,000-token tool results, one image), the work done before every model request besides
  building the request itself: ``context_budget.measure`` (the size of the next request),
  the ``context_pressure`` level, and the tier-1 decision (``plan_prune`` with the default
  settings, which has a batch to take here, and ``plan_image_budget``).  Median and p95 of
  500 calls on the memoized projection.  Target: at most 2 ms.  For information, the same
  with the projection rebuilt (what the first call after an append pays; the request
  needs that projection anyway).
* **Soak**: the setup of ``tests/agent/test_compaction.py`` (local server on 127.0.0.1,
  12,000-token window, ~1,600-token tool results) run for 300 turns: wall time,
  compactions, pruned results, largest request, overflows; once with the default pruning
  settings (which never prune in so small a window) and once with pruning scaled to it
  (``pruneKeepTokens`` 3,000, ``pruneMinTokens`` 1,500).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from ama.agent.context_budget import Window, measure  # noqa: E402
from ama.agent.pruning import plan_image_budget, plan_prune, prune_settings  # noqa: E402
from ama.messages import (  # noqa: E402
    AssistantMessage,
    ImageContent,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ama.session.store import Session  # noqa: E402


def big_session() -> Session:
    s = Session.in_memory("/tmp")
    s.append_message(SystemMessage(content="You are ama. " * 200))
    body = "".join(f"{n:05d}: def function_{n}(x): return x * {n}  # comment\n" for n in range(70))  # ~4,000 chars
    total = 0
    turn = 0
    while total < 150_000 * 4:
        turn += 1
        if turn % 10 == 1:
            content: str | list = f"prompt {turn}: keep going"
            if turn == 1:
                content = [TextContent(text="look at this"), ImageContent(data="A" * 40_000, mime_type="image/png")]
            s.append_message(UserMessage(content=content))
        call = ToolCall(id=f"c{turn}", name="read", arguments={"path": f"src/mod_{turn}.py"})
        s.append_message(AssistantMessage(content=[call], usage=Usage(input=total // 4, output=40), stop_reason="toolUse"))
        s.append_message(ToolResultMessage(tool_call_id=call.id, tool_name="read", content=[TextContent(text=body)]))
        total += len(body) + 60
    return s


def per_turn(runs: int = 500) -> dict:
    s = big_session()
    tools = [{"name": f"tool{i}", "description": "d" * 300, "parameters": {"type": "object"}} for i in range(10)]
    settings = prune_settings(None)
    w = Window(200_000, 32_000, 0.8, 16_384)

    def check(ctx) -> tuple[int, int]:
        size = measure(s.branch(), ctx.messages, ctx.entry_ids, tools)
        level = 90 if size.tokens >= 180_000 else 70 if size.tokens >= 140_000 else 0
        edits = plan_prune(ctx.messages, ctx.entry_ids, settings) if size.tokens > w.limit // 2 else []
        edits += plan_image_budget(ctx.messages, ctx.entry_ids, settings)
        return level, len(edits)

    ctx = s.context()
    full = measure(s.branch(), ctx.messages, ctx.entry_ids, tools)
    estimated = sum(1 for _ in ctx.messages)
    times = []
    level, edits = check(ctx)
    for _ in range(runs):
        t0 = time.perf_counter()
        check(s.context())
        times.append((time.perf_counter() - t0) * 1000)
    rebuilt = []
    for _ in range(50):
        s._context_cache = None  # what the first check after an append pays
        t0 = time.perf_counter()
        check(s.context())
        rebuilt.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return {
        "messages": estimated,
        "tokens": full.tokens,
        "level": level,
        "prune_edits": edits,
        "median_ms": round(statistics.median(times), 3),
        "p95_ms": round(times[int(len(times) * 0.95)], 3),
        "rebuilt_median_ms": round(statistics.median(rebuilt), 2),
    }


def soak(turns: int = 300, *, prune: bool = False) -> dict:
    from ama.session.entries import CompactionEntry, ContextEditEntry
    from tests.agent.helpers import make_agent
    from tests.agent.window_server import WindowServer

    with tempfile.TemporaryDirectory() as tmp:
        home, ws = Path(tmp) / "home", Path(tmp) / "ws"
        home.mkdir()
        ws.mkdir()
        os.environ["AMA_HOME"] = str(home)
        for i in range(3):
            (ws / f"big{i}.txt").write_text("".join(f"line {n:04d} of file {i}: {'x' * 40}\n" for n in range(130)))
        server = WindowServer(12_000, lambda n: ("read", {"path": f"big{n % 3}.txt", "limit": 200 + n}) if n < turns else "done")
        compaction = {"threshold": 0.7, "reserveTokens": 1000, "keepRecentTokens": 3000}
        if prune:  # tier 1 scaled to the small window
            compaction.update(pruneKeepTokens=3000, pruneMinTokens=1500)
        cfg = {"providers": {"win": server.provider("openai-completions")}, "compaction": compaction}
        (home / "config.json").write_text(json.dumps(cfg))

        async def go():
            agent, _ = await make_agent(ws, "win/m", permission_mode="full-auto", sandbox="off")
            t0 = time.perf_counter()
            res = await agent.prompt("read the big files over and over")
            dt = time.perf_counter() - t0
            entries = agent.session.entries
            comps = sum(isinstance(e, CompactionEntry) for e in entries)
            prunes = sum(isinstance(e, ContextEditEntry) and e.reason == "prune" for e in entries)
            await agent.close()
            return res, dt, comps, prunes

        try:
            res, dt, comps, prunes = asyncio.run(go())
        finally:
            server.close()
        return {
            "turns": len(server.turns),
            "exit": res.exit_code,
            "wall_s": round(dt, 2),
            "compactions": comps,
            "pruned_results": prunes,
            "largest_request": max(server.sizes),
            "window": server.window,
            "overflows": server.overflows,
        }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-soak", action="store_true")
    ap.add_argument("--turns", type=int, default=300)
    a = ap.parse_args()
    r = per_turn()
    print(
        f"per-turn check, {r['messages']} messages / {r['tokens']:,} tokens: median {r['median_ms']} ms, "
        f"p95 {r['p95_ms']} ms (level {r['level']}, {r['prune_edits']} edits decided); "
        f"with the projection rebuilt: {r['rebuilt_median_ms']} ms"
    )
    for prune in () if a.no_soak else (False, True):
        s = soak(a.turns, prune=prune)
        print(
            f"soak{' with pruning' if prune else ''}: {s['turns']} requests in {s['wall_s']} s, exit {s['exit']}, {s['compactions']} compactions, "
            f"{s['pruned_results']} pruned results, largest request {s['largest_request']:,} of {s['window']:,} tokens, "
            f"{s['overflows']} overflows"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
