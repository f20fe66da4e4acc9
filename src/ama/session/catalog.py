"""The session catalog: scan, lineage, list pages, resolve ids.

Identity is the header ``id`` plus its committed ``cwd`` (never a directory name).  Lineage
links a session to its parent: a fork's header ``parentSession`` or a sub-agent's
``ama.task`` entry.  A session is archived when it or any ancestor has its own archive
flag set; unarchiving an ancestor does not clear a descendant's own flag.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ama.errors import AmaError, InvalidArguments, NotFound
from ama.session.cursor import decode_cursor, encode_cursor, sort_key
from ama.session.layout import iter_session_files
from ama.session.reader import read_header
from ama.session.summary import SessionSummary, summarize_file

MIN_PREFIX = 4


def scan(sessions_dir: str, *, trash: bool = False) -> list[SessionSummary]:
    """Summaries of every session file (skipping unreadable files), lineage applied."""
    out = []
    for path in iter_session_files(sessions_dir, trash=trash):
        try:
            out.append(summarize_file(path))
        except OSError:
            continue
    apply_lineage(out)
    return out


def _parent_map(summaries: Iterable[SessionSummary]) -> dict[str, SessionSummary | None]:
    """path -> parent summary (None if it has none or the parent is unknown)."""
    items = list(summaries)
    by_id = {s.id: s for s in items if s.id}
    by_path = {os.path.abspath(s.path): s for s in items}
    out: dict[str, SessionSummary | None] = {}
    for s in items:
        ref = s.parent_session
        parent = None
        if ref:
            parent = by_id.get(ref) or by_path.get(os.path.abspath(ref))
            if parent is None and ref.endswith(".jsonl"):
                # a pi-style path whose directory moved: match by file name
                base = os.path.basename(ref)
                parent = next((p for p in items if os.path.basename(p.path) == base), None)
        out[s.path] = parent if parent is not s else None
    return out


def apply_lineage(summaries: list[SessionSummary]) -> None:
    parents = _parent_map(summaries)
    for s in summaries:
        archived = s.archived_own
        seen = {s.path}
        p = parents.get(s.path)
        while p is not None and not archived and p.path not in seen:
            seen.add(p.path)
            archived = p.archived_own
            p = parents.get(p.path)
        s.archived = archived


def descendants(summaries: list[SessionSummary], root: SessionSummary) -> list[SessionSummary]:
    parents = _parent_map(summaries)
    children: dict[str, list[SessionSummary]] = {}
    for s in summaries:
        p = parents.get(s.path)
        if p is not None:
            children.setdefault(p.path, []).append(s)
    out: list[SessionSummary] = []
    stack = [root]
    seen = {root.path}
    while stack:
        cur = stack.pop()
        for c in children.get(cur.path, ()):
            if c.path not in seen:
                seen.add(c.path)
                out.append(c)
                stack.append(c)
    return out


@dataclass
class Page:
    sessions: list[SessionSummary]
    next_cursor: str | None
    damaged: list[SessionSummary] = field(default_factory=list)  # files whose header is unreadable

    def to_json(self) -> dict[str, Any]:
        return {
            "sessions": [s.to_json() for s in self.sessions],
            "nextCursor": self.next_cursor,
            "damaged": [{"path": s.path, "error": s.header_error} for s in self.damaged],
        }


def list_page(
    summaries: list[SessionSummary],
    *,
    cwd: str | None,
    archived: bool = False,
    include_subagents: bool = False,
    limit: int = 50,
    cursor: str | None = None,
) -> Page:
    """One page of the catalog: ``lastMessageTime DESC, cwd ASC, id ASC``.

    ``cwd`` None lists every workspace.  ``archived`` lists only archived sessions
    (otherwise only active ones)."""
    if limit < 1:
        raise InvalidArguments(f"--limit must be at least 1, got {limit}")
    scope = {"cwd": cwd, "archived": archived, "subagents": include_subagents}
    after = decode_cursor(cursor, scope) if cursor else None
    damaged = [s for s in summaries if s.header_error is not None and (cwd is None)]
    rows = [
        s
        for s in summaries
        if s.header_error is None
        and (cwd is None or s.cwd == cwd)
        and s.archived == archived
        and (include_subagents or not s.subagent)
    ]
    rows.sort(key=lambda s: sort_key(s.last_message_ms, s.cwd, s.id))
    if after is not None:
        ak = sort_key(*after)
        rows = [s for s in rows if sort_key(s.last_message_ms, s.cwd, s.id) > ak]
    page = rows[:limit]
    next_cursor = None
    if len(rows) > limit:
        last = page[-1]
        next_cursor = encode_cursor(scope, (last.last_message_ms, last.cwd, last.id))
    return Page(page, next_cursor, damaged)


@dataclass
class Resolved:
    path: str
    id: str
    cwd: str


def resolve(sessions_dir: str, ref: str, *, trash: bool = False) -> Resolved:
    """Find the one session a user means by ``ref``: a path to a session file, a full
    id, or a unique id prefix of at least 4 characters (across all workspaces)."""
    if not ref:
        raise InvalidArguments("a session id is required")
    if ref.endswith(".jsonl") or os.sep in ref:
        if not os.path.isfile(ref):
            raise NotFound(f"no session file {ref}")
        h = read_header(ref)
        if h is None:
            raise AmaError("corrupt", f"{ref} has no readable session header (line 1 is damaged)")
        return Resolved(os.path.abspath(ref), h.id, h.cwd)
    if len(ref) < MIN_PREFIX:
        raise InvalidArguments(f"session id prefix {ref!r} is too short: give at least {MIN_PREFIX} characters")
    want = ref.lower()
    matches: list[Resolved] = []
    for path in iter_session_files(sessions_dir, trash=trash):
        h = read_header(path)
        if h is not None and h.id.lower().startswith(want):
            matches.append(Resolved(path, h.id, h.cwd))
    where = f"{sessions_dir}/.trash" if trash else sessions_dir
    if not matches:
        raise NotFound(f"no session {ref!r} in {where}")
    if len(matches) > 1:
        exact = [m for m in matches if m.id.lower() == want]
        if len(exact) == 1:
            return exact[0]
        lines = "\n".join(f"  {m.id}  {m.cwd}  {m.path}" for m in matches)
        raise AmaError(
            "ambiguous",
            f"session id {ref!r} matches {len(matches)} sessions; give more characters or the path:\n{lines}",
            data={"candidates": [m.__dict__ for m in matches]},
        )
    return matches[0]


def verify(path: str, expected: Resolved) -> None:
    """Re-check, just before acting, that the file still holds the session we resolved."""
    h = read_header(path)
    if h is None or h.id != expected.id or h.cwd != expected.cwd:
        raise AmaError(
            "conflict",
            f"{path} no longer holds session {expected.id} of {expected.cwd}; nothing was changed",
        )
