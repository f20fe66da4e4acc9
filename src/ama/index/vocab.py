"""The search vocabulary as text, for finding the terms that contain a keyword.

``terms`` holds every term of the search table, one row each; a keyword matches the terms
that contain it, so finding them is a scan of every row (~45 ns a row: ~20 ms for the
425,000 terms of 1,000 sessions, growing with the index).  ``terms_text`` holds the same
terms as newline-separated bytes in a few rows (a term never spans two): the terms a small update added are one more
row, a large update (a build) writes them all as one; a search reads the rows and finds the
keyword with ``bytes.find`` (~2 ms for the same vocabulary).

The two must hold the same terms: ``terms_text`` is used only when its rows count as many
terms as ``terms`` has (an ama that does not know this table adds terms without it, or
an index made before it has none); otherwise search scans ``terms`` as before.  Terms never
contain a newline (the tokenizer splits on white space).
"""

from __future__ import annotations

import sqlite3

DDL = "CREATE TABLE IF NOT EXISTS terms_text (chunk INTEGER PRIMARY KEY, n INTEGER NOT NULL, data BLOB NOT NULL)"

_PACK = "SELECT count(*), CAST(group_concat(term, char(10)) AS BLOB) FROM ({}) HAVING count(*) > 0"


def consistent(db: sqlite3.Connection) -> bool:
    """Whether ``terms_text`` holds as many terms as ``terms`` (False without the table)."""
    try:
        (have,) = db.execute("SELECT coalesce(sum(n), 0) FROM terms_text").fetchone()
    except sqlite3.OperationalError:  # no such table: an index from before it
        return False
    (want,) = db.execute("SELECT count(*) FROM terms").fetchone()
    return bool(have == want)


def rebuild(db: sqlite3.Connection) -> None:
    """``terms_text`` from the whole of ``terms`` (in the caller's transaction)."""
    db.execute(DDL)
    db.execute("DELETE FROM terms_text")
    db.execute("INSERT INTO terms_text (n, data) " + _PACK.format("SELECT term FROM terms"))


def add_new(db: sqlite3.Connection, source: str) -> None:
    """Before ``source``'s terms are inserted into ``terms``: the ones it does not hold yet
    as one more row (only when ``consistent``; else ``rebuild`` after the insert)."""
    db.execute(
        "INSERT INTO terms_text (n, data) "
        + _PACK.format(f"SELECT term FROM {source} WHERE term NOT IN (SELECT term FROM terms)")
    )


def clear(db: sqlite3.Connection) -> None:
    db.execute(DDL)
    db.execute("DELETE FROM terms_text")


def load(db: sqlite3.Connection) -> list[bytes] | None:
    """The rows of ``terms_text`` (terms separated by ``\n``), or None when they cannot be
    trusted.  A term never spans two rows."""
    if not consistent(db):
        return None
    return [bytes(data) for (data,) in db.execute("SELECT data FROM terms_text ORDER BY chunk")]


def containing(text: list[bytes], token: str, limit: int) -> list[str]:
    """The terms of ``text`` (from ``load``) whose lowercase form contains ``token`` (ASCII,
    lowercase), at most ``limit``: what ``search.fts_query`` takes from the scan of ``terms``
    (including the terms with ``İ``, which lowercases to ``i`` and a combining dot)."""
    out: dict[str, None] = {}
    needles = [token.encode()]
    if "i" in token:
        needles.append("İ".encode())
    for part in text:
        for needle in needles:
            i = part.find(needle)
            while i >= 0 and len(out) < limit:
                start = part.rfind(b"\n", 0, i) + 1
                end = part.find(b"\n", i)
                if end < 0:
                    end = len(part)
                term = part[start:end].decode("utf-8", "replace")
                if token in term.lower():
                    out[term] = None
                i = part.find(needle, end)
    return list(out)
