"""The index build read in forked workers (index/build.py): it stores exactly what the
build in one process stores, answers like the scan on any JSON layout, and a build killed
half-way leaves a usable index and no worker behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ama.index import db as D
from ama.index.indexer import refresh
from tests.conftest import FIXTURES, ROOT, ama_cmd
from tests.index.helpers import Builder, ama, restyle, usage

FORK = {"AMA_INDEX_WORKERS": "3"}  # fork even for a few small files
TABLES = (
    "files",
    "file_data",
    "stat_requests",
    "stat_turns",
    "stat_tools",
    "stat_external",
    "stat_latency",
    "runs",
    "run_steps",
    "terms",
    "catalog",
)
WORDS = [
    "parser",
    "PARSER",
    "snake_case",
    "e_c",
    "o-b",
    "foo-bar",
    "v2.0",
    "0.1",
    "42x",
    "stanbul",
    "istanbul",
    "kelvin",
    "k",
    "x2",
    "na",
    "naïve",
    "src/lexer.py",
    "read {",
    "zzz-none",
    "/lex(er|ing)/",
]


def corpus(sessions_dir: Path, tmp_path: Path, style: str = "compact") -> None:
    """Sessions with the texts that test where a term starts and ends, stats, runs, a
    damaged line, a header still being written, an unreadable name and pi's files."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    for i in range(4):
        s = Builder(sessions_dir, str(ws), created=f"2026-03-0{i + 1}T09:00:00.000Z")
        s.model_change(f"2026-03-0{i + 1}T09:00:01.000Z", "anthropic", "claude", channel="api")
        s.user(f"Fix the PARSER in snake_case{i} for foo-bar v2.0.1", f"2026-03-0{i + 1}T10:00:00.000Z")
        s.assistant(
            f"2026-03-0{i + 1}T10:00:05.000Z",
            "İstanbul and the \u212aelvin sign, x² 42x naïve über-fast",
            u=usage(100 * i, 10, 5, 0, cost=0.01 * i),
            stop="toolUse",
            tools=[("read", {"path": "src/lexer.py"}), ("bash", {"command": "ls -la"})],
        )
        s.result(f"2026-03-0{i + 1}T10:00:06.000Z", "def lex(text):\n    return text.split()\n" * 20)
        s.custom(
            f"2026-03-0{i + 1}T10:00:07.000Z",
            "ama.run",
            {
                "executionId": f"run-{i}",
                "status": "COMPLETED",
                "terminalReason": "stop",
                "stepIndex": 1,
                "createdAt": f"2026-03-0{i + 1}T10:00:00.000Z",
                "updatedAt": f"2026-03-0{i + 1}T10:00:07.000Z",
            },
        )
        s.assistant(f"2026-03-0{i + 1}T10:00:10.000Z", "the lexing is done", u=usage(5, 5))
        if i == 1:
            s.raw(b'{"type":"message", not json\n')
            s.user("after the damaged line", "2026-03-02T10:01:00.000Z")
    for name in ("v1-session.jsonl", "v2-session.jsonl", "v3-session.jsonl"):
        shutil.copy(FIXTURES / "pi" / name, sessions_dir / name)
    if style != "compact":
        restyle(sessions_dir, style)
    (sessions_dir / "pending.jsonl").write_bytes(b'{"type":"session","version":3,"id":"abc')
    (sessions_dir / "dir.jsonl").mkdir()


def dump(db_path: str) -> dict[str, list]:
    db = sqlite3.connect(db_path)
    try:
        out = {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in TABLES}
        db.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, fts, 'row')")
        out["fts"] = db.execute("SELECT term, doc FROM temp.v ORDER BY term").fetchall()
        out["meta"] = db.execute(
            "SELECT key, value FROM meta WHERE key NOT IN ('generation') ORDER BY key"
        ).fetchall()
        return out
    finally:
        db.close()


def build(sessions_dir: Path, db_path: str, monkeypatch: pytest.MonkeyPatch, workers: str) -> None:
    monkeypatch.setenv("AMA_INDEX_WORKERS", workers)
    db = D.connect(db_path)
    try:
        info = refresh(db, str(sessions_dir))
        assert info.scanned == len(info.paths)
    finally:
        db.close()


@pytest.mark.parametrize("style", ["compact", "spaced", "shuffled"])
def test_the_forked_build_stores_what_one_process_stores(
    sessions_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, style: str
) -> None:
    corpus(sessions_dir, tmp_path, style)
    build(sessions_dir, str(tmp_path / "one.db"), monkeypatch, "1")
    build(sessions_dir, str(tmp_path / "forked.db"), monkeypatch, "3")
    one, forked = dump(str(tmp_path / "one.db")), dump(str(tmp_path / "forked.db"))
    assert one == forked
    assert len(one["files"]) == 8 and one["runs"] and one["stat_requests"] and one["fts"]
    # every file the build read has its row of the listing (else `sessions list` decodes
    # every stored summary: the same page, slowly)
    assert len(one["catalog"]) == len(one["files"])
    assert {t for (t,) in one["terms"]} == {t for t, _n in one["fts"]}
    with sqlite3.connect(str(tmp_path / "forked.db")) as db:  # a build merges 8 segments at a time
        assert db.execute("SELECT v FROM fts_config WHERE k = 'automerge'").fetchone() == (8,)


def answers(cwd: Path) -> dict[str, str]:
    """What every reader of the index prints, through the index (forked build)."""
    out = {}
    for w in WORDS:
        out[f"search {w}"] = ama("sessions", "search", w, "--all", "--json", "--limit", "100", env=FORK).stdout
    out["stats"] = ama("stats", "--all", "--json", env=FORK).stdout
    out["list"] = ama("sessions", "list", "--all", "--json", env=FORK).stdout
    out["runs"] = ama("runs", "list", "--json", cwd=cwd, env=FORK).stdout
    return out


def scanned(cwd: Path) -> dict[str, str]:
    out = {}
    for w in WORDS:
        out[f"search {w}"] = ama("sessions", "search", w, "--all", "--json", "--limit", "100", "--no-cache").stdout
    out["stats"] = ama("stats", "--all", "--json", "--no-cache").stdout
    out["list"] = ama("sessions", "list", "--all", "--json", "--no-cache").stdout
    out["runs"] = ama("runs", "list", "--json", "--no-cache", cwd=cwd).stdout
    return out


def _same(indexed: dict[str, str], scan: dict[str, str]) -> None:
    for key in indexed:
        a, b = indexed[key], scan[key]
        if key == "stats":  # the report names where it came from
            a, b = json.loads(a), json.loads(b)
            a.pop("files")
            b.pop("files")
        assert a == b, key


@pytest.mark.parametrize("style", ["compact", "spaced", "shuffled"])
def test_the_forked_build_answers_like_the_scan(sessions_dir: Path, tmp_path: Path, style: str) -> None:
    corpus(sessions_dir, tmp_path, style)
    ws = tmp_path / "ws"
    ama("doctor", "--reindex", env=FORK, rc=None)
    indexed, scan = answers(ws), scanned(ws)
    _same(indexed, scan)
    hits = {w: len(indexed[f"search {w}"].splitlines()) for w in WORDS}
    # matches that straddle punctuation, underscores and non-ASCII letters are found
    assert hits["snake_case"] == hits["e_c"] == hits["o-b"] == hits["foo-bar"] == hits["v2.0"] == 4
    assert hits["0.1"] == 4 and hits["42x"] == 4 and hits["na"] >= 4
    assert hits["stanbul"] == hits["kelvin"] == 4  # İ lowers to i + a dot; the Kelvin sign to k
    assert hits["istanbul"] == 0 and hits["x2"] == 0 and hits["zzz-none"] == 0
    assert hits["parser"] == hits["PARSER"] >= 5  # pi's v3 file too


def test_an_appended_turn_after_a_forked_build(sessions_dir: Path, tmp_path: Path) -> None:
    corpus(sessions_dir, tmp_path)
    ama("doctor", "--reindex", env=FORK, rc=None)
    s = Builder(sessions_dir, str(tmp_path / "ws"), created="2026-03-09T09:00:00.000Z")
    s.user("a quokka_in_the_parser appears", "2026-03-09T10:00:00.000Z")
    _same(answers(tmp_path / "ws"), scanned(tmp_path / "ws"))
    assert "quokka" in ama("sessions", "search", "kka_in_the_pa", "--all", env=FORK).stdout


def _group_alive(pgid: int) -> list[int]:
    """Processes of the group that are not zombies (a zombie has exited)."""
    alive = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(name))
    return alive


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_forked_build_leaves_a_usable_index_and_no_workers(sessions_dir: Path, tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gen_sessions.py"), "--out", str(sessions_dir), "--sessions", "150",
         "--json", "spaced", "--vocab", "20000", "--cwd", str(tmp_path)],
        check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )  # fmt: skip
    env = {**os.environ, "AMA_INDEX_WORKERS": "2", "AMA_INDEX_COMMIT_BYTES": "100000"}
    p = subprocess.Popen(
        ama_cmd("doctor", "--reindex"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    committed = 0
    while time.monotonic() < deadline and p.poll() is None:
        try:
            with sqlite3.connect(f"file:{D.path()}?mode=ro", uri=True, timeout=0.1) as db:
                (committed,) = db.execute("SELECT count(*) FROM files").fetchone()
        except sqlite3.Error:
            committed = 0
        if committed >= 3:
            break
        time.sleep(0.005)
    assert p.poll() is None, "the build ended before it could be killed"
    assert len(_group_alive(p.pid)) >= 3  # the parent and its two workers
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    deadline = time.monotonic() + 20
    while _group_alive(p.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _group_alive(p.pid) == []  # the workers left with their parent
    with sqlite3.connect(D.path()) as db:
        (n,) = db.execute("SELECT count(*) FROM files").fetchone()
        (dirty,) = db.execute("SELECT value FROM meta WHERE key = 'terms_dirty'").fetchone()
    assert 3 <= n < 150 and dirty == "1"
    # the next reader completes the build and answers like the scan
    for word in ("network", "parser error", "src/"):
        half = ama("sessions", "search", word, "--all", "--json", "--limit", "5", env={"AMA_INDEX_WORKERS": "2"})
        full = ama("sessions", "search", word, "--all", "--json", "--limit", "5", "--no-cache")
        assert half.stdout == full.stdout and half.stdout, word
    with sqlite3.connect(D.path()) as db:
        assert db.execute("SELECT count(*) FROM files").fetchone() == (150,)
        assert db.execute("SELECT value FROM meta WHERE key = 'terms_dirty'").fetchone() == ("0",)


def test_rows_written_together_store_what_rows_written_file_by_file_store(
    sessions_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An update holds many files' documents and stats rows and writes them together
    (update._Rows); committing after every file writes them file by file: the same rows."""
    corpus(sessions_dir, tmp_path, "spaced")
    monkeypatch.setenv("AMA_INDEX_COMMIT_BYTES", "1")
    build(sessions_dir, str(tmp_path / "each.db"), monkeypatch, "1")
    monkeypatch.delenv("AMA_INDEX_COMMIT_BYTES")
    build(sessions_dir, str(tmp_path / "together.db"), monkeypatch, "3")
    each, together = dump(str(tmp_path / "each.db")), dump(str(tmp_path / "together.db"))
    assert each == together and each["stat_requests"] and each["runs"]


def test_a_large_update_of_grown_and_new_files_answers_like_the_scan(sessions_dir: Path, tmp_path: Path) -> None:
    """Appended turns (stats added to the file's rows, a run record replaced) and new files
    in one large update, its rows written together between small commits."""
    corpus(sessions_dir, tmp_path)
    ws = tmp_path / "ws"
    ama("doctor", "--reindex", env=FORK, rc=None)
    grown = sorted(p for p in sessions_dir.rglob("*.jsonl") if p.is_file() and "ws" in p.parent.name)[:2]
    assert len(grown) == 2
    for i, path in enumerate(grown):
        with open(path, "ab") as f:  # a turn in the same day's buckets, and the run finishing
            f.write(
                json.dumps(
                    {"type": "message", "id": f"g{i}01", "parentId": None, "timestamp": "2026-03-01T10:30:00.000Z",
                     "message": {"role": "user", "content": f"grown quokka_{i} turn", "timestamp": 0}}
                ).encode() + b"\n"
            )  # fmt: skip
    for i in range(3):
        s = Builder(sessions_dir, str(ws), created=f"2026-03-0{i + 5}T09:00:00.000Z")
        s.model_change(f"2026-03-0{i + 5}T09:00:01.000Z", "anthropic", "claude", channel="api")
        s.user(f"new wombat_{i} question", f"2026-03-0{i + 5}T10:00:00.000Z")
        s.assistant(f"2026-03-0{i + 5}T10:00:05.000Z", "an answer", u=usage(7, 3, cost=0.5))
    info = json.loads(
        ama("stats", "--all", "--json", env={**FORK, "AMA_INDEX_COMMIT_BYTES": "2000"}).stdout
    )["files"]
    assert info["scanned"] == 6, info  # and dir.jsonl, which every update tries again
    with sqlite3.connect(D.path()) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'terms_dirty'").fetchone() == ("0",)
    _same(answers(ws), scanned(ws))
    assert "quokka_1" in ama("sessions", "search", "quokka_", "--all", env=FORK).stdout
    assert ama("sessions", "search", "wombat_2", "--all", env=FORK).stdout


def test_a_rebuild_makes_the_search_table_without_column_sizes(sessions_dir: Path, tmp_path: Path) -> None:
    """The search table keeps no per-document token counts (nothing ranks); an index whose
    table has them (made before INDEX_FORMAT 6) gets a new one when it is rebuilt."""
    corpus(sessions_dir, tmp_path)
    ws = tmp_path / "ws"

    def table() -> str:
        with sqlite3.connect(D.path()) as db:
            (sql,) = db.execute("SELECT sql FROM sqlite_schema WHERE name = 'fts'").fetchone()
            assert db.execute("SELECT count(*) FROM sqlite_schema WHERE name = 'fts_docsize'").fetchone() == (
                0 if "columnsize=0" in sql else 1,
            )
            return str(sql)

    ama("stats", "--all", env=FORK)
    assert "columnsize=0" in table()
    with sqlite3.connect(D.path()) as db:  # the table as m001 made it, in an index of format 4
        db.execute("DROP TABLE fts")
        db.execute(
            "CREATE VIRTUAL TABLE fts USING fts5(text, content='', detail=none,"
            " tokenize='unicode61 remove_diacritics 0')"
        )
        db.execute("UPDATE meta SET value = '4' WHERE key = 'format'")
    assert "columnsize=0" not in table()
    _same(answers(ws), scanned(ws))
    assert "columnsize=0" in table()
    with sqlite3.connect(D.path()) as db:
        assert db.execute("SELECT v FROM fts_config WHERE k = 'automerge'").fetchone() == (8,)
