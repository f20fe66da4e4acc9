"""``SessionStats.external``: the roll-up of ``ama.agent-session`` / ``ama.agent-usage`` records."""

from __future__ import annotations

import shutil
from pathlib import Path

from ama.agent.views import session_stats
from ama.session.external_usage import usage_row
from ama.session.store import Session
from tests.conftest import FIXTURES
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
