"""``ama sessions search``: the index path (FTS narrows, the matcher decides) and the scan
path (the raw prefilter narrows, the same matcher decides).  Both return the same hits in
the same order, with the same locators:

* sessions newest first (the timestamp of the last message line, then workspace, session
  id and path), hits in file order (entry, then its text before its tool calls);
* a user message is ``<id>#n`` (its ``--from`` number), any other entry ``<id>@k`` (the
  k-th entry of the file, see ``extract.py``);
* a hit on a branch the session was rewound away from is marked ``onBranch: false``.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable
from functools import partial

from ama.index.pattern import Pattern
from ama.index.timeutil import ts_ms
from ama.index.verify import doc_part

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:  # (a search without the index loads neither)
    import sqlite3
    from typing import Any

# ama.index.lines / extract (msgspec, the session reader) are imported when a line has to
# be read: a search the index answers with "nothing" does not load them.
ROLE_NAMES = ("user", "assistant", "tool")
ROLE_USER = 0

MAX_TERMS = 300  # a keyword token found in more terms than this does not narrow
MAX_CANDIDATES = 5000  # beyond this many candidate documents, look for them file by file
SNIPPET = 120


class SearchQuery:
    def __init__(
        self,
        pattern: Pattern,
        *,
        project: str | None = None,
        roles: set[int] | None = None,
        since_ms: int | None = None,
        limit: int = 20,
    ) -> None:
        self.pattern = pattern
        self.project = project  # None: every workspace
        self.roles = roles  # None: every role
        self.since_ms = since_ms
        self.limit = limit


class Hit:
    __slots__ = (
        "session_id",
        "path",
        "cwd",
        "k",
        "part",
        "n",
        "entry_id",
        "timestamp",
        "role",
        "text",
        "span",
        "on_branch",
        "short",
    )

    def __init__(
        self,
        *,
        session_id: str,
        path: str,
        cwd: str,
        k: int,
        part: int,
        n: int | None,
        entry_id: str,
        timestamp: str,
        role: int,
        text: str,
        span: tuple[int, int],
        on_branch: bool,
    ) -> None:
        self.session_id, self.path, self.cwd = session_id, path, cwd
        self.short = session_id[:8]  # the printed id: see abbreviate_hits()
        self.k, self.part, self.n, self.entry_id = k, part, n, entry_id
        self.timestamp, self.role, self.text, self.span, self.on_branch = (
            timestamp,
            role,
            text,
            span,
            on_branch,
        )

    @property
    def locator(self) -> str:
        return f"#{self.n}" if self.n is not None else f"@{self.k}"

    def snippet(self, width: int = SNIPPET) -> tuple[str, int, int]:
        """A one-line excerpt around the match and the match's position in it (control
        characters, including escape sequences' ESC, become spaces)."""
        text, (a, b) = self.text, self.span
        lead = min(a, max(20, (width - (b - a)) // 3))
        lo = a - lead
        hi = min(len(text), max(b, lo + width))
        s = "".join(" " if (c < " " or "\x7f" <= c <= "\x9f") else c for c in text[lo:hi])
        pre = "…" if lo > 0 else ""
        post = "…" if hi < len(text) else ""
        return pre + s + post, len(pre) + (a - lo), len(pre) + (b - lo)

    def to_json(self) -> dict:
        snip, a, b = self.snippet()
        return {
            "session": self.session_id,
            "ref": f"{self.short}{self.locator}",
            "locator": self.locator,
            "n": self.n,
            "entry": self.k,
            "entryId": self.entry_id,
            "timestamp": self.timestamp,
            "project": self.cwd,
            "path": self.path,
            "role": ROLE_NAMES[self.role],
            "onBranch": self.on_branch,
            "snippet": snip,
            "match": [a, b],
        }


def abbreviate_hits(hits: list[Hit], sessions_dir: str, paths: list[str] | None = None) -> None:
    """Give each hit the shortest session id prefix (8+) unique in ``sessions_dir``;
    ``paths``: its session files when the caller has just listed them (no second walk)."""
    if not hits:
        return
    from ama.session.layout import name_id
    from ama.session.shortid import abbreviate, known_session_ids

    known = known_session_ids(sessions_dir) if paths is None else {i for i in map(name_id, paths) if i}
    short = abbreviate([h.session_id for h in hits], among=known)
    for h in hits:
        h.short = short.get(h.session_id, h.short)


def _branch(parents: Any, leaf: int) -> set[int]:
    out = set()
    k = leaf
    while k and k not in out:
        out.add(k)
        k = parents[k - 1]
    return out


def _order_key(last_ms: int, cwd: str, sid: str, path: str) -> tuple:
    return (-last_ms, cwd, sid, path)


class _FileView:
    """What hits need of one file: its identity, entry offsets, user numbers and tree."""

    def __init__(
        self,
        path: str,
        sid: str,
        cwd: str,
        version: int,
        parents: Any,
        offs: Any,
        lens: Any,
        users: Any,
        leaf: int,
    ):
        self.path, self.sid, self.cwd, self.version = path, sid, cwd, version
        self.parents, self.offs, self.lens, self.leaf = parents, offs, lens, leaf
        self.user_n = {k: i + 1 for i, k in enumerate(users)}
        self._branch: set[int] | None = None

    def on_branch(self, k: int) -> bool:
        if self._branch is None:
            self._branch = _branch(self.parents, self.leaf)
        return k in self._branch


def _ident_of(line: bytes) -> tuple[str, str]:
    """``(entry id, timestamp)`` of a line, read with msgspec (the scans' decoder)."""
    from ama.index import lines as L

    try:
        obj = L.decode(line, with_text=False)
    except L.DecodeError:
        return "", ""
    if obj is L.NOT_OBJECT:
        return "", ""
    return (
        obj.id if isinstance(obj.id, str) else "",
        obj.timestamp if isinstance(obj.timestamp, str) else "",
    )


def _pair(a: str, b: str) -> tuple[str, str]:
    return a, b


def _hit(
    view: _FileView,
    k: int,
    part: int,
    role: int,
    text: str,
    q: SearchQuery,
    ident: Callable[[], tuple[str, str]],
) -> Hit | None:
    if q.roles is not None and role not in q.roles:
        return None
    span = q.pattern.find(text)
    if span is None:
        return None
    entry_id, ts = ident()
    if q.since_ms is not None and ts_ms(ts) < q.since_ms:
        return None
    return Hit(
        session_id=view.sid,
        path=view.path,
        cwd=view.cwd,
        k=k,
        part=part,
        n=view.user_n.get(k) if role == ROLE_USER else None,
        entry_id=entry_id,
        timestamp=ts,
        role=role,
        text=text,
        span=span,
        on_branch=view.on_branch(k),
    )


# --- scan ---------------------------------------------------------------------------------


def scan(root: str, q: SearchQuery) -> list[Hit]:
    """Hits by reading the files (at most ``limit + 1``, so callers can tell there are
    more): see ``search_scan.py``."""
    from ama.index.search_scan import scan as scan_files

    return scan_files(root, q)


# --- index --------------------------------------------------------------------------------


def fts_query(db: sqlite3.Connection, pattern: Pattern) -> str | None:
    """The FTS5 query that narrows candidates for a keyword, ``""`` when no document can
    match, or None when the index cannot narrow it (scan instead).  Kept in the query cache
    (``qcache``) while the index is unchanged: finding the terms that contain a keyword reads
    the whole vocabulary (~10 MB for 10,000 sessions)."""
    if pattern.keyword is None or not pattern.ascii or not pattern.tokens:
        return None
    import json

    from ama.index import qcache

    tokens = list(dict.fromkeys(pattern.tokens))
    key = json.dumps(["fts", tokens])
    gen, hit = qcache.get(db, key)
    if hit is not None:
        cached: str | None = json.loads(hit)
        return cached
    query = _fts_query(db, tokens)
    qcache.put(db, key, gen, json.dumps(query))
    return query


def _fts_query(db: sqlite3.Connection, tokens: list[str]) -> str | None:
    from ama.index import vocab

    groups = []
    table = "terms"
    dirty = db.execute("SELECT value FROM meta WHERE key = 'terms_dirty'").fetchone()
    if dirty is not None and dirty[0] == "1":  # a build was stopped before its vocabulary (update.py)
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_vocab USING fts5vocab(main, fts, 'row')")
        table = "temp.fts_vocab"
    # the vocabulary's text form when it is current: bytes.find instead of a scan of every
    # term (index/vocab.py); the same terms either way
    found = vocab.terms_for(db, tokens, MAX_TERMS + 1) if table == "terms" else None
    for tok in tokens:
        if found is not None:
            terms = found[tok]
        else:
            rows = db.execute(
                f"SELECT term FROM {table} WHERE instr(term, ?) OR (? AND instr(term, 'İ'))",
                (tok, "i" in tok),
            ).fetchall()
            terms = [t for (t,) in rows if tok in t.lower()]
        if not terms:
            return ""
        if len(terms) > MAX_TERMS:
            continue
        groups.append("(" + " OR ".join('"' + t.replace('"', '""') + '"' for t in terms) + ")")
    if not groups:
        return None
    return " AND ".join(groups)


def from_index(db: sqlite3.Connection, root_id: int, q: SearchQuery) -> list[Hit] | None:
    """Hits from the index, or None when the index cannot narrow this pattern."""
    fq = fts_query(db, q.pattern)
    if fq is None:
        return None
    if fq == "":
        return []
    # a keyword with few candidates: take them all; one with many: look file by file, newest
    # first, and stop as soon as there are enough hits
    found = db.execute("SELECT rowid FROM fts WHERE fts MATCH ? LIMIT ?", (fq, MAX_CANDIDATES + 1)).fetchall()
    by_file: dict[int, list[int]] | None = None
    if len(found) <= MAX_CANDIDATES:
        by_file = {}
        for (rowid,) in found:
            by_file.setdefault(rowid >> 32, []).append(rowid & 0xFFFFFFFF)
        if not by_file:
            return []
    where = "root_id = ? AND valid = 1"
    args: list[Any] = [root_id]
    if q.project is not None:
        where += " AND cwd = ?"
        args.append(q.project)
    files = []
    for fid, path, sid, cwd, last_ms in db.execute(
        f"SELECT id, path, session_id, cwd, last_ms FROM files WHERE {where}", args
    ):
        if by_file is None or fid in by_file:
            files.append((_order_key(last_ms, cwd, sid, path), fid))
    files.sort()
    hits: list[Hit] = []
    for _key, fid in files:
        if len(hits) > q.limit:
            break
        if by_file is not None:
            keys = by_file[fid]
        else:
            lo = fid << 32
            keys = [
                r & 0xFFFFFFFF
                for (r,) in db.execute(
                    "SELECT rowid FROM fts WHERE fts MATCH ? AND rowid BETWEEN ? AND ?",
                    (fq, lo, lo | 0xFFFFFFFF),
                )
            ]
            if not keys:
                continue
        row = db.execute(
            "SELECT f.path, f.session_id, f.cwd, f.version, f.leaf, d.parents, d.offs, d.lens, d.users"
            " FROM files f JOIN file_data d ON d.file_id = f.id WHERE f.id = ?",
            (fid,),
        ).fetchone()
        path, sid, cwd, version, leaf = row[:5]
        offs, lens = array("q", row[6]), array("I", row[7])
        view = _FileView(path, sid, cwd, version, array("I", row[5]), offs, lens, array("I", row[8]), leaf)
        try:
            f = open(path, "rb")  # noqa: SIM115 (closed by the with below)
        except OSError:
            continue
        with f:
            for key in sorted(keys):
                k, part = key >> 1, key & 1
                if not 0 < k <= len(offs):
                    continue
                line = os.pread(f.fileno(), lens[k - 1], offs[k - 1])
                light = doc_part(line, part)
                docs: list[tuple[int, int, str, Callable[[], tuple[str, str]]]]
                if light is not None:
                    role, text, eid, ts = light
                    docs = [(part, role, text, partial(_pair, eid, ts))]
                else:
                    from ama.index import lines as L

                    docs = [
                        (p, role, text, partial(_ident_of, line))
                        for p, role, text in L.docs_of_line(line, version)
                        if p == part
                    ]
                for p, role, text, ident in docs:
                    h = _hit(view, k, p, role, text, q, ident)
                    if h is not None:
                        hits.append(h)
                if len(hits) > q.limit:
                    break
    return hits
