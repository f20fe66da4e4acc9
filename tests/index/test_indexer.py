"""The index stays equal to the files: growth is read incrementally, anything else from the
start; it falls back to scanning when it cannot be used, and is rebuilt by doctor."""

from __future__ import annotations

import json
import os
import pty
import sqlite3
import subprocess
from pathlib import Path

from ama.index import db as D
from ama.index.indexer import refresh
from tests.conftest import ama_cmd
from tests.index.helpers import Builder, ama, ama_json, usage


def both(*args: str, cwd: str | None = None) -> str:
    """Run a command through the index and with --no-cache; assert the same stdout."""
    a = ama(*args, cwd=cwd).stdout
    b = ama(*args, "--no-cache", cwd=cwd).stdout
    assert a == b
    return a


def search(pattern: str) -> list[str]:
    out = both("sessions", "search", pattern, "--all", "--json", "--limit", "100")
    return [json.loads(line)["ref"] for line in out.splitlines()]


def stats() -> dict:
    r = ama_json("stats", "--all")
    r.pop("files")
    s = ama_json("stats", "--all", "--no-cache")
    s.pop("files")
    assert r == s
    return r


def rows(sql: str, *args) -> list[tuple]:
    db = sqlite3.connect(D.path())
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def session(sessions_dir: Path, cwd: str = "/p", turns: int = 2) -> Builder:
    s = Builder(sessions_dir, cwd)
    for i in range(turns):
        s.user(f"question {i} about widgets", f"2026-03-01T10:{i:02d}:00.000Z")
        s.assistant(f"2026-03-01T10:{i:02d}:05.000Z", f"answer {i}", u=usage(10, 5))
    return s


def test_growth_is_read_from_the_last_offset(sessions_dir: Path) -> None:
    s = session(sessions_dir)
    assert len(search("widgets")) == 2
    ((fid, offset, ndocs),) = rows("SELECT id, offset, ndocs FROM files")
    s.user("one more about widgets", "2026-03-01T11:00:00.000Z")
    s.assistant("2026-03-01T11:00:09.000Z", "sure", u=usage(1, 1))
    info = ama_json("stats", "--all")["files"]
    assert info == {"scanned": 1, "cached": 0, "invalid": 0}
    ((fid2, offset2, ndocs2),) = rows("SELECT id, offset, ndocs FROM files")
    assert fid2 == fid and offset2 > offset and ndocs2 == ndocs + 2  # same row, two new documents
    assert rows("SELECT value FROM meta WHERE key = 'fts_dead'") == [("0",)]
    assert len(search("widgets")) == 3
    r = stats()
    assert (r["requests"], r["turns"]) == (3, 3)


def test_a_rewritten_or_replaced_file_is_read_from_the_start(sessions_dir: Path) -> None:
    s = session(sessions_dir)
    assert len(search("widgets")) == 2
    data = Path(s.path).read_bytes()
    Path(s.path).write_bytes(data.replace(b"widgets", b"gadgets"))  # same size, same inode, new bytes
    os.utime(s.path, ns=(1, 1))
    assert search("widgets") == [] and len(search("gadgets")) == 2
    ((dead,),) = rows("SELECT value FROM meta WHERE key = 'fts_dead'")
    assert int(dead) == 4
    tmp = s.path + ".new"
    Path(tmp).write_bytes(data[: data.index(b"\n") + 1])
    os.replace(tmp, s.path)  # a new inode, and smaller
    assert search("gadgets") == [] and stats()["requests"] == 0


def test_deleted_files_and_partial_lines(sessions_dir: Path) -> None:
    s1 = session(sessions_dir)
    s2 = session(sessions_dir, turns=1)
    assert len(search("widgets")) == 3
    os.unlink(s1.path)
    assert search("widgets") == [f"{s2.sid[:8]}#1"]
    assert rows("SELECT count(*) FROM files") == [(1,)]
    line = b'{"type":"message","id":"zz","parentId":null,"timestamp":"2026-03-02T10:00:00.000Z","message":{"role":"user","content":"late widgets"}}\n'
    s2.raw(line[:40])  # a write in progress
    assert len(search("widgets")) == 1
    s2.raw(line[40:])
    assert search("widgets") == [f"{s2.sid[:8]}#1", f"{s2.sid[:8]}#2"]


def test_each_sessions_dir_is_answered_from_its_own_rows(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    s1 = session(one)
    s2 = session(two)
    a = ama("sessions", "search", "widgets", "--all", "--json", "--session-dir", str(one)).stdout
    b = ama("sessions", "search", "widgets", "--all", "--json", "--session-dir", str(two)).stdout
    assert {json.loads(x)["session"] for x in a.splitlines()} == {s1.sid}
    assert {json.loads(x)["session"] for x in b.splitlines()} == {s2.sid}
    assert rows("SELECT count(*) FROM roots") == [(2,)]
    sa = ama_json("stats", "--all", "--session-dir", str(one))
    assert sa["sessions"] == 1 and sa["files"]["cached"] == 1


def test_sessions_list_is_the_same_from_the_index(sessions_dir: Path, tmp_path: Path) -> None:
    for i in range(5):
        session(sessions_dir, cwd=str(tmp_path), turns=1 + i % 2)
    parent = session(sessions_dir, cwd=str(tmp_path))
    parent.custom("2026-03-01T12:00:00.000Z", "ama.archive", {"archived": True})
    child = Builder(sessions_dir, str(tmp_path))
    raw = Path(child.path).read_bytes()
    Path(child.path).write_bytes(raw.replace(b'"cwd"', f'"parentSession":"{parent.sid}","cwd"'.encode(), 1))
    bad = sessions_dir / "--x--" / "bad.jsonl"
    bad.parent.mkdir()
    bad.write_bytes(b"{oops\n")
    for args in (["--all"], ["--all", "--archived"], ["--all", "--limit", "2"], []):
        both("sessions", "list", *args, "--json", cwd=str(tmp_path))
        both("sessions", "list", *args, cwd=str(tmp_path))
    page = json.loads(both("sessions", "list", "--all", "--limit", "2", "--json"))
    nxt = json.loads(
        both("sessions", "list", "--all", "--limit", "2", "--json", "--cursor", page["nextCursor"])
    )
    assert len(nxt["sessions"]) == 2
    archived = json.loads(both("sessions", "list", "--all", "--archived", "--json"))
    assert {s["id"] for s in archived["sessions"]} == {parent.sid, child.sid}


def test_stored_summaries_with_other_fields_are_read_again(sessions_dir: Path, tmp_path: Path) -> None:
    for _ in range(3):
        session(sessions_dir, cwd=str(tmp_path))
    want = both("sessions", "list", "--all", "--json")
    for change in ("json_set(summary, '$.gone', 1)", "json_remove(summary, '$.id')", "'not json'"):
        db = sqlite3.connect(D.path())
        db.execute(f"UPDATE file_data SET summary = {change} WHERE file_id = (SELECT min(file_id) FROM file_data)")
        db.commit()
        db.close()
        assert ama("sessions", "list", "--all", "--json").stdout == want, change


def test_a_damaged_index_falls_back_and_doctor_rebuilds_it(sessions_dir: Path) -> None:
    session(sessions_dir)
    want = search("widgets")
    Path(D.path()).write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(D.path() + suffix).unlink(missing_ok=True)
    p = ama("sessions", "search", "widgets", "--all", "--json")
    assert [json.loads(x)["ref"] for x in p.stdout.splitlines()] == want
    assert "doctor --reindex" in p.stderr
    d = ama_json("doctor", "--reindex", rc=None)  # exit 1: no model in the test env
    assert d["sections"]["index"]["reindexed"]["files"] == 1 and d["sections"]["index"]["ok"]
    p = ama("sessions", "search", "widgets", "--all", "--json")
    assert p.stderr == "" and [json.loads(x)["ref"] for x in p.stdout.splitlines()] == want


def test_a_newer_schema_is_left_alone(sessions_dir: Path) -> None:
    session(sessions_dir)
    search("widgets")
    db = sqlite3.connect(D.path())
    db.execute("INSERT INTO schema_migrations VALUES (99, 'm099_future', 'x')")
    db.commit()
    db.close()
    p = ama("stats", "--all", "--json")
    assert json.loads(p.stdout)["requests"] == 2 and "newer ama" in p.stderr
    assert rows("SELECT max(version) FROM schema_migrations") == [(99,)]


def test_a_locked_index_is_scanned_instead(sessions_dir: Path) -> None:
    session(sessions_dir)
    search("widgets")
    session(sessions_dir, turns=1)  # something to write
    holder = sqlite3.connect(D.path(), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        p = ama("sessions", "search", "widgets", "--all", "--json")  # waits busy_timeout, then scans
        assert len(p.stdout.splitlines()) == 3 and p.stderr == ""
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_doctor_reports_and_build_shows_progress_on_a_terminal(sessions_dir: Path) -> None:
    for _ in range(30):
        session(sessions_dir, turns=1)
    d = ama_json("doctor", rc=None)["sections"]["index"]
    assert d["exists"] is False
    master, slave = pty.openpty()
    p = subprocess.Popen(ama_cmd("doctor", "--reindex"), stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    out = p.communicate(timeout=120)[0].decode()
    os.close(master)
    assert b"indexing sessions [" in err and b"30/30 files" in err
    assert "rebuilt from 30 session file(s)" in out and "current: matches the session files" in out
    d = ama_json("doctor", rc=None)["sections"]["index"]
    assert (d["files"], d["documents"], d["staleFiles"]) == (30, 60, 0)


def test_refresh_in_process_counts(sessions_dir: Path) -> None:
    session(sessions_dir)
    db = D.connect()
    try:
        first = refresh(db, str(sessions_dir))
        second = refresh(db, str(sessions_dir))
    finally:
        db.close()
    assert (first.scanned, first.cached, second.scanned, second.cached) == (1, 0, 0, 1)


def test_concurrent_first_use(sessions_dir: Path) -> None:
    for _ in range(40):
        session(sessions_dir, turns=2)
    procs = [
        subprocess.Popen(ama_cmd("stats", "--all", "--json"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    reports = [json.loads(out) for out, _err in outs]
    for r in reports:
        r.pop("files")
    assert reports[0] == reports[1] == reports[2] and reports[0]["requests"] == 80
    assert all(err == "" for _out, err in outs)
    assert rows("SELECT count(*) FROM files") == [(40,)]


def test_the_vocabulary_table_holds_exactly_the_search_tables_terms(sessions_dir: Path) -> None:
    """Terms are added per new document, never by rescanning the index: after a build and
    after growth they are still exactly the search table's own vocabulary."""
    tricky = (
        "snake_case dotted.name path/to/file.py İstanbul ÉCOLE naïve e\u0301t\u00e9 東京タワー "
        "a\u3000b c\u00a0d e\u2028f g\x1ch tab\there new\nline 🙂smile 42x £5 x²"
    )
    s = Builder(sessions_dir, "/p")
    s.user(tricky, "2026-03-01T10:00:00.000Z")
    s.assistant("2026-03-01T10:00:05.000Z", "Reply: " + tricky.upper(), tools=[("grep", {"pattern": "ÄÖÜ_ß"})])
    db = D.connect()
    try:
        refresh(db, str(sessions_dir))

        def vocab() -> tuple[set[str], set[str]]:
            db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.v USING fts5vocab(main, fts, 'row')")
            return {t for (t,) in db.execute("SELECT term FROM terms")}, {
                t for (t,) in db.execute("SELECT term FROM temp.v")
            }

        terms, fts = vocab()
        assert terms == fts and {"snake", "case", "dotted", "file", "🙂smile"} <= terms
        s.result("2026-03-01T10:00:06.000Z", "grown: quux\u2003zork_frob")
        assert refresh(db, str(sessions_dir)).scanned == 1
        terms, fts = vocab()
        assert terms == fts and {"quux", "zork", "frob", "grown"} <= terms
    finally:
        db.close()


def test_a_build_stopped_before_its_vocabulary_still_finds_everything(sessions_dir: Path) -> None:
    """A large update records its terms in one pass at its end; a build killed before
    that leaves the mark set: search then reads the search table's own vocabulary, and
    the next update completes the terms."""
    s = Builder(sessions_dir, "/p")
    s.user("the flux capacitor", "2026-03-01T10:00:00.000Z")
    s.assistant("2026-03-01T10:00:05.000Z", "a reply")
    ama("stats", "--all")  # builds the index
    with sqlite3.connect(D.path()) as db:  # what a killed build leaves behind
        db.execute("DELETE FROM terms")
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('terms_dirty', '1')")
    assert search("capacitor") == search("flux") and len(search("capacitor")) == 1
    s.user("and the gigawatts", "2026-03-01T10:01:00.000Z")
    assert search("gigawatt") and search("capacitor")
    assert rows("SELECT value FROM meta WHERE key = 'terms_dirty'") == [("0",)]
    assert {"flux", "capacitor", "gigawatts", "reply"} <= {t for (t,) in rows("SELECT term FROM terms")}
