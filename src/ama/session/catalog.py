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
from ama.session.layout import encode_cwd, iter_session_files, name_id
from ama.session.reader import header_problem, open_regular, read_header
from ama.session.summary import SessionSummary, summarize_file, unreadable_summary

MIN_PREFIX = 4


def scan(sessions_dir: str, *, trash: bool = False) -> list[SessionSummary]:
    """Summaries of every session file (an unreadable one as such), lineage applied."""
    out = []
    for path in iter_session_files(sessions_dir, trash=trash):
        try:
            out.append(summarize_file(path))
        except OSError as e:
            out.append(unreadable_summary(path, e))
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
    #: files of the scope whose header is damaged or that cannot be read at all
    damaged: list[SessionSummary] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "sessions": [s.to_json() for s in self.sessions],
            "nextCursor": self.next_cursor,
            "damaged": [damaged_json(s) for s in self.damaged],
        }


def damaged_json(s: SessionSummary) -> dict[str, Any]:
    return {
        "path": s.path,
        "state": "unreadable" if s.unreadable is not None else "damaged",
        "error": s.unreadable if s.unreadable is not None else s.header_error,
        "nameId": name_id(s.path),
        "size": s.size,
        "mtimeNs": s.mtime_ns,
    }


def _in_workspace_dir(path: str, cwd: str) -> bool:
    """Whether a file with no readable header sits in the directory the layout gives
    ``cwd`` (the only hint left of its workspace)."""
    return os.path.basename(os.path.dirname(path)) == encode_cwd(cwd)


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
    damaged = [
        s
        for s in summaries
        if s.problem is not None and not archived and (cwd is None or _in_workspace_dir(s.path, cwd))
    ]
    damaged.sort(key=lambda s: (-s.mtime_ns, s.path))
    rows = [
        s
        for s in summaries
        if s.problem is None
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


def file_problem(path: str) -> str | None:
    """Why the file at ``path`` cannot be listed as a session (``unreadable: Is a
    directory``, ``damaged header: line 1 is not valid JSON``), or None."""
    try:
        with open_regular(path) as f:
            first = f.readline(1 << 20)
    except OSError as e:
        return f"unreadable: {e.strerror or e}"
    problem = header_problem(first.rstrip(b"\n"))
    return None if problem is None else f"damaged header: {problem}"


def _damaged_error(ref: str, path: str, problem: str) -> AmaError:
    return AmaError(
        "corrupt",
        f"session {ref!r} is the file {path}, which is not a readable session ({problem}); "
        f"'ama sessions show {path}' shows what can be read, 'ama sessions rm {path}' moves it to the trash",
        data={"path": path, "problem": problem},
    )


def resolve(sessions_dir: str, ref: str, *, trash: bool = False, damaged: bool = False) -> Resolved:
    """Find the one session a user means by ``ref``: a path to a session file, a full
    id, or a unique id prefix of at least 4 characters (across all workspaces).

    A file whose header cannot be read matches by the id in its file name only; it is
    returned (with empty ``id`` and ``cwd``) when ``damaged`` is true, else refused with
    an error that says what is wrong with it."""
    if not ref:
        raise InvalidArguments("a session id is required")
    if ref.endswith(".jsonl") or os.sep in ref:
        if not os.path.lexists(ref):
            raise NotFound(f"no session file {ref}")
        h = read_header(ref)
        if h is None:
            problem = file_problem(ref) or "damaged header"
            if damaged:
                return Resolved(os.path.abspath(ref), "", "")
            raise AmaError("corrupt", f"{ref} is not a readable session ({problem})", data={"path": ref})
        return Resolved(os.path.abspath(ref), h.id, h.cwd)
    if len(ref) < MIN_PREFIX:
        raise InvalidArguments(f"session id prefix {ref!r} is too short: give at least {MIN_PREFIX} characters")
    want = ref.lower()
    matches: list[Resolved] = []
    unreadable: list[str] = []
    for path in iter_session_files(sessions_dir, trash=trash):
        h = read_header(path)
        if h is None:
            if name_id(path).lower().startswith(want):
                unreadable.append(path)
        elif h.id.lower().startswith(want):
            matches.append(Resolved(path, h.id, h.cwd))
    where = f"{sessions_dir}/.trash" if trash else sessions_dir
    if not matches and len(unreadable) == 1:
        if damaged:
            return Resolved(unreadable[0], "", "")
        raise _damaged_error(ref, unreadable[0], file_problem(unreadable[0]) or "damaged header")
    if not matches and unreadable:
        lines = "\n".join(f"  {p}  ({file_problem(p)})" for p in unreadable)
        raise AmaError("ambiguous", f"session id {ref!r} matches {len(unreadable)} damaged session files:\n{lines}")
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
