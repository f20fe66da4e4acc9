"""The walk started early (``ama.index.disk.early``): a forked child lists and stats the files
of a root while the command loads, the parent finishes from the end: the result is what
``scan_disk`` gives, wherever the two meet."""

from __future__ import annotations

import json
import mmap
import os
import sqlite3
import time
from pathlib import Path

import pytest

from ama.cli.early import early_walk
from ama.index import db as D
from ama.index import disk
from ama.index.disk import Early, large_roots, note_size, scan_disk
from ama.index.indexer import refresh
from tests.index.helpers import Builder, ama
from tests.index.test_freshness import _tree


def _root(tmp_path: Path, many: int = 0) -> str:
    """The freshness tests' tree (links, a FIFO, a socket, depth...) and ``many`` files more
    over two directories."""
    root = tmp_path / "sessions"
    _tree(root)
    for i in range(many):
        d = root / ("--m--" if i % 3 else "--n--")
        d.mkdir(exist_ok=True)
        (d / f"{i:05}.jsonl").write_bytes(b"x" * (i % 7))
    return str(root)


def _same(got: disk.DiskState | None, want: disk.DiskState) -> None:
    assert got is not None
    assert got.paths == want.paths
    assert got.as_dict() == want.as_dict()
    assert got._values == want._values  # the same flat order as the digest reads


def _by_hand(root: str, prefix: int, map_bytes: int = 1 << 22) -> Early:
    """An early walk whose child's part is the first ``prefix`` files, the child's code run
    in this process (its meeting point set by hand)."""
    e = Early(os.path.abspath(root), 3)
    e.map = mmap.mmap(-1, map_bytes)
    e.q = memoryview(e.map).cast("q")
    e.u = memoryview(e.map).cast("Q")
    e.q[disk._LOW] = prefix  # the parent "took" everything from here
    r, w = os.pipe()
    disk._walk_forward(e.root, 3, w, e.q, e.u)
    os.close(w)
    e.fd = r
    return e


def test_every_meeting_point_gives_the_walk(tmp_path: Path) -> None:
    """Child's part [0, k), parent's [k, n) for every k: names dropped on either side (the
    FIFO, the socket), links, the odd name."""
    root = _root(tmp_path, many=12)
    want = scan_disk(root)
    n = sum(len(names) for _d, names in disk._list(root, 3))
    assert n > len(want)  # some names are dropped
    for k in range(n + 1):
        e = _by_hand(root, k)
        try:
            assert e.q is not None and e.q[disk._DONE] == k
            _same(e._take(), want)
        finally:
            e.close()


@pytest.mark.parametrize("prefix", [0, 10**9])  # the parent stats everything / the child does
def test_files_gone_after_the_listing_are_dropped_on_either_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefix: int
) -> None:
    """A directory removed between the child's listing and the stats: its names are dropped,
    as ``scan_disk`` drops names it cannot stat, on the child's side or the parent's."""
    import shutil

    root = _root(tmp_path, many=9)
    listed = disk._list(os.path.abspath(root), 3)

    def list_then_remove(top: str, depth: int) -> list[disk.Segment]:
        shutil.rmtree(Path(top) / "--m--")
        return listed

    monkeypatch.setattr(disk, "_list", list_then_remove)
    e = _by_hand(root, prefix)
    monkeypatch.undo()
    try:
        got = e._take()
    finally:
        e.close()
    _same(got, scan_disk(root))
    assert got is not None and len(got) and not any("--m--" in p for p in got.paths)


def test_an_inode_beyond_63_bits_is_read_unsigned(tmp_path: Path) -> None:
    root = _root(tmp_path)
    want = scan_disk(root)
    e = _by_hand(root, 10**9)  # the child did everything
    try:
        assert e.q is not None and e.u is not None
        base = disk._base(e.q[disk._LEN])
        first = next(i for i in range(e.q[disk._N]) if e.q[base + 3 * i] >= 0)  # the first kept file
        e.u[base + 3 * first + 2] = 2**63 + 5
        got = e._take()
    finally:
        e.close()
    assert got is not None and got._values[2] == 2**63 + 5
    assert got._values[:2] + got._values[3:] == want._values[:2] + want._values[3:]


def test_a_child_that_cannot_finish_leaves_the_walk_to_the_parent(tmp_path: Path) -> None:
    root = _root(tmp_path, many=200)
    e = _by_hand(root, 10**9, map_bytes=4096)  # the listing does not fit: "X"
    try:
        assert e._take() is None
    finally:
        e.close()
    e = Early(os.path.abspath(root), 3)  # no child at all
    assert e.take() is None


@pytest.mark.parametrize("wait", [0.0, 0.2])
def test_a_forked_early_walk_gives_the_walk(tmp_path: Path, wait: float) -> None:
    """Taken at once (the two meet somewhere in the 3,000 files) or after the child is done."""
    root = _root(tmp_path, many=3000)
    want = scan_disk(root)
    with Early(os.path.abspath(root), 3) as e:
        e._start()
        pid = e.pid
        assert pid and Early.pending is e
        time.sleep(wait)
        got = scan_disk(root + "/")  # (the same root)
        assert Early.pending is None and e.pid == 0  # taken, the child reaped
    _same(got, want)
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, 0)


def test_a_walk_not_taken_is_stopped_and_reaped(tmp_path: Path) -> None:
    root = _root(tmp_path, many=3000)
    other = tmp_path / "other"
    other.mkdir()
    with Early(os.path.abspath(root), 3) as e:
        e._start()
        pid = e.pid
        assert scan_disk(str(other)).paths == []  # another root: not this walk
        assert Early.pending is e
    assert Early.pending is None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, 0)


def test_only_large_roots_are_walked_early(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[str] = []
    monkeypatch.setattr(Early, "_start", lambda self: started.append(self.root))
    monkeypatch.setattr(disk, "_may_fork", lambda files: True)  # (a spare core, no thread)
    monkeypatch.delenv("AMA_SCAN_WORKERS", raising=False)
    data = tmp_path / "data"
    data.mkdir()
    root = str(tmp_path / "s")
    disk.early(root, data_dir=str(data))
    assert started == []  # no hint
    note_size(str(data), root, disk.FORK_MIN_FILES)
    assert large_roots(str(data)) == [root]
    disk.early(root, data_dir=str(data))
    disk.early(root + "/x/..", data_dir=str(data))  # the same root, spelled otherwise
    assert started == [root, os.path.abspath(root + "/x/..")]
    note_size(str(data), root, disk.FORK_MIN_FILES - 1)
    assert large_roots(str(data)) == []
    disk.early(root, data_dir=str(data))
    assert len(started) == 2
    monkeypatch.setenv("AMA_SCAN_WORKERS", "2")  # tests and tuning: always
    disk.early(root, data_dir=str(data))
    assert len(started) == 3
    monkeypatch.undo()
    monkeypatch.setenv("AMA_SCAN_WORKERS", "1")  # never
    note_size(str(data), root, 10**6)
    assert disk.early(root, data_dir=str(data)).pid == 0


def test_the_hint_survives_damage_and_odd_names(tmp_path: Path) -> None:
    data = str(tmp_path)
    (tmp_path / disk.LARGE_ROOTS).write_bytes(b"\xff\x00/a\nb\x00half")  # a name that is not UTF-8, a half record
    assert large_roots(data) == [os.fsdecode(b"\xff"), "/a\nb"]
    note_size(data, "/c", 10**6)
    assert large_roots(data) == [os.fsdecode(b"\xff"), "/a\nb", "/c"]
    assert note_size(str(tmp_path / "missing" / "dir"), "/c", 10**6) is None  # cannot write: ignored
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_a_refresh_keeps_the_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(disk, "FORK_MIN_FILES", 3)
    root = tmp_path / "sessions"
    for cwd in ("/p", "/q", "/r"):
        s = Builder(root, cwd)
        s.user("hello", "2026-03-01T10:00:01.000Z")
    data = tmp_path / "data"
    data.mkdir()
    db = D.connect(str(data / "index.db"))
    try:
        refresh(db, str(root))
        assert large_roots(str(data)) == [str(root)]
        os.unlink(next(root.rglob("*.jsonl")))
        refresh(db, str(root))
        assert large_roots(str(data)) == []
        mem = sqlite3.connect(":memory:")  # an index without a file: no hint to keep
        assert mem.execute("PRAGMA database_list").fetchone()[2] == ""
    finally:
        db.close()


def test_the_command_line_names_the_root_to_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str]] = []
    monkeypatch.setattr(disk, "early", lambda root, *, data_dir: calls.append((root, data_dir)) or "walk")
    monkeypatch.setenv("AMA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AMA_SESSION_DIR", raising=False)
    home = str(tmp_path / "home")
    sd = str(tmp_path / "sd")
    assert early_walk(["stats", "--all"]) == "walk"
    assert early_walk(["sessions", "list", "--session-dir", sd]) == "walk"
    assert early_walk(["sessions", "search", "x", f"--session-dir={sd}/"]) == "walk"
    assert calls == [(f"{home}/sessions", home), (sd, home), (sd, home)]
    for argv in (
        ["stats", "--no-cache"],
        ["stats", "--help"],
        ["sessions", "search", "--", "--session-dir"],
        ["sessions", "show", "x"],
        ["sessions"],
        ["runs", "list"],
        ["stats", "--session-dir", "~nosuchuser-ama/x"],  # (argparse's run reports it)
    ):
        with early_walk(argv):
            pass
    assert len(calls) == 3


def test_commands_with_the_early_walk_answer_as_the_files_say(sessions_dir: Path) -> None:
    """Forced early walks (``AMA_SCAN_WORKERS=2``) through a build, an append and a removal:
    the same answers as a scan of the files."""
    sessions = [Builder(sessions_dir, f"/p{i}") for i in range(4)]
    for i, s in enumerate(sessions):
        s.user(f"question {i} about parsers", f"2026-03-0{i + 1}T10:00:01.000Z")
        s.assistant(f"2026-03-0{i + 1}T10:00:02.000Z", "done")
    early = {"AMA_SCAN_WORKERS": "2", "TZ": "UTC"}

    def same() -> None:
        for argv in (["stats", "--all"], ["sessions", "list", "--all"], ["sessions", "search", "parsers", "--all"]):
            got = ama(*argv, "--json", env=early).stdout
            want = ama(*argv, "--json", "--no-cache", env=early).stdout
            if argv[0] == "stats":
                got_j, want_j = json.loads(got), json.loads(want)
                got_j.pop("files"), want_j.pop("files")
                assert got_j == want_j
            else:
                assert got == want

    same()
    sessions[0].user("and then", "2026-03-05T10:00:01.000Z")
    same()
    os.unlink(sessions[1].path)
    same()


def test_a_fork_needs_a_core_idle_now(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from ama.index import fanout

    monkeypatch.delenv("AMA_SCAN_WORKERS", raising=False)
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # (a thread an earlier test left)
    if os.path.exists("/proc/loadavg"):
        assert disk._runnable() >= 1  # this process at least
    monkeypatch.setattr(fanout, "usable_cpus", lambda: 2)
    for running, want in ((1, True), (2, False), (7, False)):
        monkeypatch.setattr(disk, "_runnable", lambda running=running: running)
        assert disk._may_fork(disk.FORK_MIN_FILES) is want
        assert disk._may_fork(None) is want  # (the early walk: the number not known yet)
    assert disk._may_fork(disk.FORK_MIN_FILES - 1) is False
    monkeypatch.setattr(fanout, "usable_cpus", lambda: 1)
    monkeypatch.setattr(disk, "_runnable", lambda: 0)
    assert disk._may_fork(None) is False


def test_without_proc_the_load_average_says_how_busy(monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = os.open

    def no_proc(path, *a, **k):
        if path == "/proc/loadavg":
            raise FileNotFoundError(path)
        return real_open(path, *a, **k)

    monkeypatch.setattr(os, "open", no_proc)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.7, 2.0, 3.0))
    assert disk._runnable() == 0.7
