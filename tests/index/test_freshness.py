"""The freshness check of indexed queries: the walk finds what the catalog's walk finds, a
root whose files are as they were at the last current check reads no rows, and every change
to a file between two queries is still seen."""

from __future__ import annotations

import os
import socket
import sqlite3
from pathlib import Path

import pytest

from ama.index import db as D
from ama.index.indexer import refresh, scan_disk
from ama.session.layout import iter_session_files
from tests.index.helpers import Builder, usage


def _tree(root: Path) -> None:
    """Everything the walk has to decide about: nesting to and past the depth limit, dot
    names, files and directories interleaved by name, links (to files, directories, FIFOs,
    nowhere, themselves), a FIFO, a socket, a directory named like a session."""
    (root / "--a--").mkdir(parents=True)
    (root / "--a--" / "1.jsonl").write_bytes(b"{}\n")
    (root / "--a--" / "2.txt").write_bytes(b"x")
    (root / "--a--" / ".hidden.jsonl").write_bytes(b"{}\n")
    (root / "--a--" / "b").mkdir()
    (root / "--a--" / "b" / "deep.jsonl").write_bytes(b"{}\n{}\n")
    (root / "--a--" / "b" / "c" / "d").mkdir(parents=True)
    (root / "--a--" / "b" / "c" / "three.jsonl").write_bytes(b"{}\n")
    (root / "--a--" / "b" / "c" / "d" / "too-deep.jsonl").write_bytes(b"{}\n")
    (root / "--a--" / "c.jsonl").write_bytes(b"{}\n")
    (root / "--a--" / "dir.jsonl").mkdir()
    (root / ".trash" / "--a--").mkdir(parents=True)
    (root / ".trash" / "--a--" / "gone.jsonl").write_bytes(b"{}\n")
    (root / ".dot").mkdir()
    (root / ".dot" / "x.jsonl").write_bytes(b"{}\n")
    (root / "a-b").mkdir()
    (root / "a-b" / "x.jsonl").write_bytes(b"{}\n")
    (root / "a.jsonl").write_bytes(b"{}\n")
    (root / "z.jsonl").write_bytes(b"{}\n")
    os.mkfifo(root / "fifo.jsonl")
    os.symlink(root / "fifo.jsonl", root / "fifo-link.jsonl")
    os.symlink(root / "a.jsonl", root / "link.jsonl")
    os.symlink(root / "nowhere", root / "dangling.jsonl")
    os.symlink("loop.jsonl", root / "loop.jsonl")
    os.symlink(root / "--a--", root / "linked-dir")
    os.symlink(root / "--a--", root / "linked-dir.jsonl")
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(root / "sock.jsonl"))
    finally:
        s.close()
    (root / "plain-file").write_bytes(b"x")
    odd = os.fsdecode(b"\xff-odd.jsonl")  # a name that is not UTF-8
    (root / "--a--" / odd).write_bytes(b"{}\n")


def _expected(root: str) -> list[tuple[str, tuple[int, int, int]]]:
    out = []
    for p in iter_session_files(root):
        try:
            st = os.stat(p)
        except OSError:
            st = os.lstat(p)
        out.append((p, (st.st_size, st.st_mtime_ns, st.st_ino)))
    return out


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_walk_finds_what_the_catalog_walk_finds_in_the_same_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    """In one process and with half of the files stat'ed by a forked child (cut anywhere)."""
    monkeypatch.setenv("AMA_SCAN_WORKERS", workers)
    root = tmp_path / "sessions"
    _tree(root)
    disk = scan_disk(str(root))
    want = _expected(str(root))
    assert disk.as_dict() == dict(want) and disk.paths == [p for p, _ in want]
    names = {os.path.relpath(p, root) for p in disk.paths}
    assert {"a.jsonl", "link.jsonl", "dangling.jsonl", "loop.jsonl", "linked-dir.jsonl"} <= names
    assert {"--a--/dir.jsonl", "--a--/b/c/three.jsonl", "a-b/x.jsonl"} <= names
    assert not names & {"fifo.jsonl", "fifo-link.jsonl", "sock.jsonl", "--a--/.hidden.jsonl", ".dot/x.jsonl"}
    assert "--a--/b/c/d/too-deep.jsonl" not in names and not any(n.startswith(".trash") for n in names)
    with pytest.raises(UnicodeEncodeError):  # the index cannot hold such a name (refresh says so)
        disk.digest()
    os.unlink(root / "--a--" / os.fsdecode(b"\xff-odd.jsonl"))
    # a root given with a trailing slash, a missing root, a file as the root
    assert scan_disk(str(root) + "/").paths == list(iter_session_files(str(root) + "/"))
    assert scan_disk(str(tmp_path / "none")).paths == []
    assert scan_disk(str(root / "a.jsonl")).paths == []
    # many files over a few directories: the halves are cut inside a directory
    for d in ("--m--", "--n--"):
        (root / d).mkdir()
        for i in range(51 if d == "--m--" else 3):
            (root / d / f"{i:03}.jsonl").write_bytes(b"x" * i)
    os.mkfifo(root / "--n--" / "001.jsonl.jsonl")
    disk = scan_disk(str(root))
    want = _expected(str(root))
    assert disk.as_dict() == dict(want) and disk.paths == [p for p, _ in want]
    assert disk.digest() == scan_disk(str(root)).digest()


def test_the_digest_changes_with_anything_a_refresh_compares(tmp_path: Path) -> None:
    root = tmp_path / "s"
    (root / "--p--").mkdir(parents=True)
    f = root / "--p--" / "one.jsonl"
    f.write_bytes(b"{}\n")
    for i in range(5):
        (root / "--p--" / f"same-{i}.jsonl").write_bytes(b"{}\n" * 300)  # equal sizes: shared int objects
    first = scan_disk(str(root))
    seen = {first.digest()}
    held = first.as_dict()  # more references to the same numbers: the digest must not see them
    assert scan_disk(str(root)).digest() in seen and first.digest() in seen and held

    def changed() -> None:
        d = scan_disk(str(root)).digest()
        assert d not in seen
        seen.add(d)

    with open(f, "ab") as out:
        out.write(b"{}\n")  # size (and mtime)
    changed()
    os.utime(f, ns=(1, 1))  # mtime only
    changed()
    tmp = root / "--p--" / "new"
    tmp.write_bytes(f.read_bytes())
    os.utime(tmp, ns=(1, 1))
    os.replace(tmp, f)  # the inode only
    changed()
    (root / "--p--" / "two.jsonl").write_bytes(b"")  # a new, empty file
    changed()
    os.rename(root / "--p--" / "two.jsonl", root / "--p--" / "three.jsonl")  # a rename
    changed()


def session(sessions_dir: Path, cwd: str = "/p") -> Builder:
    s = Builder(sessions_dir, cwd)
    s.user("question about widgets", "2026-03-01T10:00:00.000Z")
    s.assistant("2026-03-01T10:00:05.000Z", "answer", u=usage(10, 5))
    return s


def _verified(db: sqlite3.Connection) -> list:
    return [v for (v,) in db.execute("SELECT verified FROM roots")]


def test_a_current_root_is_marked_and_any_change_is_still_seen(sessions_dir: Path) -> None:
    s = session(sessions_dir)
    other = session(sessions_dir, "/q")
    db = D.connect()
    try:
        root = str(sessions_dir)

        def counts() -> tuple[int, int, int]:
            i = refresh(db, root)
            return i.scanned, i.cached, i.removed

        assert counts() == (2, 0, 0) and _verified(db) == [None]  # a write: no mark yet
        assert counts() == (0, 2, 0) and _verified(db) == [scan_disk(root).digest()]
        assert counts() == (0, 2, 0)  # answered from the mark
        for _ in range(3):  # appends in quick succession, each seen by the next refresh
            s.user("more widgets", "2026-03-01T10:01:00.000Z")
            assert counts() == (1, 1, 0) and _verified(db) == [None]
            assert counts() == (0, 2, 0) and _verified(db) != [None]
        data = Path(s.path).read_bytes()
        Path(s.path).write_bytes(data[: len(data) // 2])  # truncated
        assert counts() == (1, 1, 0)
        tmp = s.path + ".tmp"
        Path(tmp).write_bytes(data)
        os.replace(tmp, s.path)  # replaced by another file
        assert counts() == (1, 1, 0)
        assert counts() == (0, 2, 0)
        os.unlink(other.path)  # deleted
        assert counts() == (0, 1, 1)
        session(sessions_dir, "/r")  # added
        assert counts() == (1, 1, 0)
    finally:
        db.close()


def test_any_write_to_a_roots_rows_clears_its_mark(sessions_dir: Path, tmp_path: Path) -> None:
    session(sessions_dir)
    elsewhere = tmp_path / "elsewhere"
    session(elsewhere)
    db = D.connect()
    try:
        for root in (sessions_dir, elsewhere):
            refresh(db, str(root))
            refresh(db, str(root))
        assert None not in _verified(db)
        for sql in (
            "UPDATE files SET size = size + 1 WHERE root_id = (SELECT id FROM roots WHERE path = ?)",
            "UPDATE files SET mtime_ns = 7 WHERE root_id = (SELECT id FROM roots WHERE path = ?)",
            "UPDATE files SET ino = 7 WHERE root_id = (SELECT id FROM roots WHERE path = ?)",
            "UPDATE files SET path = path || 'x' WHERE root_id = (SELECT id FROM roots WHERE path = ?)",
            "DELETE FROM files WHERE root_id = (SELECT id FROM roots WHERE path = ?)",
        ):
            refresh(db, str(sessions_dir))  # reads the file again after the change below
            assert refresh(db, str(sessions_dir)).cached == 1  # and marks the root current
            marks = dict(db.execute("SELECT path, verified FROM roots").fetchall())
            assert None not in marks.values()
            db.execute(sql, (str(sessions_dir),))
            after = dict(db.execute("SELECT path, verified FROM roots").fetchall())
            assert after[str(sessions_dir)] is None, sql
            assert after[str(elsewhere)] == marks[str(elsewhere)]  # another root's mark stays
        db.execute("INSERT INTO files (root_id, path, size, mtime_ns, ino, offset, valid) "
                   "SELECT id, 'x', 0, 0, 0, 0, 0 FROM roots WHERE path = ?", (str(elsewhere),))  # fmt: skip
        assert dict(db.execute("SELECT path, verified FROM roots").fetchall())[str(elsewhere)] is None
    finally:
        db.close()


def test_no_mark_while_another_process_holds_the_write_lock(sessions_dir: Path) -> None:
    session(sessions_dir)
    db = D.connect()
    holder = sqlite3.connect(D.path(), isolation_level=None)
    try:
        refresh(db, str(sessions_dir))
        holder.execute("BEGIN IMMEDIATE")
        info = refresh(db, str(sessions_dir))  # current: answered without waiting for the lock
        assert (info.scanned, info.cached) == (0, 1) and _verified(db) == [None]
        holder.execute("ROLLBACK")
        refresh(db, str(sessions_dir))
        assert _verified(db) == [scan_disk(str(sessions_dir)).digest()]
    finally:
        holder.close()
        db.close()


def test_a_mark_is_not_set_on_a_snapshot_another_process_changed(sessions_dir: Path) -> None:
    """The rows are compared in a read transaction; if another process wrote after it began,
    SQLite refuses the mark, so it can never describe rows that are no longer there."""
    from ama.index.indexer import _check

    session(sessions_dir)
    db = D.connect()
    other = D.connect()
    try:
        root = str(sessions_dir)
        refresh(db, root)
        disk = scan_disk(root)
        db.execute("BEGIN")
        db.execute("SELECT count(*) FROM files").fetchone()  # the read snapshot starts here
        other.execute("INSERT OR REPLACE INTO meta VALUES ('test', '1')")  # a commit meanwhile
        db.execute("COMMIT")
        # the real sequence: _check's own transaction sees the latest rows, so it marks
        _check(db, root, disk.as_dict(), disk.digest())
        assert _verified(db) == [disk.digest()]
        db.execute("UPDATE roots SET verified = NULL")
        db.execute("BEGIN")
        db.execute("SELECT count(*) FROM files").fetchone()
        other.execute("INSERT OR REPLACE INTO meta VALUES ('test', '2')")
        with pytest.raises(sqlite3.OperationalError):
            db.execute("UPDATE roots SET verified = 'stale'")
        db.execute("ROLLBACK")
        assert _verified(db) == [None]
    finally:
        other.close()
        db.close()


def test_cached_answers_are_not_reused_after_a_change(sessions_dir: Path) -> None:
    """The query cache (stats reports, the terms a keyword narrows to) is keyed by the
    index's generation: a term that appears, a request that is added, are in the next answer."""
    from tests.index.helpers import ama, ama_json

    s = session(sessions_dir)

    def hits(word: str) -> int:
        out = ama("sessions", "search", word, "--all", "--json").stdout
        return len(out.splitlines())

    assert hits("zork") == 0 and hits("zork") == 0  # the second from the cache
    assert ama_json("stats", "--all")["requests"] == 1
    db = D.connect()
    try:
        (cached,) = db.execute("SELECT count(*) FROM query_cache").fetchone()
        assert cached >= 2
    finally:
        db.close()
    s.user("what is a zork", "2026-03-01T11:00:00.000Z")
    s.assistant("2026-03-01T11:00:05.000Z", "a grue's cousin", u=usage(3, 4))
    assert hits("zork") == 1 and hits("grue") == 1
    r = ama_json("stats", "--all")
    assert (r["requests"], r["tokens"]["input"]) == (2, 13)


def test_a_file_name_that_is_not_utf8_is_scanned_not_a_traceback(sessions_dir: Path) -> None:
    """SQLite holds UTF-8 text only: with such a file the index is not used (one warning)
    and every command answers by scanning, as --no-cache does."""
    import subprocess

    from tests.conftest import ama_cmd

    def run(*args: str) -> tuple[bytes, bytes]:
        p = subprocess.run(ama_cmd(*args), capture_output=True, timeout=120)
        assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
        return p.stdout, p.stderr

    s = session(sessions_dir)
    odd = os.path.join(os.path.dirname(s.path), os.fsdecode(b"2026-03-01T10-00-00-000Z_\xff.jsonl"))
    Path(odd).write_bytes(Path(s.path).read_bytes())
    for args in (
        ["stats", "--all", "--json"],
        ["sessions", "search", "widgets", "--all"],
        ["sessions", "list", "--all"],
    ):
        out, err = run(*args)
        assert out == run(*args, "--no-cache")[0] and b"not valid UTF-8" in err, args
        assert out.count(b"widgets") >= (2 if args[1] == "search" else 0)


def test_a_write_takes_the_checks_changes_unless_another_write_came_between(sessions_dir: Path, monkeypatch) -> None:
    """After a turn the refresh compares the rows once: the write reuses that comparison
    when the generation is the one the check saw; otherwise it compares again."""
    from ama.index import indexer, update

    s = session(sessions_dir)
    other = session(sessions_dir, "/q")
    db = D.connect()
    second = D.connect()
    try:
        root = str(sessions_dir)
        refresh(db, root)
        calls: list[str] = []
        real = indexer.changes

        def counted(*args):
            calls.append("changes")
            return real(*args)

        monkeypatch.setattr(indexer, "changes", counted)
        monkeypatch.setattr(update, "changes", counted)
        s.user("more widgets", "2026-03-01T10:01:00.000Z")
        info = refresh(db, root)
        assert (info.scanned, info.cached) == (1, 1) and calls == ["changes"]
        # a check, then another process writes (the other file changed), then the write
        s.user("and more", "2026-03-01T10:02:00.000Z")
        disk = scan_disk(root)
        checked = indexer._check(db, root, disk.as_dict(), disk.digest())
        assert checked.changed == [s.path]
        other.user("meanwhile", "2026-03-01T10:03:00.000Z")
        refresh(second, root)  # writes both files
        calls.clear()
        update.write(db, root, disk.as_dict(), progress=False, on_file=None, checked=checked)
        assert calls == ["changes"]  # compared again, not taken from the stale check
        assert refresh(db, root).cached == 2
    finally:
        second.close()
        db.close()
