"""``ama sessions list`` from the index: the page the catalog's scan would give, with the
same order, lineage, cursor and short ids, decoding only the stored summaries it prints.

Each file's stored summary (``file_data.summary``, the JSON of a
:class:`~ama.session.summary_data.SessionSummary`) has a row in ``catalog`` with what
ordering, filtering, lineage and short ids need (:func:`catalog_values`, written beside the
summary by the indexer).  A page is chosen from those rows with the catalog's own
:func:`~ama.session.catalog.select_page` and :func:`~ama.session.catalog.archived_flags`;
then only its summaries are decoded.  Files the indexer could not read (no row) are
summarized from the file, as the scan does.  When some file has no catalog row (an index
filled by an older ama), every summary is decoded as before (:func:`summaries`).
"""

from __future__ import annotations

import json
import sqlite3

from ama.index.db import IndexUnavailable
from ama.index.indexer import RefreshInfo, refresh
from ama.session.catalog import (  # (Listing, shown_ids: also for callers of this module)
    Listing,
    Page,
    PageRow,
    apply_lineage,
    archived_flags,
    listing_of,
    select_page,
    shown_ids,
)
from ama.session.layout import name_id
from ama.session.shortid import common_prefix
from ama.session.summary_data import SessionSummary

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:
    from typing import Any

#: the columns of ``catalog`` after ``file_id`` and ``root_id``, as :func:`catalog_values` gives them
CATALOG_COLUMNS = "session_id, cwd, last_ms, parent, archived_own, subagent, problem, mtime_ns, lid, lnid"
_C_COLUMNS = ", ".join("c." + c for c in CATALOG_COLUMNS.split(", "))
_MARKS = ", ".join("?" * len(CATALOG_COLUMNS.split(", ")))
#: a file's ``catalog`` row: ``(file_id, root_id, *catalog_values(summary))``
INSERT_CATALOG = f"INSERT OR REPLACE INTO catalog (file_id, root_id, {CATALOG_COLUMNS}) VALUES (?, ?, {_MARKS})"


def catalog_values(s: SessionSummary) -> tuple:
    """A summary's ``catalog`` row: the sort key, lineage and problem fields, and the
    lowercase id and file-name id that short ids are unique against."""
    return (
        s.id,
        s.cwd,
        s.last_message_ms,
        s.parent_session,
        int(s.archived_own),
        int(s.subagent),
        int(s.problem is not None),
        s.mtime_ns,
        s.id.lower(),
        name_id(s.path).lower(),
    )


def write_catalog(db: sqlite3.Connection, fid: int, s: SessionSummary) -> None:
    """Store the ``catalog`` row of file ``fid`` (its ``files`` row exists) from its summary."""
    db.execute(
        f"INSERT OR REPLACE INTO catalog (file_id, root_id, {CATALOG_COLUMNS})"
        f" SELECT id, root_id, {_MARKS} FROM files WHERE id = ?",
        (*catalog_values(s), fid),
    )


def fill_catalog(db: sqlite3.Connection) -> None:
    """``catalog`` rows for every stored summary that has exactly the fields of this ama's
    :class:`SessionSummary` (an upgrade: no file is read again); files without one are
    listed from their full summaries (:func:`summaries`) until they are indexed again."""
    fields = _fields()
    cur = db.execute("SELECT file_id, summary FROM file_data")
    while rows := cur.fetchmany(512):
        for fid, text in rows:
            try:
                d = json.loads(text)
            except ValueError:
                continue
            if isinstance(d, dict) and d.keys() == fields:
                write_catalog(db, fid, _summary(d))


def _summary(d: dict[str, Any]) -> SessionSummary:
    # made from its fields' dict without the keyword call of __init__ (which only assigns
    # them): ~3x less per session than SessionSummary(**d)
    s = object.__new__(SessionSummary)
    s.__dict__.update(d)
    return s


def _fields() -> frozenset[str]:
    return frozenset(SessionSummary.FIELDS)


def _unstored(path: str) -> SessionSummary:
    """A file the indexer could not read (it stores no row for it): listed as the scan does."""
    from ama.session.summary import summarize_file, unreadable_summary

    try:
        return summarize_file(path)
    except OSError as e:
        return unreadable_summary(path, e)


# --- one page ------------------------------------------------------------------------------


class _Unreadable(Exception):
    """A stored summary with other fields than this ama's (or not JSON)."""


def page(
    db: sqlite3.Connection,
    info: RefreshInfo,
    root: str,
    *,
    cwd: str | None,
    archived: bool = False,
    include_subagents: bool = False,
    limit: int = 50,
    cursor: str | None = None,
    short: bool = False,
) -> Listing:
    """What ``catalog.list_page(catalog.scan(root), ...)`` gives, from the index (refreshed);
    ``short``: with the short ids of its rows (``shortid.abbreviate`` among every session
    of the root)."""
    opts: dict[str, Any] = {
        "cwd": cwd,
        "archived": archived,
        "include_subagents": include_subagents,
        "limit": limit,
        "cursor": cursor,
    }
    try:
        return _page(db, info, root, opts, short)
    except _Unreadable:
        # summaries stored by an ama whose SessionSummary had other fields: read again
        info = refresh(db, root, force=True)
        try:
            return _page(db, info, root, opts, short)
        except _Unreadable:
            raise IndexUnavailable("the index holds unreadable catalog rows") from None


#: beyond this many sessions with a parent or an archive flag, lineage is computed over
#: every row in memory instead of looking parents up one by one
MAX_LINEAGE_ROWS = 1000


def _page(db: sqlite3.Connection, info: RefreshInfo, root: str, opts: dict[str, Any], short: bool) -> Listing:
    rid = info.root_id
    ncatalog, nown = db.execute(
        "SELECT (SELECT count(*) FROM catalog WHERE root_id = ?),"
        " (SELECT count(*) FROM catalog WHERE root_id = ? AND archived_own = 1)",
        (rid, rid),
    ).fetchone()
    if ncatalog == info.files:  # every file has its rows (none is unreadable), with a catalog row
        archived = _archived(db, rid, info.paths) if nown else set()
        if archived is not None:
            return _page_by_sql(db, info, opts, short, archived)
        return _page_of_rows(db, info, opts, short)
    (nfiles,) = db.execute("SELECT count(*) FROM files WHERE root_id = ?", (rid,)).fetchone()
    if ncatalog != nfiles:  # some file's row is older than the catalog table: decode them all
        return _page_of_summaries(db, info, root, opts, short)
    return _page_of_rows(db, info, opts, short)


def _page_of_summaries(
    db: sqlite3.Connection, info: RefreshInfo, root: str, opts: dict[str, Any], short: bool
) -> Listing:
    return listing_of(summaries(db, info, root), short=short, **opts)


def _page_by_sql(
    db: sqlite3.Connection, info: RefreshInfo, opts: dict[str, Any], short: bool, archived: set[int]
) -> Listing:
    """The page selected and ordered by SQLite (the ``catalog_order`` index), ties between
    equal keys (copies of one session) put in walk order as the scan's stable sort does."""
    from ama.session.catalog import in_workspace_dir, page_scope

    rid, limit, cwd = info.root_id, opts["limit"], opts["cwd"]
    scope, after = page_scope(cwd, opts["archived"], opts["include_subagents"], limit, opts["cursor"])
    where = "c.root_id = ? AND c.problem = 0"
    args: list[Any] = [rid]
    if cwd is not None:
        where += " AND c.cwd = ?"
        args.append(cwd)
    if not opts["include_subagents"]:
        where += " AND c.subagent = 0"
    if archived or opts["archived"]:
        where += " AND (c.file_id IN (SELECT value FROM json_each(?))) = ?"
        args += [json.dumps(sorted(archived)), int(opts["archived"])]
    if after is not None:
        where += " AND (c.last_ms < ? OR (c.last_ms = ? AND (c.cwd > ? OR (c.cwd = ? AND c.session_id > ?))))"
        args += [after[0], after[0], after[1], after[1], after[2]]
    select = f"SELECT c.file_id, c.last_ms, c.cwd, c.session_id, f.path FROM catalog c JOIN files f ON f.id = c.file_id WHERE {where}"
    rows = db.execute(
        f"{select} ORDER BY c.last_ms DESC, c.cwd, c.session_id LIMIT ?", [*args, limit + 1]
    ).fetchall()
    if len(rows) > limit:  # the whole group of the last key, which the page may cut
        last = rows[-1][1:4]
        group = db.execute(
            f"{select} AND c.last_ms = ? AND c.cwd = ? AND c.session_id = ?", [*args, *last]
        ).fetchall()
        rows = [r for r in rows if r[1:4] != last] + group
    if any(rows[i][1:4] == rows[i + 1][1:4] for i in range(len(rows) - 1)):
        pos = {p: i for i, p in enumerate(info.paths)}
        rows.sort(key=lambda r: (-r[1], r[2], r[3], pos.get(r[4], -1)))
    chosen = rows[:limit]
    next_cursor = None
    if len(rows) > limit:
        from ama.session.cursor import encode_cursor

        next_cursor = encode_cursor(scope, tuple(chosen[-1][1:4]))  # type: ignore[arg-type]
    damaged: list[tuple[int, str, int]] = []
    if not opts["archived"]:
        for fid, path, mtime in db.execute(
            "SELECT c.file_id, f.path, c.mtime_ns FROM catalog c JOIN files f ON f.id = c.file_id"
            " WHERE c.root_id = ? AND c.problem = 1",
            (rid,),
        ):
            if cwd is None or in_workspace_dir(path, cwd):
                damaged.append((-mtime, path, fid))
        damaged.sort()
    fids = [r[0] for r in chosen] + [d[2] for d in damaged]
    decoded = _decode(db, fids)
    for fid in fids:
        decoded[fid].archived = fid in archived
    result = Page([decoded[r[0]] for r in chosen], next_cursor, [decoded[d[2]] for d in damaged])
    return Listing(result, _short(db, rid, shown_ids(result), []) if short else None)


def _archived(db: sqlite3.Connection, rid: int, paths: list[str]) -> set[int] | None:
    """The file ids of the archived sessions (their own flag or an ancestor's), parents
    looked up as ``catalog.archived_flags`` finds them (by id: the last in walk order; by
    path; by a moved path's file name: the first in walk order); None when too many
    sessions have a parent or a flag for lookups one by one."""
    import os

    lineage = {
        fid: (ref, own)
        for fid, ref, own in db.execute(
            "SELECT file_id, parent, archived_own FROM catalog"
            " WHERE root_id = ? AND (archived_own = 1 OR parent IS NOT NULL)",
            (rid,),
        )
    }
    if len(lineage) > MAX_LINEAGE_ROWS:
        return None
    positions: dict[str, int] = {}

    def pos(path: str) -> int:
        if not positions:
            positions.update((p, i) for i, p in enumerate(paths))
        return positions.get(path, -1)

    found: dict[str, int | None] = {}

    def resolve(ref: str) -> int | None:
        if ref in found:
            return found[ref]
        rows = db.execute(
            "SELECT c.file_id, f.path FROM catalog c JOIN files f ON f.id = c.file_id"
            " WHERE c.root_id = ? AND c.session_id = ?",
            (rid, ref),
        ).fetchall()
        j = max(rows, key=lambda r: pos(r[1]))[0] if len(rows) > 1 else rows[0][0] if rows else None
        if j is None:
            row = db.execute(
                "SELECT id FROM files WHERE root_id = ? AND path = ?", (rid, os.path.abspath(ref))
            ).fetchone()
            j = row[0] if row else None
        if j is None and ref.endswith(".jsonl"):  # a pi-style path whose directory moved
            base = os.path.basename(ref)
            rows = db.execute(
                "SELECT id, path FROM files WHERE root_id = ? AND substr(path, -?) = ?",
                (rid, len(base) + 1, "/" + base),
            ).fetchall()
            j = min(rows, key=lambda r: pos(r[1]))[0] if rows else None
        found[ref] = j
        return j

    def parent(fid: int) -> int | None:
        ref = lineage.get(fid, (None, 0))[0]
        j = resolve(ref) if ref else None
        return j if j != fid else None

    out: set[int] = set()
    for fid, (_ref, own) in lineage.items():
        archived = bool(own)
        seen = {fid}
        p = parent(fid)
        while p is not None and not archived and p not in seen:
            seen.add(p)
            archived = bool(lineage.get(p, (None, 0))[1])
            p = parent(p)
        if archived:
            out.add(fid)
    return out


def _page_of_rows(db: sqlite3.Connection, info: RefreshInfo, opts: dict[str, Any], short: bool) -> Listing:
    """The page from every file's ``catalog`` row in memory (files with no row summarized
    from the file, as the scan does)."""
    stored = {
        row[0]: row
        for row in db.execute(
            f"SELECT f.path, f.id, {_C_COLUMNS} FROM files f JOIN catalog c ON c.file_id = f.id WHERE f.root_id = ?",
            (info.root_id,),
        )
    }
    paths = info.paths
    unstored: dict[int, SessionSummary] = {}
    rows: list[tuple] = []
    for i, p in enumerate(paths):
        r = stored.get(p)
        if r is None:
            s = unstored[i] = _unstored(p)
            r = (p, None, *catalog_values(s))  # (as a stored row: path, file id, the columns)
        rows.append(r)
    flags = archived_flags(
        [r[2] for r in rows], paths, [r[5] for r in rows], [r[6] for r in rows], absolute=True
    )
    keys: list[PageRow] = [
        (r[4], r[3], r[2], a, r[7], r[8], r[9], r[0]) for r, a in zip(rows, flags, strict=True)
    ]
    chosen, next_cursor, damaged = select_page(keys, **opts)
    decoded = _decode(db, [rows[i][1] for i in chosen + damaged if i not in unstored])

    def summary(i: int) -> SessionSummary:
        s = unstored.get(i) or decoded[rows[i][1]]
        s.archived = flags[i]
        return s

    result = Page([summary(i) for i in chosen], next_cursor, [summary(i) for i in damaged])
    if not short:
        return Listing(result, None)
    extra = [name_id(s.path).lower() for s in unstored.values()]  # their ids are ""
    return Listing(result, _short(db, info.root_id, shown_ids(result), extra))


def _decode(db: sqlite3.Connection, fids: list[int]) -> dict[int, SessionSummary]:
    """The stored summaries of some files (raises _Unreadable when one does not have exactly
    the fields of this ama's :class:`SessionSummary`)."""
    out: dict[int, SessionSummary] = {}
    fields = _fields() if fids else frozenset()
    for n in range(0, len(fids), 500):
        part = fids[n : n + 500]
        for fid, text in db.execute(
            f"SELECT file_id, summary FROM file_data WHERE file_id IN ({','.join('?' * len(part))})", part
        ):
            try:
                d = json.loads(text)
            except ValueError:
                raise _Unreadable from None
            if not isinstance(d, dict) or d.keys() != fields:
                raise _Unreadable
            out[fid] = _summary(d)
    return out


def _short(
    db: sqlite3.Connection, rid: int, shown: list[str], extra: list[str], min_len: int = 8
) -> dict[str, str]:
    """``shortid.abbreviate(shown, among=<every id and file-name id of the root>)``: each
    id's neighbours in the sorted set of lowercase ids, looked up in the ``catalog``
    indexes instead of sorting every id (``extra``: lowercase ids of files with no row)."""
    keys = sorted({i.lower() for i in shown if i})
    near: dict[str, tuple[str | None, str | None]] = {}
    if keys:  # one statement for the page: each id's two neighbours, by the two indexes
        for k, lo, hi in db.execute(_NEIGHBOURS, (json.dumps(keys), rid)):
            near[k] = (lo, hi)
    out: dict[str, str] = {}
    for i in shown:
        if not i:
            continue
        k = i.lower()
        lo, hi = near[k]
        others = [x for x in (lo, hi) if x]
        others += [x for x in extra if x and x != k]  # few: compare with each
        n = max([common_prefix(k, x) for x in others], default=0)
        out[i] = i[: max(min_len, n + 1)]
    return out


#: per lowercase id of a JSON list (?1), the greatest id and file-name id of root ?2 below
#: it and the least above it (``catalog_lid``, ``catalog_lnid``)
_NEIGHBOURS = (
    "SELECT j.value,"
    " (SELECT max(x) FROM (SELECT max(lid) x FROM catalog WHERE root_id = ?2 AND lid < j.value"
    " UNION ALL SELECT max(lnid) FROM catalog WHERE root_id = ?2 AND lnid < j.value)),"
    " (SELECT min(x) FROM (SELECT min(lid) x FROM catalog WHERE root_id = ?2 AND lid > j.value"
    " UNION ALL SELECT min(lnid) FROM catalog WHERE root_id = ?2 AND lnid > j.value))"
    " FROM json_each(?1) j"
)


# --- every summary (an index from before the catalog table) --------------------------------


def _load(db: sqlite3.Connection, info: RefreshInfo) -> list[SessionSummary]:
    cur = db.execute(
        "SELECT f.path, d.summary FROM files f JOIN file_data d ON d.file_id = f.id WHERE f.root_id = ?",
        (info.root_id,),
    )
    # the stored objects decoded as one JSON array per batch
    fields = _fields()
    stored: dict[str, SessionSummary] = {}
    while rows := cur.fetchmany(512):
        decoded = json.loads("[" + ",".join(summary for _path, summary in rows) + "]")
        for (path, _text), d in zip(rows, decoded, strict=True):
            if not isinstance(d, dict) or d.keys() != fields:
                raise TypeError(f"the stored summary of {path} has other fields")
            stored[path] = _summary(d)
    return [stored[p] if p in stored else _unstored(p) for p in info.paths]


def summaries(db: sqlite3.Connection, info: RefreshInfo, root: str) -> list[SessionSummary]:
    """Every session file's summary with lineage applied (what ``catalog.scan`` returns)."""
    try:
        out = _load(db, info)
    except (TypeError, ValueError, KeyError):
        # summaries stored by an ama whose SessionSummary had other fields: read again
        info = refresh(db, root, force=True)
        try:
            out = _load(db, info)
        except (TypeError, ValueError, KeyError) as e:
            raise IndexUnavailable(f"the index holds unreadable catalog rows ({e})") from None
    apply_lineage(out)
    return out
