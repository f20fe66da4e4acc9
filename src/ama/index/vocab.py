"""The search vocabulary as text, for finding the terms that contain a keyword.

``terms`` holds every term of the search table, one row each; a keyword matches the terms
that contain it, so finding them is a scan of every row (~45 ns a row: ~20 ms for the
425,000 terms of 1,000 sessions, growing with the index).  ``terms_text`` holds the same
terms as newline-separated bytes in rows (a term never spans two): a large update (a build)
writes them all in rows of about ``CHUNK_BYTES``, a small update adds the terms it added as
one more row; a search reads the rows one at a time and finds each keyword run with
``bytes.find`` (about half the CPU time of the scan).

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


#: bytes per row of a rebuilt ``terms_text`` (rows end at a term's end; ~60,000 terms): a
#: search holds one row in memory at a time
CHUNK_BYTES = 640 << 10


def rebuild(db: sqlite3.Connection) -> None:
    """``terms_text`` from the whole of ``terms`` (in the caller's transaction), in key
    order, cut into rows of about ``CHUNK_BYTES``.  The vocabulary is read as one value
    (~11 MB for 10,000 sessions' million terms) and cut here: one pass over ``terms``."""
    db.execute(DDL)
    db.execute("DELETE FROM terms_text")
    (data,) = db.execute(
        "SELECT CAST(group_concat(term, char(10)) AS BLOB) FROM (SELECT term FROM terms ORDER BY term)"
    ).fetchone()
    if not data:
        return
    pos, n = 0, len(data)
    while pos < n:
        end = data.find(b"\n", pos + CHUNK_BYTES)
        if end < 0:
            end = n
        part = data[pos:end]
        db.execute("INSERT INTO terms_text (n, data) VALUES (?, ?)", (part.count(b"\n") + 1, part))
        pos = end + 1


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


def terms_for(db: sqlite3.Connection, tokens: list[str], limit: int) -> dict[str, list[str]] | None:
    """For each token (ASCII, lowercase) the terms whose lowercase form contains it, at most
    ``limit`` each: what ``search.fts_query`` takes from the scan of ``terms`` (including
    the terms with ``İ``, which lowercases to ``i`` and a combining dot).  One pass over the
    rows, one row in memory at a time; None when ``terms_text`` cannot be trusted."""
    if not consistent(db):
        return None
    found: dict[str, dict[str, None]] = {t: {} for t in tokens}
    for (data,) in db.execute("SELECT data FROM terms_text ORDER BY chunk"):
        for tok in tokens:
            _containing(bytes(data), tok, limit, found[tok])
    return {t: list(v) for t, v in found.items()}


def _containing(part: bytes, token: str, limit: int, out: dict[str, None]) -> None:
    needles = [token.encode()]
    if "i" in token:
        needles.append("İ".encode())
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
