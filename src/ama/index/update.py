"""The write side of :mod:`ama.index.indexer`: read changed files into the index.

Imported only when something changed, so that a reader of a current index loads neither
msgspec nor the session reader.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence

from ama.index import build, vocab
from ama.index import record as R
from ama.index.indexer import Checked, RefreshInfo, changes, meta
from ama.index.listing import INSERT_CATALOG
from ama.index.rows import INDEX_FORMAT
from ama.index.timeutil import Days, tz_key
from ama.session.summary import SessionSummary

DEAD_LIMIT = 50_000
COMMIT_BYTES = 32 << 20


def _commit_bytes() -> int:
    """Bytes of files read between two commits (``AMA_INDEX_COMMIT_BYTES`` sets it: tests)."""
    v = os.environ.get("AMA_INDEX_COMMIT_BYTES", "")
    return int(v) if v.isdigit() and int(v) > 0 else COMMIT_BYTES


AUTOMERGE = 8


def summary_fields() -> str:
    return ",".join(SessionSummary.FIELDS)


def _set_meta(db: sqlite3.Connection, key: str, value: str) -> None:
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


class Progress:
    """A one-line progress bar on stderr (only used on a terminal)."""

    def __init__(self, total_files: int, total_bytes: int) -> None:
        self.files = total_files
        self.total = max(1, total_bytes)
        self.done_files = 0
        self.done = 0
        self._last = 0.0
        self.shown = False

    def advance(self, nbytes: int) -> None:
        self.done_files += 1
        self.done += nbytes
        now = time.monotonic()
        if now - self._last < 0.1 and self.done_files < self.files:
            return
        self._last = now
        frac = min(1.0, self.done / self.total)
        bar = "#" * int(frac * 30)
        sys.stderr.write(
            f"\rindexing sessions [{bar:<30}] {frac * 100:3.0f}%  {self.done_files}/{self.files} files"
        )
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


#: the search table as a rebuild makes it (docs/search.md): contentless, detail=none,
#: unicode61 without diacritic folding, and no per-document token counts (``columnsize=0``:
#: nothing ranks; a build writes ~10 % less).  ``m001_initial`` made it with those counts:
#: an index is rebuilt once when ``INDEX_FORMAT`` changes, and the rebuild makes it anew.
FTS_DDL = (
    "CREATE VIRTUAL TABLE fts USING fts5(text, content='', detail=none,"
    " tokenize='unicode61 remove_diacritics 0', columnsize=0)"
)


def wipe(db: sqlite3.Connection) -> None:
    """Drop every row (all roots): the next refresh reads everything again.  The search
    table is made anew (``FTS_DDL``)."""
    db.execute("DELETE FROM files")
    db.execute("DELETE FROM roots")
    db.execute("DROP TABLE fts")
    db.execute(FTS_DDL)
    # merge 8 segments at a time rather than 4: a build rewrites its documents fewer times
    # (16 % fewer instructions in SQLite for 1,000 sessions), for a few more segments
    db.execute("INSERT INTO fts (fts, rank) VALUES ('automerge', ?)", (AUTOMERGE,))
    db.execute("DELETE FROM terms")
    vocab.clear(db)
    _set_meta(db, "fts_dead", "0")
    _set_meta(db, "terms_dirty", "0")


def write(
    db: sqlite3.Connection,
    root: str,
    disk: dict[str, tuple[int, int, int]],
    *,
    progress: bool,
    on_file: Callable[[str], None] | None,
    force: bool = False,
    checked: Checked | None = None,
) -> RefreshInfo:
    """Bring the rows of ``root`` to ``disk``'s state; ``checked``: what the caller's
    :func:`changes` found (used when no write came between)."""
    # an update makes many short-lived objects and no garbage cycles: the cyclic collector
    # would only cost time (~10 % of a build's writing process)
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _write(db, root, disk, progress=progress, on_file=on_file, force=force, checked=checked)
    finally:
        if collecting:
            gc.enable()


def _write(
    db: sqlite3.Connection,
    root: str,
    disk: dict[str, tuple[int, int, int]],
    *,
    progress: bool,
    on_file: Callable[[str], None] | None,
    force: bool,
    checked: Checked | None,
) -> RefreshInfo:
    db.execute("BEGIN IMMEDIATE")
    try:
        generation = meta(db, "generation")
        if checked is not None and checked.generation == generation:  # no write since
            rid, changed, removed, rebuild = checked.rid, checked.changed, checked.removed, checked.rebuild
        else:
            rid, changed, removed, rebuild = changes(db, root, disk)
        # the generation (the query cache's key) moves with the first rows committed: a
        # write stopped between two of its commits leaves no cached answer current
        _set_meta(db, "generation", str(int(generation or 0) + 1))
        rebuild = rebuild or force or meta(db, "summary_fields") != summary_fields()
        dead = int(meta(db, "fts_dead") or 0)
        live = db.execute("SELECT coalesce(sum(ndocs), 0) FROM files").fetchone()[0]
        if rebuild or (dead > DEAD_LIMIT and dead > live):
            wipe(db)
            _set_meta(db, "tz", tz_key())
            _set_meta(db, "format", INDEX_FORMAT)
            _set_meta(db, "summary_fields", summary_fields())
            rid = None
            changed, removed = sorted(disk), []
        fresh_root = rid is None
        if rid is None:
            rid = db.execute("INSERT INTO roots (path) VALUES (?)", (root,)).lastrowid
            assert rid is not None
        info = RefreshInfo(rid, cached=len(disk) - len(changed))
        for p in removed:
            _drop(db, rid, p)
            info.removed += 1
        total = sum(disk[p][0] for p in changed)
        bar = Progress(len(changed), total) if progress else None
        days = Days()
        # a large update (a build) leaves the vocabulary for one pass at its end
        commit_bytes = _commit_bytes()  # (an update that commits on the way is large)
        deferred = meta(db, "terms_dirty") == "1" or total > commit_bytes
        if deferred:
            _set_meta(db, "terms_dirty", "1")
        texts: list[str] | None = None if deferred else []
        # files the index holds are continued here (they need their saved state); new ones
        # are read by workers when there are enough of them (index/build.py)
        old: list[str] = []
        new: list[str] = []
        for p in changed:
            held = (
                not fresh_root
                and db.execute("SELECT 1 FROM files WHERE root_id = ? AND path = ?", (rid, p)).fetchone()
            )
            (old if held else new).append(p)
        workers = build.workers_for(sum(disk[p][0] for p in new))
        pending = 0
        rows = _Rows()

        def stored(rec: R.FileRecord, known: bool = True) -> None:
            nonlocal pending
            _store(db, rid, rec, texts, known, rows)
            info.scanned += 1
            if on_file is not None:
                on_file(rec.path)
            if bar is not None:
                bar.advance(disk[rec.path][0])
            pending += rec.size
            if rows.text_chars > ROWS_TEXT:
                rows.write(db)
            if pending > commit_bytes:
                rows.write(db)
                db.execute("COMMIT")
                db.execute("BEGIN IMMEDIATE")
                pending = 0

        for p in old:
            stored(R.read(p, _prior(db, rid, p), days))
        with contextlib.closing(build.records(new, workers, days)) as recs:
            for rec in recs:
                # another process may have indexed this very file between two of our commits
                seen = db.execute(
                    "SELECT size, mtime_ns, ino FROM files WHERE root_id = ? AND path = ?", (rid, rec.path)
                ).fetchone()
                if seen is not None and seen == (rec.size, rec.mtime_ns, rec.ino):
                    rec = R.FileRecord(rec.path, R.SAME)
                stored(rec, seen is not None)
        rows.write(db)
        if texts is None:
            _all_terms(db)
        else:
            _add_terms(db, texts)
        _set_meta(db, "generation", str(int(meta(db, "generation") or 0) + 1))
        db.execute("COMMIT")
        if bar is not None:
            bar.close()
        return info
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def _add_terms(db: sqlite3.Connection, texts: list[str]) -> None:
    """Record the terms of a few newly added documents in ``terms`` (tokenized by SQLite
    itself in a temporary contentless table like the search table, so that the two agree)."""
    if not texts:
        return
    db.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.new_docs USING fts5(text, content='', detail=none,"
        " tokenize='unicode61 remove_diacritics 0')"
    )
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.new_vocab USING fts5vocab(temp, new_docs, 'row')")
    db.executemany("INSERT INTO temp.new_docs (rowid, text) VALUES (?, ?)", enumerate(texts, 1))
    matched = vocab.consistent(db)
    if matched:  # the new terms as one more row of the text form (index/vocab.py)
        vocab.add_new(db, "temp.new_vocab")
    db.execute("INSERT OR IGNORE INTO terms (term) SELECT term FROM temp.new_vocab")
    if not matched:
        vocab.rebuild(db)
    db.execute("INSERT INTO temp.new_docs (new_docs) VALUES ('delete-all')")


def _all_terms(db: sqlite3.Connection) -> None:
    """After a large update: the whole search table's vocabulary into ``terms``, once.

    Reading the vocabulary costs time in proportion to the whole index, so doing it at
    every intermediate commit made a build quadratic; tokenizing every new document a
    second time costs as much as indexing it.  Until this runs (the ``terms_dirty`` mark is
    committed with the first rows, so a build that was killed leaves it set), search takes
    its terms from the search table itself (``search.fts_query``)."""
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_vocab USING fts5vocab(main, fts, 'row')")
    db.execute("INSERT OR IGNORE INTO terms (term) SELECT term FROM temp.fts_vocab")
    vocab.rebuild(db)
    _set_meta(db, "terms_dirty", "0")


def _drop(db: sqlite3.Connection, rid: int, path: str) -> None:
    row = db.execute("SELECT id, ndocs FROM files WHERE root_id = ? AND path = ?", (rid, path)).fetchone()
    if row is None:
        return
    db.execute("DELETE FROM files WHERE id = ?", (row[0],))
    if row[1]:
        dead = int(meta(db, "fts_dead") or 0) + row[1]
        _set_meta(db, "fts_dead", str(dead))


_ROW = (
    "f.id, f.size, f.ino, f.offset, d.head, d.tail, f.valid, d.state, d.parents, d.offs, d.lens, d.users, f.ndocs,"
    " f.mtime_ns FROM files f JOIN file_data d ON d.file_id = f.id"
)


def _prior(db: sqlite3.Connection, rid: int, path: str) -> R.Prior | None:
    row = db.execute(f"SELECT {_ROW} WHERE f.root_id = ? AND f.path = ?", (rid, path)).fetchone()
    return None if row is None else R.Prior(*row)


#: the columns of ``files`` and ``file_data`` a record sets (in ``_store``'s order)
_FILE_COLUMNS = (
    "size, mtime_ns, ino, offset, valid, session_id, cwd, version, last_ms, leaf, ndocs, ot_day, ot_provider,"
    " ot_model, ot_channel, ot_ms, error_count, pending_interaction, task_status"
)
_DATA_COLUMNS = "head, tail, summary, state, parents, offs, lens, users"


def _marks(columns: str) -> str:
    return ", ".join("?" * len(columns.split(",")))


def _sets(columns: str) -> str:
    return ", ".join(f"{c.strip()} = ?" for c in columns.split(","))


_INSERT_FILE = f"INSERT INTO files (root_id, path, {_FILE_COLUMNS}) VALUES (?, ?, {_marks(_FILE_COLUMNS)})"
_INSERT_DATA = f"INSERT INTO file_data (file_id, {_DATA_COLUMNS}) VALUES (?, {_marks(_DATA_COLUMNS)})"
_UPDATE_FILE = f"UPDATE files SET {_sets(_FILE_COLUMNS)} WHERE id = ?"
_UPDATE_DATA = f"UPDATE file_data SET {_sets(_DATA_COLUMNS)} WHERE file_id = ?"


def _store(
    db: sqlite3.Connection, rid: int, rec: R.FileRecord, texts: list[str] | None, known: bool, rows: _Rows
) -> None:
    """Write one file's record (``index/record.py``): its rows of ``files``, ``file_data``
    and ``catalog`` at once, its documents and stats facts into ``rows`` (written with those
    of other files); ``known``: the index may have rows for the file (else there is nothing
    to drop)."""
    status = rec.status
    if status == R.SAME:
        return
    if known and (status == R.GONE or rec.fresh):
        _drop(db, rid, rec.path)
    if status == R.GONE:
        return
    values = (
        rec.size,
        rec.mtime_ns,
        rec.ino,
        rec.end,
        rec.valid,
        rec.session_id,
        rec.cwd,
        rec.version,
        rec.last_ms,
        rec.leaf,
        rec.ndocs,
        *(rec.turn if rec.turn is not None else (None,) * 5),
        rec.error_count,
        rec.pending_interaction,
        rec.task_status,
    )
    data = (rec.head, rec.tail, rec.summary, rec.state, rec.parents, rec.offs, rec.lens, rec.users)
    if rec.fresh:
        fid = db.execute(_INSERT_FILE, (rid, rec.path, *values)).lastrowid
        assert fid is not None
        db.execute(_INSERT_DATA, (fid, *data))
    else:
        (fid,) = db.execute("SELECT id FROM files WHERE root_id = ? AND path = ?", (rid, rec.path)).fetchone()
        db.execute(_UPDATE_FILE, (*values, fid))
        db.execute(_UPDATE_DATA, (*data, fid))
    # the file's row of the listing (index/listing.py)
    db.execute(INSERT_CATALOG, (fid, rid, *rec.catalog))
    if rec.docs:
        rows.add_docs(fid, rec.docs)
        if texts is not None:
            texts.extend(t for _key, t in rec.docs)
    rows.add_facts(fid, rec)


#: characters of documents held before they are written
ROWS_TEXT = 8 << 20


class _Rows:
    """Rows of many files for the search table and the stats and run tables, written
    together (one ``executemany`` per table) before each commit, or when their documents
    hold more than ``ROWS_TEXT`` characters.

    Writing a file's documents right after its other rows made the search table write
    its pending terms out as a new segment for every file (SQLite opens a savepoint for a
    statement with triggers or foreign keys, such as the insert into ``files``, and FTS5
    writes out what it holds at every savepoint), and merge all those small segments.
    Held together, the documents of many files fill one segment (FTS5 writes one when it
    holds about 1 MB of terms) and the statements run once per table."""

    __slots__ = ("docs", "text_chars", "tables")

    def __init__(self) -> None:
        self.docs: list[tuple[int, str]] = []
        self.text_chars = 0
        self.tables: dict[str, list[tuple]] = {sql: [] for sql in _FACT_SQL.values()}

    def add_docs(self, fid: int, docs: Sequence[tuple[int, str]]) -> None:
        hi = fid << 32
        self.docs += [(hi | key, text) for key, text in docs]
        self.text_chars += sum(map(len, (text for _key, text in docs)))

    def add_facts(self, fid: int, rec: R.FileRecord) -> None:
        for field, sql in _FACT_SQL.items():
            rows = getattr(rec, field)
            if rows:
                self.tables[sql] += [(fid, *r) for r in rows]

    def write(self, db: sqlite3.Connection) -> None:
        for sql, rows in self.tables.items():
            if rows:
                db.executemany(sql, rows)
                rows.clear()
        if self.docs:
            db.executemany("INSERT INTO fts (rowid, text) VALUES (?, ?)", self.docs)
            self.docs = []
        self.text_chars = 0


#: per field of a FileRecord, the statement that writes its rows (with the file id first)
_FACT_SQL = {
    "req": "INSERT INTO stat_requests VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
    " ON CONFLICT (file_id, day, kind, provider, model, channel) DO UPDATE SET"
    " requests=requests+excluded.requests, input=input+excluded.input, output=output+excluded.output,"
    " cache_read=cache_read+excluded.cache_read, cache_write=cache_write+excluded.cache_write,"
    " cost_units=cost_units+excluded.cost_units, priced=priced+excluded.priced,"
    " errors=errors+excluded.errors, retries=retries+excluded.retries",
    "turns": "INSERT INTO stat_turns VALUES (?,?,?,?,?,?,?)"
    " ON CONFLICT (file_id, day, provider, model, channel) DO UPDATE SET"
    " turns=turns+excluded.turns, duration_ms=duration_ms+excluded.duration_ms",
    "tools": "INSERT INTO stat_tools VALUES (?,?,?,?) ON CONFLICT (file_id, day, name) DO UPDATE SET"
    " calls=calls+excluded.calls",
    "external": "INSERT INTO stat_external VALUES (?,?,?,?,?,?,?,?,?,?,?)"
    " ON CONFLICT (file_id, day, agent, session_id) DO UPDATE SET"
    " turns=turns+excluded.turns, cost_units=cost_units+excluded.cost_units, input=input+excluded.input,"
    " output=output+excluded.output, cache_read=cache_read+excluded.cache_read,"
    " cache_write=cache_write+excluded.cache_write, requests=requests+excluded.requests",
    "latency": "INSERT INTO stat_latency VALUES (?,?,?,?,?,?,?,?,?,?)",
    "runs": "INSERT OR REPLACE INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "steps": "INSERT OR REPLACE INTO run_steps VALUES (?,?,?,?,?,?,?,?,?)",
}
