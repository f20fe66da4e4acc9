"""The query cache (``query_cache``, db.py m002): answers of read-only queries, valid while
the index's ``generation`` -- bumped by every write of rows (``update.write``) -- is the one
they were computed at.  ``ama stats`` keeps its reports here, ``ama sessions search`` the
terms a keyword narrows to.

A read takes one statement (the generation and the entry together, one snapshot); a write
is best effort: it never waits for a lock and never fails the query."""

from __future__ import annotations

import sqlite3

from ama.index.db import no_wait


def get(db: sqlite3.Connection, key: str) -> tuple[int, str | None]:
    """``(generation, value or None)`` of ``key``."""
    gen, value = db.execute(
        "SELECT g, (SELECT value FROM query_cache WHERE key = ? AND generation = g)"
        " FROM (SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'), 0) AS g)",
        (key,),
    ).fetchone()
    return gen, value


def put(db: sqlite3.Connection, key: str, generation: int, value: str) -> None:
    """Store ``value`` for ``key`` at ``generation`` (dropping the entries of other
    generations), unless another process is writing the index or it cannot be written."""
    with no_wait(db):
        try:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM query_cache WHERE generation != ?", (generation,))
            db.execute(
                "INSERT OR REPLACE INTO query_cache (key, generation, value) SELECT ?, ?, ?"
                " WHERE coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'), 0) = ?",
                (key, generation, value, generation),
            )
            db.execute("COMMIT")
        except sqlite3.Error:
            if db.in_transaction:
                db.execute("ROLLBACK")
