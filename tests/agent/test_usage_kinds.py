"""`ama stats`, `/session` and RPC `get_session_stats` count every kind of request and agree
to the cent on the same file (agent/usage_stats.py, index/facts.py)."""

from __future__ import annotations

import asyncio
import io
import json
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

from ama.messages import AssistantMessage, Cost, SystemMessage, TextContent, Usage, UserMessage
from ama.session.store import Session
from tests.agent.helpers import make_agent, write_script
from tests.conftest import ama_cmd
from tests.rpc.helpers import Rpc

KINDS = {"conversation": 3, "compaction": 1, "branch_summary": 1, "cache_warm": 2, "permission_classify": 1}


def usage(cost: float, n: int = 1000) -> Usage:
    return Usage(input=n, output=n // 10, cache_read=n * 3, cache_write=0, total_tokens=n * 4 + n // 10, cost=Cost(total=cost))


def reply(text: str, cost: float) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=text)], api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5",
        usage=usage(cost), stop_reason="stop",
    )  # fmt: skip


def fixture(ws: Path, sessions: Path) -> Session:
    s = Session.create(str(ws), sessions)
    s.append_model_change("anthropic", "claude-sonnet-4-5")
    s.append_message(SystemMessage(content="sys"))
    u1 = s.append_message(UserMessage(content="one"))
    s.append_message(reply("a", 0.0133333))
    s.append_message(UserMessage(content="two"))
    s.append_message(reply("b", 0.0071111))
    s.append_compaction("summary", u1.id, 5000, usage=usage(0.0042222, 600))
    s.append_usage("cache_warm", "anthropic", "claude-sonnet-4-5", usage(0.0005555, 300))
    s.append_usage("permission_classify", "anthropic", "claude-sonnet-4-5", usage(0.0009999, 200))
    s.navigate(u1.id)
    s.append_branch_summary(u1.id, "abandoned branch", usage=usage(0.0011111, 400))
    s.append_message(UserMessage(content="three"))
    s.append_message(reply("c", 0.0020202))
    s.append_usage("cache_warm", "anthropic", "claude-sonnet-4-5", usage(0.0005555, 300))
    s.close()
    return s


def test_stats_session_and_rpc_count_every_kind_and_agree_to_the_cent(tmp_path: Path, ama_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    s = fixture(ws, ama_home / "sessions")
    expected_cost = 0.0133333 + 0.0071111 + 0.0042222 + 0.0005555 * 2 + 0.0009999 + 0.0011111 + 0.0020202

    # ama stats, through the index and by scanning
    reports = []
    for extra in ([], ["--no-cache"]):
        out = subprocess.run(ama_cmd("stats", "--json", *extra), cwd=ws, capture_output=True, text=True, check=True)
        reports.append(json.loads(out.stdout))
    for rep in reports:
        assert rep["requestsByKind"] == KINDS and rep["requests"] == sum(KINDS.values())

    # RPC get_session_stats
    model = write_script(tmp_path / "s.json", ["unused"])
    rpc = Rpc(ws, "--model", model, "-r", str(s.path))
    try:
        stats = rpc.call("get_session_stats")["data"]
    finally:
        rpc.close()
    assert stats["requestsByKind"] == KINDS and stats["requests"] == sum(KINDS.values())
    assert stats["byKind"]["cache_warm"]["input"] == 600 and stats["byKind"]["compaction"]["output"] == 60

    # /session in the interactive UI
    async def session_lines() -> list[str]:
        from ama.cli.render import Renderer
        from ama.cli.slash import cmd_session

        agent, _ = await make_agent(ws, model, session=str(s.path))
        buf = io.StringIO()
        await cmd_session(SimpleNamespace(agent=agent, renderer=Renderer(buf, color=False), assistants=[]), "")
        await agent.close()
        return buf.getvalue().splitlines()

    lines = asyncio.run(session_lines())
    req = next(line for line in lines if line.startswith("requests"))
    assert req == "requests 8 (conversation 3 · compaction 1 · cache_warm 2 · permission_classify 1 · branch_summary 1)"
    shown_cost = float(re.search(r"cost +\$([0-9.]+)", "\n".join(lines)).group(1))

    costs = [reports[0]["cost"], reports[1]["cost"], stats["cost"], shown_cost]
    assert all(round(c, 2) == round(expected_cost, 2) for c in costs), costs  # to the cent
    assert all(abs(c - expected_cost) < 5e-5 for c in costs), costs  # and to what each prints
    tokens = reports[0]["tokens"]
    assert {k: stats["tokens"][k] for k in tokens} == tokens
