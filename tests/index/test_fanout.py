"""fanout.run_shared: a scan's groups taken from a common queue by forked processes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ama.index import fanout


def _groups(n: int) -> list[list[int]]:
    return [[i, i * 10] for i in range(n)]


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_the_results_are_the_groups_in_order(workers: int) -> None:
    groups = _groups(40)
    got = fanout.run_shared(lambda g: (g[0], sum(g), [str(x) for x in g]), groups, workers)
    assert got == [(g[0], sum(g), [str(x) for x in g]) for g in groups]


def test_every_process_takes_groups_and_each_group_is_computed_once(tmp_path: Path) -> None:
    log = tmp_path / "log"

    def work(g: list[int]) -> int:
        with open(log, "a") as f:  # one line per computation, whichever process made it
            f.write(f"{os.getpid()} {g[0]}\n")
        time.sleep(0.01)
        return os.getpid()

    groups = _groups(20)
    pids = fanout.run_shared(work, groups, 2)
    lines = [line.split() for line in log.read_text().splitlines()]
    assert sorted(int(i) for _pid, i in lines) == list(range(20))  # each once
    assert [int(p) for p, _i in sorted(lines, key=lambda x: int(x[1]))] == pids
    assert os.getpid() in pids and len(set(pids)) == 2  # a forked child took some


def test_a_slower_process_takes_fewer_groups() -> None:
    parent = os.getpid()

    def work(g: list[int]) -> int:
        if os.getpid() != parent:
            time.sleep(0.2)  # the child is much slower: the parent takes the rest meanwhile
        return os.getpid()

    pids = fanout.run_shared(work, _groups(30), 2)
    assert pids.count(parent) > 15


def test_a_child_that_dies_has_its_groups_computed_here() -> None:
    parent = os.getpid()

    def work(g: list[int]) -> int:
        if os.getpid() != parent and g[0] % 3 == 0:
            os._exit(3)  # after taking (and maybe computing) other groups
        time.sleep(0.005)
        return g[0] * 2

    assert fanout.run_shared(work, _groups(24), 3) == [i * 2 for i in range(24)]


def test_a_result_marshal_cannot_send_is_computed_here() -> None:
    class Odd:
        def __init__(self, v: int) -> None:
            self.v = v

    got = fanout.run_shared(lambda g: Odd(g[0]), _groups(12), 2)
    assert [o.v for o in got] == list(range(12))


def test_an_error_here_stops_the_children_and_reaps_them(tmp_path: Path) -> None:
    parent = os.getpid()

    def work(g: list[int]) -> int:
        if os.getpid() == parent:
            time.sleep(0.05)  # (the child starts and takes a group)
            raise ValueError("boom")
        (tmp_path / str(os.getpid())).write_text("")
        time.sleep(3)  # killed long before
        (tmp_path / "finished").write_text("")
        return 0

    with pytest.raises(ValueError, match="boom"):
        fanout.run_shared(work, _groups(8), 2)
    assert not (tmp_path / "finished").exists()  # not waited for: killed
    children = [int(p.name) for p in tmp_path.iterdir()]
    assert children
    for pid in children:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # already reaped


def test_more_groups_than_the_queue_holds_run_here() -> None:
    n = fanout._QUEUE_BYTES // fanout._TOKEN + 1
    pids = fanout.run_shared(lambda g: os.getpid(), _groups(n), 2)
    assert set(pids) == {os.getpid()} and len(pids) == n
