"""A workspace, a real session file and a tracker per test (data under the test's AMA_HOME)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ama.checkpoints import CheckpointTracker
from ama.session.store import Session


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    d.mkdir()
    return d


@pytest.fixture
def notices() -> list[str]:
    return []


@pytest.fixture
def session(ws: Path, sessions_dir: Path) -> Iterator[Session]:
    s = Session.create(str(ws), sessions_dir)
    yield s
    s.close()


@pytest.fixture
def make_tracker(
    session: Session, ws: Path, ama_home: Path, notices: list[str]
) -> Callable[..., CheckpointTracker]:
    def make(**kw) -> CheckpointTracker:
        kw.setdefault("session", session)
        kw.setdefault("cwd", str(ws))
        kw.setdefault("data_dir", str(ama_home))
        kw.setdefault("notify", notices.append)
        return CheckpointTracker(**kw)

    return make


@pytest.fixture
def tracker(make_tracker: Callable[..., CheckpointTracker]) -> CheckpointTracker:
    return make_tracker()
