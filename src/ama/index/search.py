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
import sqlite3
from array import array
from typing import Any

from ama.index import lines as L
from ama.index.extract import FileState, extract, last_message_ms, start
from ama.index.pattern import Pattern
from ama.index.timeutil import ts_ms
from ama.session.layout import iter_session_files

MAX_TERMS = 300  # a keyword token found in more terms than this does not narrow
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
    )

    def __init__(self, **kw: Any) -> None:
        for k, v in kw.items():
            setattr(self, k, v)

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
            "ref": f"{self.session_id[:8]}{self.locator}",
            "locator": self.locator,
            "n": self.n,
            "entry": self.k,
            "entryId": self.entry_id,
            "timestamp": self.timestamp,
            "project": self.cwd,
            "path": self.path,
            "role": L.ROLE_NAMES[self.role],
            "onBranch": self.on_branch,
            "snippet": snip,
            "match": [a, b],
        }


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


def _hit(view: _FileView, line: bytes, k: int, part: int, role: int, text: str, q: SearchQuery) -> Hit | None:
    if q.roles is not None and role not in q.roles:
        return None
    span = q.pattern.find(text)
    if span is None:
        return None
    try:
        obj = L.decode(line, with_text=False)
    except L.DecodeError:
        return None
    ts = obj.timestamp if isinstance(obj.timestamp, str) else ""
    if q.since_ms is not None and ts_ms(ts) < q.since_ms:
        return None
    return Hit(
        session_id=view.sid,
        path=view.path,
        cwd=view.cwd,
        k=k,
        part=part,
        n=view.user_n.get(k) if role == L.ROLE_USER else None,
        entry_id=obj.id if isinstance(obj.id, str) else "",
        timestamp=ts,
        role=role,
        text=text,
        span=span,
        on_branch=view.on_branch(k),
    )


# --- scan ---------------------------------------------------------------------------------


def scan(root: str, q: SearchQuery) -> list[Hit]:
    """Hits by reading the files (at most ``limit + 1``, so callers can tell there are more)."""
    found = []
    for path in iter_session_files(os.path.abspath(root)):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        state, pos = start(data)
        if not isinstance(state, FileState) or (q.project is not None and state.cwd != q.project):
            continue
        key = last_message_ms(data, pos, len(data)) or state.last_ms
        found.append((_order_key(key, state.cwd, state.session_id, path), path, data))
    found.sort(key=lambda x: x[0])
    hits: list[Hit] = []
    for _key, path, data in found:
        if len(hits) > q.limit:
            break
        state, pos = start(data)
        assert isinstance(state, FileState)
        cand = q.pattern.candidate_lines(data, pos)
        if cand is not None and not cand:
            continue
        chunk = extract(data, pos, state, facts=False, runs=False, doc_lines=cand)
        view = _FileView(
            path,
            state.session_id,
            state.cwd,
            state.version,
            chunk.parents,
            chunk.offs,
            chunk.lens,
            chunk.users,
            state.leaf,
        )
        for k, part, role, text in chunk.docs:
            o, n = chunk.offs[k - 1], chunk.lens[k - 1]
            h = _hit(view, data[o : o + n], k, part, role, text, q)
            if h is not None:
                hits.append(h)
                if len(hits) > q.limit:
                    break
    return hits


# --- index --------------------------------------------------------------------------------


def fts_query(db: sqlite3.Connection, pattern: Pattern) -> str | None:
    """The FTS5 query that narrows candidates for a keyword, ``""`` when no document can
    match, or None when the index cannot narrow it (scan instead)."""
    if pattern.keyword is None or not pattern.ascii or not pattern.tokens:
        return None
    groups = []
    for tok in dict.fromkeys(pattern.tokens):
        rows = db.execute(
            "SELECT term FROM terms WHERE instr(term, ?) OR (? AND instr(term, 'İ'))",
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
    by_file: dict[int, list[int]] = {}
    for (rowid,) in db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (fq,)):
        by_file.setdefault(rowid >> 32, []).append(rowid & 0xFFFFFFFF)
    if not by_file:
        return []
    where, args = "root_id = ? AND valid = 1", [root_id]
    if q.project is not None:
        where += " AND cwd = ?"
        args.append(q.project)
    files = []
    for fid, path, sid, cwd, last_ms in db.execute(
        f"SELECT id, path, session_id, cwd, last_ms FROM files WHERE {where}", args
    ):
        if fid in by_file:
            files.append((_order_key(last_ms, cwd, sid, path), fid))
    files.sort()
    hits: list[Hit] = []
    for _key, fid in files:
        if len(hits) > q.limit:
            break
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
            for key in sorted(by_file[fid]):
                k, part = key >> 1, key & 1
                if not 0 < k <= len(offs):
                    continue
                line = os.pread(f.fileno(), lens[k - 1], offs[k - 1])
                for p, role, text in L.docs_of_line(line, version):
                    if p != part:
                        continue
                    h = _hit(view, line, k, part, role, text, q)
                    if h is not None:
                        hits.append(h)
                if len(hits) > q.limit:
                    break
    return hits
