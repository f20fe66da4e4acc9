"""The write side of :mod:`ama.index.indexer`: read changed files into the index.

Imported only when something changed, so that a reader of a current index loads neither
msgspec nor the session reader.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from array import array
from collections.abc import Callable

from ama.index import extract as X
from ama.index import vocab
from ama.index.facts import open_turn
from ama.index.indexer import RefreshInfo, changes, meta
from ama.index.listing import write_catalog
from ama.index.rows import INDEX_FORMAT
from ama.index.timeutil import Days, tz_key
from ama.session.summary import SessionSummary, summarize_bytes

TAIL = 64
DEAD_LIMIT = 50_000
COMMIT_BYTES = 32 << 20


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


def wipe(db: sqlite3.Connection) -> None:
    """Drop every row (all roots): the next refresh reads everything again."""
    db.execute("DELETE FROM files")
    db.execute("DELETE FROM roots")
    db.execute("INSERT INTO fts (fts) VALUES ('delete-all')")
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
) -> RefreshInfo:
    db.execute("BEGIN IMMEDIATE")
    try:
        # the generation (the query cache's key) moves with the first rows committed: a
        # write stopped between two of its commits leaves no cached answer current
        _set_meta(db, "generation", str(int(meta(db, "generation") or 0) + 1))
        rid, changed, removed, rebuild = changes(db, root, disk)
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
        if rid is None:
            rid = db.execute("INSERT INTO roots (path) VALUES (?)", (root,)).lastrowid
            assert rid is not None
        info = RefreshInfo(rid, cached=len(disk) - len(changed))
        for p in removed:
            _drop(db, rid, p)
            info.removed += 1
        bar = Progress(len(changed), sum(disk[p][0] for p in changed)) if progress else None
        days = Days()
        # a large update (a build) leaves the vocabulary for one pass at its end
        deferred = meta(db, "terms_dirty") == "1" or sum(disk[p][0] for p in changed) > COMMIT_BYTES
        if deferred:
            _set_meta(db, "terms_dirty", "1")
        texts: list[str] | None = None if deferred else []
        pending = 0
        for p in changed:
            nbytes = _index_file(db, rid, p, days, texts)
            info.scanned += 1
            if on_file is not None:
                on_file(p)
            if bar is not None:
                bar.advance(disk[p][0])
            pending += nbytes
            if pending > COMMIT_BYTES:
                db.execute("COMMIT")
                db.execute("BEGIN IMMEDIATE")
                pending = 0
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
    itself in a temporary contentless table, so that the two tables agree)."""
    if not texts:
        return
    db.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.new_docs USING fts5(text, content='', detail=none,"
        " tokenize='unicode61 remove_diacritics 0')"
    )
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.new_vocab USING fts5vocab(temp, new_docs, 'row')")
    db.executemany("INSERT INTO temp.new_docs (text) VALUES (?)", ((t,) for t in texts))
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


def _index_file(db: sqlite3.Connection, rid: int, path: str, days: Days, texts: list[str] | None) -> int:
    """Read one changed file into the index; returns the bytes read."""
    row = db.execute(f"SELECT {_ROW} WHERE f.root_id = ? AND f.path = ?", (rid, path)).fetchone()
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if row is not None and (row[1], row[13], row[2]) == (st.st_size, st.st_mtime_ns, st.st_ino):
                return 0  # another process indexed it meanwhile (between two of our commits)
            data = f.read()
    except OSError:
        _drop(db, rid, path)
        return 0
    summary = summarize_bytes(data, path, size=st.st_size, mtime_ns=st.st_mtime_ns)
    summary_json = json.dumps(vars(summary), ensure_ascii=False)  # a flat dataclass: no asdict() copy
    grown = (
        row is not None
        and row[6] == 1
        and row[2] == st.st_ino
        and st.st_size > row[1]
        and row[7] is not None
        and data.startswith(row[4])
        and data[max(0, row[3] - len(row[5])) : row[3]] == row[5]
    )
    if grown:
        assert row is not None
        fid, pos, ndocs = row[0], row[3], row[12]
        state: X.FileState | str | None = X.load_state(row[7])
        parents, offs, lens, users = (
            array("I", row[8]),
            array("q", row[9]),
            array("I", row[10]),
            array("I", row[11]),
        )
        head = row[4]
    else:
        if row is not None:
            _drop(db, rid, path)
        state, pos = X.start(data)
        parents, offs, lens, users = array("I"), array("q"), array("I"), array("I")
        ndocs = 0
        fid = db.execute(
            "INSERT INTO files (root_id, path, size, mtime_ns, ino, offset, valid) VALUES (?, ?, 0, 0, 0, 0, 0)",
            (rid, path),
        ).lastrowid
        assert fid is not None
        db.execute("INSERT INTO file_data (file_id) VALUES (?)", (fid,))
        head = data[:pos]
    if not isinstance(state, X.FileState):
        valid = 2 if state == X.HEADER_PENDING else 0
        db.execute(
            "UPDATE files SET size=?, mtime_ns=?, ino=?, offset=?, valid=? WHERE id=?",
            (st.st_size, st.st_mtime_ns, st.st_ino, pos, valid, fid),
        )
        db.execute("UPDATE file_data SET summary=? WHERE file_id=?", (summary_json, fid))
        _write_meta(db, fid, summary)
        return len(data)
    chunk = X.extract(data, pos, state, days=days)
    parents.extend(chunk.parents)
    offs.extend(chunk.offs)
    lens.extend(chunk.lens)
    users.extend(chunk.users)
    if chunk.docs:
        db.executemany(
            "INSERT INTO fts (rowid, text) VALUES (?, ?)",
            (((fid << 32) | (k << 1) | part, text) for k, part, _role, text in chunk.docs),
        )
        if texts is not None:
            texts.extend(text for _k, _p, _r, text in chunk.docs)
    _write_facts(db, fid, chunk)
    turn = open_turn(state.stats)
    end = chunk.end
    db.execute(
        "UPDATE files SET size=?, mtime_ns=?, ino=?, offset=?, valid=1, session_id=?, cwd=?, version=?, last_ms=?,"
        " leaf=?, ndocs=?, ot_day=?, ot_provider=?, ot_model=?, ot_channel=?, ot_ms=? WHERE id=?",
        (
            st.st_size,
            st.st_mtime_ns,
            st.st_ino,
            end,
            state.session_id,
            state.cwd,
            state.version,
            state.last_ms,
            state.leaf,
            ndocs + len(chunk.docs),
            *(turn if turn is not None else (None,) * 5),
            fid,
        ),
    )
    db.execute(
        "UPDATE file_data SET head=?, tail=?, summary=?, state=?, parents=?, offs=?, lens=?, users=? WHERE file_id=?",
        (
            head,
            data[max(len(head), end - TAIL) : end],
            summary_json,
            X.dump_state(state),
            parents.tobytes(),
            offs.tobytes(),
            lens.tobytes(),
            users.tobytes(),
            fid,
        ),
    )
    _write_meta(db, fid, summary)
    return len(data) - pos


def _write_meta(db: sqlite3.Connection, fid: int, summary: SessionSummary) -> None:
    """The catalog metadata columns, from the summary (one derivation: ``ama.session.meta``),
    and the file's ``catalog`` row (``index/listing.py``)."""
    db.execute(
        "UPDATE files SET error_count=?, pending_interaction=?, task_status=? WHERE id=?",
        (summary.error_count, summary.pending_interaction, summary.task_status, fid),
    )
    write_catalog(db, fid, summary)


def _write_facts(db: sqlite3.Connection, fid: int, chunk: X.Chunk) -> None:
    fx = chunk.facts
    if fx.req:
        db.executemany(
            "INSERT INTO stat_requests VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT (file_id, day, kind, provider, model, channel) DO UPDATE SET"
            " requests=requests+excluded.requests, input=input+excluded.input, output=output+excluded.output,"
            " cache_read=cache_read+excluded.cache_read, cache_write=cache_write+excluded.cache_write,"
            " cost_units=cost_units+excluded.cost_units, priced=priced+excluded.priced,"
            " errors=errors+excluded.errors, retries=retries+excluded.retries",
            ((fid, *key, *vals) for key, vals in fx.req.items()),
        )
    if fx.turns:
        db.executemany(
            "INSERT INTO stat_turns VALUES (?,?,?,?,?,?,?)"
            " ON CONFLICT (file_id, day, provider, model, channel) DO UPDATE SET"
            " turns=turns+excluded.turns, duration_ms=duration_ms+excluded.duration_ms",
            ((fid, *key, *vals) for key, vals in fx.turns.items()),
        )
    if fx.tools:
        db.executemany(
            "INSERT INTO stat_tools VALUES (?,?,?,?) ON CONFLICT (file_id, day, name) DO UPDATE SET"
            " calls=calls+excluded.calls",
            ((fid, day, name, n) for (day, name), n in fx.tools.items()),
        )
    if fx.external:
        db.executemany(
            "INSERT INTO stat_external VALUES (?,?,?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT (file_id, day, agent, session_id) DO UPDATE SET"
            " turns=turns+excluded.turns, cost_units=cost_units+excluded.cost_units, input=input+excluded.input,"
            " output=output+excluded.output, cache_read=cache_read+excluded.cache_read,"
            " cache_write=cache_write+excluded.cache_write, requests=requests+excluded.requests",
            ((fid, *key, *vals) for key, vals in fx.external.items()),
        )
    if fx.latency:
        db.executemany(
            "INSERT INTO stat_latency VALUES (?,?,?,?,?,?,?,?,?,?)", ((fid, *r) for r in fx.latency)
        )
    for rec in chunk.runs.values():
        db.execute(
            "INSERT OR REPLACE INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                fid,
                rec.execution_id,
                rec.status,
                rec.terminal_reason,
                rec.error_code,
                rec.step_index,
                rec.created_ms,
                rec.updated_ms,
                rec.completed_ms,
                rec.prompt,
                rec.model,
                rec.start_k,
                rec.end_k,
                rec.last_k,
                rec.steps,
                int(rec.superseded),
                json.dumps(rec.anomalies),
                None if rec.details is None else json.dumps(rec.details),
            ),
        )
    if chunk.steps:
        db.executemany(
            "INSERT OR REPLACE INTO run_steps VALUES (?,?,?,?,?,?,?,?,?)", ((fid, *s) for s in chunk.steps)
        )
