"""Multi-part summaries and the summary model (agent/summary_parts.py): never a dead end."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from ama.agent.summary_parts import split_parts
from ama.session.entries import CompactionEntry
from tests.agent.helpers import make_agent
from tests.agent.window_server import WindowServer


def test_split_parts_keeps_every_block_in_order_and_cuts_a_giant_one() -> None:
    blocks = [f"message {i}: " + "y" * 900 for i in range(30)] + ["giant " + "z" * 9000]
    parts = split_parts("", blocks, 5000)
    room = 5000 - 2500
    assert len(parts) > 5 and all(len(p) <= room for p in parts)
    joined = "".join(parts).replace("\n\n", "")
    assert joined == "".join(blocks)  # nothing dropped, order kept


def test_history_too_big_for_one_request_is_summarized_in_parts_by_the_summary_model(tmp_path: Path, ama_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(3):
        (ws / f"big{i}.txt").write_text("".join(f"line {n:04d} of file {i}: {'x' * 40}\n" for n in range(130)))
    turns = 40
    main = WindowServer(400_000, lambda n: ("read", {"path": f"big{n % 3}.txt", "limit": 200 + n}) if n < turns else "done")
    small = WindowServer(12_000, lambda n: "unused")
    config = {
        "providers": {"win": main.provider("openai-completions"), "small": small.provider("openai-completions")},
        "compaction": {"model": "small/m", "prune": False},
    }
    (ama_home / "config.json").write_text(json.dumps(config))

    async def go():
        agent, events = await make_agent(ws, "win/m", permission_mode="full-auto")
        res = await agent.prompt("read the big files")
        result = await agent.compact()
        comp = [e for e in agent.session.branch() if isinstance(e, CompactionEntry)][-1]
        requests = [e.data for e in agent.session.entries if getattr(e, "custom_type", None) == "ama.request"]
        await agent.close()
        return res, result, comp, requests

    try:
        res, result, comp, requests = asyncio.run(go())
    finally:
        main.close()
        small.close()
    assert res.exit_code == 0
    n = len(small.summaries)
    assert n >= 2 and main.summaries == []  # the summary model wrote every part
    assert small.overflows == 0 and max(small.sizes) <= small.window
    assert result["summaryParts"] == n
    assert comp.summary.startswith(f"Summary {n}:")  # the last part's summary is the compaction's
    for k in range(1, n):  # each part request carries the summary so far
        assert f"Summary {k}:" in json.dumps(small.summaries[k]["messages"])
    parts = [r["part"] for r in requests if r.get("purpose") == "compaction"]
    assert parts == [f"{k}/{n}" for k in range(1, n + 1)]
    assert comp.usage is not None and comp.usage.output == 20 * n  # the usage of every part


def test_sessions_compact_model_option_wins_over_compaction_model(tmp_path: Path, ama_home: Path) -> None:
    import subprocess

    from tests.conftest import ama_cmd

    main = WindowServer(100_000, lambda n: f"reply {n}")
    small = WindowServer(100_000, lambda n: "unused")
    config = {
        "providers": {"win": main.provider("openai-completions"), "small": small.provider("openai-completions")},
        "compaction": {"model": "small/m"},
    }
    (ama_home / "config.json").write_text(json.dumps(config))

    async def first() -> str:
        agent, _ = await make_agent(tmp_path, "win/m")
        for p in ("one", "two", "three"):
            await agent.prompt(p)
        sid = agent.session.id
        await agent.close()
        return sid

    try:
        sid = asyncio.run(first())
        out = subprocess.run(ama_cmd("sessions", "compact", sid[:8], "--model", "win/m", "--json"), cwd=tmp_path,
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    finally:
        main.close()
        small.close()
    assert out.returncode == 0, out.stderr
    assert len(main.summaries) == 1 and small.summaries == []
