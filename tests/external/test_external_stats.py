"""``SessionStats.external``: the roll-up of ``ama.agent-session`` / ``ama.agent-usage`` records."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from ama.agent.views import session_stats
from ama.session.external_usage import usage_row
from ama.session.store import Session
from tests.conftest import FIXTURES, ama_cmd
from tests.session.helpers import simple_session

PARENT = FIXTURES / "external" / "parent-session.jsonl"


def test_session_stats_external_roll_up(tmp_path: Path) -> None:
    path = tmp_path / "parent.jsonl"
    shutil.copy(PARENT, path)
    stats = session_stats(Session.open(path))
    assert stats["tokens"]["input"] == 20  # the parent's own model usage is apart
    assert stats["external"] == {
        "sessions": 3,
        "turns": 4,
        "cost": 0.0197231,
        "tokens": {"input": 328, "output": 270, "cacheRead": 62156, "cacheWrite": 1940},
        "requests": 1,
        "invalid": 1,  # the record in an unknown unit
        "agents": [
            {"agent": "acp:ama", "sessions": 1, "turns": 1, "cost": 0.0,
             "tokens": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}, "requests": 1},
            {"agent": "claude", "sessions": 1, "turns": 2, "cost": 0.0197231,
             "tokens": {"input": 13, "output": 148, "cacheRead": 37708, "cacheWrite": 1940}, "requests": 0},
            {"agent": "codex", "sessions": 1, "turns": 1, "cost": 0.0,
             "tokens": {"input": 315, "output": 122, "cacheRead": 24448, "cacheWrite": 0}, "requests": 0},
        ],
    }  # fmt: skip


def test_no_external_block_without_external_records(sessions_dir: Path) -> None:
    assert "external" not in session_stats(simple_session(sessions_dir))


def test_usage_row_rejects_damaged_records() -> None:
    assert usage_row({"agent": "claude", "sessionId": "s", "unit": "usd", "amount": 0.5}) == (
        "claude",
        [1, 5_000_000_000, 0, 0, 0, 0, 0],
    )
    assert usage_row({"agent": "codex", "unit": "tokens", "amount": 70}) == ("codex", [1, 0, 70, 0, 0, 0, 0])
    for bad in (None, [], {"unit": "usd", "amount": 1}, {"agent": "x", "unit": "usd", "amount": -1},
                {"agent": "x", "unit": "usd", "amount": True}, {"agent": "x", "unit": "usd"}):  # fmt: skip
        assert usage_row(bad) is None


def _ama_stats(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(ama_cmd("stats", "--all", *args), capture_output=True, text=True, timeout=120)


def test_ama_stats_external_usage_scanned_and_indexed(sessions_dir: Path) -> None:
    d = sessions_dir / "--work-proj--"
    d.mkdir()
    shutil.copy(PARENT, d / PARENT.name)
    scanned = json.loads(_ama_stats("--json", "--no-cache").stdout)
    indexed = json.loads(_ama_stats("--json").stdout)
    assert scanned["files"]["scanned"] == 1 and indexed["files"]["cached"] + indexed["files"]["scanned"] == 1
    ext = scanned["external"]
    assert ext == indexed["external"]  # the index and the scan agree
    assert (ext["sessions"], ext["turns"], ext["cost"], ext["requests"]) == (3, 4, 0.0197231, 1)
    assert [a["agent"] for a in ext["agents"]] == ["acp:ama", "claude", "codex"]
    assert scanned["cost"] is None  # the parent's own requests are unpriced; external cost is apart
    human = _ama_stats().stdout
    line = next(ln for ln in human.splitlines() if ln.startswith("External agents"))
    assert line.split(None, 2)[2] == "acp:ama 1 turn · claude 2 turns, $0.0197, 39.8k tokens · codex 1 turn, 24.9k tokens"


def test_acp_prompt_response_usage_and_cost(sessions_dir: Path) -> None:
    from ama.messages import AssistantMessage, Cost, TextContent, Usage
    from ama.rpc.acp_usage import mark, usage_since

    s = simple_session(sessions_dir, turns=1)
    start = mark(s)
    assert usage_since(s, start) is None  # no model request yet
    u = Usage(input=7, output=3, cache_read=11, cache_write=2, total_tokens=23, cost=Cost(total=0.0025))
    s.append_message(AssistantMessage(content=[TextContent(text="x")], api="anthropic-messages",
                                      provider="anthropic", model="m", usage=u, stop_reason="stop"))  # fmt: skip
    assert usage_since(s, start) == {
        "usage": {"totalTokens": 23, "inputTokens": 7, "outputTokens": 3, "cachedReadTokens": 11, "cachedWriteTokens": 2},
        "_meta": {"cost": {"amount": 0.0025, "currency": "USD"}},
    }
