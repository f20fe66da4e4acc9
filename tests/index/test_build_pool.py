"""The workers of a build and the parent's read-ahead thread (index/build.py ``records``):
the records come in path order whatever the read-ahead limit, a worker that fails on a
file or dies leaves its paths to the parent, and a build stopped early leaves no worker
and no thread behind."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from ama.index import build as B
from ama.index import record as R
from ama.index.timeutil import Days
from tests.index.helpers import Builder, usage


def sessions(tmp_path: Path, n: int) -> list[str]:
    d = tmp_path / "sessions"
    d.mkdir()
    for i in range(n):
        s = Builder(d, str(tmp_path), created=f"2026-05-{i % 28 + 1:02d}T09:00:00.000Z")
        s.user(f"question {i} about the lexer " + "word " * (i * 37 % 400), f"2026-05-{i % 28 + 1:02d}T10:00:00.000Z")
        s.assistant(f"2026-05-{i % 28 + 1:02d}T10:00:05.000Z", f"answer {i}", u=usage(10 + i, 5))
    paths = sorted(str(p) for p in d.rglob("*.jsonl"))
    assert len(paths) == n
    return paths


def one_by_one(paths: list[str]) -> list[R.FileRecord]:
    days = Days()
    return [R.read(p, None, days) for p in paths]


@pytest.fixture
def forked(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """The worker pids of every pool made during the test (as they were at its start)."""
    made: list[list[int]] = []
    init = B._Pool.__init__

    def keep(self: B._Pool, paths: list[str], n: int) -> None:
        init(self, paths, n)
        made.append(list(self.pids))

    monkeypatch.setattr(B._Pool, "__init__", keep)
    return made


def reaped(forked: list[list[int]]) -> bool:
    """Whether every worker forked so far has been waited for (pytest itself may have other
    children)."""
    assert forked, "no worker was forked"
    for pid in (p for pids in forked for p in pids):
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        return False
    return True


def pumps() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "ama-index-pump"]


@pytest.mark.parametrize("limit", [0, 1 << 10, B.BUFFER_BYTES])
@pytest.mark.parametrize("workers", [2, 3])
def test_records_come_in_path_order_whatever_the_read_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: list[list[int]], limit: int, workers: int
) -> None:
    paths = sessions(tmp_path, 23)
    monkeypatch.setattr(B, "BUFFER_BYTES", limit)  # 0: one record ahead at most
    got = list(B.records(paths, workers, Days()))
    assert [r.path for r in got] == paths
    assert got == one_by_one(paths)
    assert reaped(forked) and not pumps()


def test_a_worker_that_dies_leaves_its_paths_to_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: list[list[int]]
) -> None:
    paths = sessions(tmp_path, 12)
    parent = os.getpid()
    read = R.read

    def dying_read(path: str, prior: R.Prior | None, days: Days) -> R.FileRecord:
        if os.getpid() != parent and path == paths[4]:  # worker 0 of 2, its third path
            os._exit(3)
        return read(path, prior, days)

    monkeypatch.setattr(R, "read", dying_read)
    got = list(B.records(paths, 2, Days()))
    monkeypatch.setattr(R, "read", read)
    assert got == one_by_one(paths)
    assert reaped(forked) and not pumps()


def test_a_worker_that_fails_on_a_file_sends_an_error_and_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = sessions(tmp_path, 9)
    parent = os.getpid()
    read = R.read
    seen: list[str] = []

    def failing_read(path: str, prior: R.Prior | None, days: Days) -> R.FileRecord:
        if os.getpid() != parent and path in (paths[1], paths[6]):
            raise OSError("unreadable for the worker")
        if os.getpid() == parent:
            seen.append(path)  # the parent read it itself
        return read(path, prior, days)

    monkeypatch.setattr(R, "read", failing_read)
    got = list(B.records(paths, 3, Days()))
    assert seen == [paths[1], paths[6]]
    monkeypatch.setattr(R, "read", read)
    assert got == one_by_one(paths)


def test_a_build_stopped_early_leaves_no_worker_and_no_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: list[list[int]]
) -> None:
    paths = sessions(tmp_path, 40)
    monkeypatch.setattr(B, "BUFFER_BYTES", 0)  # the thread waits with the workers blocked behind it
    recs = B.records(paths, 2, Days())
    first = [next(recs), next(recs)]
    assert [r.path for r in first] == paths[:2]
    assert pumps() and not reaped(forked)
    recs.close()
    assert reaped(forked) and not pumps()


def test_workers_run_at_a_lower_priority_than_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: list[list[int]]
) -> None:
    paths = sessions(tmp_path, 6)
    monkeypatch.setattr(B, "BUFFER_BYTES", 0)
    recs = B.records(paths, 2, Days())
    assert next(recs).path == paths[0]
    want = [min(os.getpriority(os.PRIO_PROCESS, 0) + B.WORKER_NICE, 19)] * 2
    try:
        deadline = time.monotonic() + 10  # the second worker may not have begun yet
        while (got := [os.getpriority(os.PRIO_PROCESS, pid) for pid in forked[0]]) != want:
            assert time.monotonic() < deadline, got
            time.sleep(0.01)
    finally:
        recs.close()
    assert reaped(forked)
