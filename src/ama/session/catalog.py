"""The session catalog: scan, lineage, list pages, resolve ids.

Identity is the header ``id`` plus its committed ``cwd`` (never a directory name).  Lineage
links a session to its parent: a fork's header ``parentSession`` or a sub-agent's
``ama.task`` entry.  A session is archived when it or any ancestor has its own archive
flag set; unarchiving an ancestor does not clear a descendant's own flag.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from ama.errors import AmaError, InvalidArguments, NotFound
from ama.session.cursor import decode_cursor, encode_cursor
from ama.session.layout import encode_cwd, iter_session_files, name_id
from ama.session.summary_data import SessionSummary

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:
    from typing import Any

# the session reader (msgspec) is imported by the functions that read files: the index's
# ``sessions list`` pages through stored rows with this module and loads neither

MIN_PREFIX = 4


def scan(sessions_dir: str, *, trash: bool = False) -> list[SessionSummary]:
    """Summaries of every session file (an unreadable one as such), lineage applied."""
    from ama.session.summary import summarize_file, unreadable_summary

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
    parents = parent_positions([s.id for s in items], [s.path for s in items], [s.parent_session for s in items])
    return {s.path: (None if j is None else items[j]) for s, j in zip(items, parents, strict=True)}


def parent_positions(
    ids: Sequence[str], paths: Sequence[str], refs: Sequence[str | None], *, absolute: bool = False
) -> list[int | None]:
    """The position of each session's parent among them, or None.  A reference (a header's
    ``parentSession`` or a task's) names the session with that id (the last one, when a
    file was copied), else the file at that path, else -- a pi-style path whose directory
    moved -- the first file of that name; never the session itself.  ``absolute``: the
    paths are absolute and normalized already (the index's): none goes through
    ``os.path.abspath``."""
    parent: list[int | None] = [None] * len(ids)
    if not any(refs):
        return parent
    by_id: dict[str, int] = {}
    for i, sid in enumerate(ids):
        if sid:
            by_id[sid] = i
    by_path = {(p if absolute else os.path.abspath(p)): i for i, p in enumerate(paths)}
    for i, ref in enumerate(refs):
        if not ref:
            continue
        j = by_id.get(ref)
        if j is None:
            j = by_path.get(os.path.abspath(ref))
        if j is None and ref.endswith(".jsonl"):
            base = os.path.basename(ref)
            j = next((k for k, p in enumerate(paths) if os.path.basename(p) == base), None)
        parent[i] = j if j != i else None
    return parent


def apply_lineage(summaries: list[SessionSummary]) -> None:
    flags = archived_flags(
        [s.id for s in summaries],
        [s.path for s in summaries],
        [s.parent_session for s in summaries],
        [s.archived_own for s in summaries],
    )
    for s, archived in zip(summaries, flags, strict=True):
        s.archived = archived


def archived_flags(
    ids: Sequence[str],
    paths: Sequence[str],
    refs: Sequence[str | None],
    own: Sequence[bool | int],
    *,
    absolute: bool = False,
) -> list[bool]:
    """Whether each session is archived: its own flag or an ancestor's (what
    :func:`apply_lineage` sets), from columns: ids, paths, parent references and own
    archive flags (parents as :func:`parent_positions` finds them)."""
    n = len(ids)
    if not any(own):
        return [False] * n
    parent = parent_positions(ids, paths, refs, absolute=absolute)
    out = []
    for i in range(n):
        archived = bool(own[i])
        seen = {i}
        p = parent[i]
        while p is not None and not archived and p not in seen:
            seen.add(p)
            archived = bool(own[p])
            p = parent[p]
        out.append(archived)
    return out


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


class _ByValue:
    """Equal to another of its class with the same attributes; unhashable (mutable).  (What
    ``@dataclass`` gives, written out: ``dataclasses`` costs a listing ~8 ms to import.)"""

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]


class Page(_ByValue):
    """One page of the catalog."""

    def __init__(
        self,
        sessions: list[SessionSummary],
        next_cursor: str | None,
        damaged: list[SessionSummary] | None = None,
    ) -> None:
        self.sessions = sessions
        self.next_cursor = next_cursor
        #: files of the scope whose header is damaged or that cannot be read at all
        self.damaged: list[SessionSummary] = [] if damaged is None else damaged

    def __repr__(self) -> str:
        return f"Page(sessions={self.sessions!r}, next_cursor={self.next_cursor!r}, damaged={self.damaged!r})"

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


def in_workspace_dir(path: str, cwd: str) -> bool:
    """Whether a file with no readable header sits in the directory the layout gives
    ``cwd`` (the only hint left of its workspace)."""
    return os.path.basename(os.path.dirname(path)) == encode_cwd(cwd)


class Listing:
    """A page of the catalog and, when asked for, the short ids of its rows."""

    def __init__(self, page: Page, short: dict[str, str] | None) -> None:
        self.page = page
        self.short = short  # id -> shortest unique prefix (8+), for ids and file-name ids shown


def shown_ids(page: Page) -> list[str]:
    """The ids a table of ``page`` prints: its sessions' and its damaged files' (by file name)."""
    return [s.id for s in page.sessions] + [name_id(d.path) for d in page.damaged]


def listing_of(summaries: list[SessionSummary], *, short: bool, **opts: Any) -> Listing:
    """``list_page(summaries, **opts)``, with the short ids of its rows among every
    summary's id and file-name id when ``short``."""
    result = list_page(summaries, **opts)
    if not short:
        return Listing(result, None)
    from ama.session.shortid import abbreviate

    among = [s.id for s in summaries] + [name_id(s.path) for s in summaries]
    return Listing(result, abbreviate(shown_ids(result), among=among))


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
    rows = [
        (s.last_message_ms, s.cwd, s.id, s.archived, s.subagent, s.problem is not None, s.mtime_ns, s.path)
        for s in summaries
    ]
    page, next_cursor, damaged = select_page(
        rows, cwd=cwd, archived=archived, include_subagents=include_subagents, limit=limit, cursor=cursor
    )
    return Page([summaries[i] for i in page], next_cursor, [summaries[i] for i in damaged])


def page_scope(
    cwd: str | None, archived: bool, include_subagents: bool, limit: int, cursor: str | None
) -> tuple[dict[str, Any], tuple[int, str, str] | None]:
    """A listing's scope (what its cursors are bound to) and the key its cursor continues
    after; InvalidArguments for a limit below 1 or a cursor of another scope."""
    if limit < 1:
        raise InvalidArguments(f"--limit must be at least 1, got {limit}")
    scope = {"cwd": cwd, "archived": archived, "subagents": include_subagents}
    return scope, decode_cursor(cursor, scope) if cursor else None


#: what :func:`select_page` needs of a session: ``(last_message_ms, cwd, id, archived,
#: subagent, has a problem, mtime_ns, path)``
PageRow = tuple[int, str, str, bool, bool, bool, int, str]


def select_page(
    rows: Sequence[PageRow],
    *,
    cwd: str | None,
    archived: bool = False,
    include_subagents: bool = False,
    limit: int = 50,
    cursor: str | None = None,
) -> tuple[list[int], str | None, list[int]]:
    """:func:`list_page` over compact rows (in the catalog's walk order, which breaks ties):
    the positions of the page's sessions, the next cursor, the positions of the damaged
    and unreadable files of the scope."""
    scope, after = page_scope(cwd, archived, include_subagents, limit, cursor)
    damaged = [
        (-r[6], r[7], i)
        for i, r in enumerate(rows)
        if r[5] and not archived and (cwd is None or in_workspace_dir(r[7], cwd))
    ]
    damaged.sort()
    # (-ms, cwd, id, position): the order of a stable sort by (-ms, cwd, id)
    keys = [
        (-r[0], r[1], r[2], i)
        for i, r in enumerate(rows)
        if not r[5]
        and (cwd is None or r[1] == cwd)
        and bool(r[3]) == archived
        and (include_subagents or not r[4])
    ]
    keys.sort()
    start = 0
    if after is not None:
        from bisect import bisect_right

        start = bisect_right(keys, (-after[0], after[1], after[2], len(rows)))  # strictly after
    page = keys[start : start + limit]
    next_cursor = None
    if len(keys) - start > limit:
        last = rows[page[-1][3]]
        next_cursor = encode_cursor(scope, (last[0], last[1], last[2]))
    return [k[3] for k in page], next_cursor, [d[2] for d in damaged]


class Resolved(_ByValue):
    def __init__(self, path: str, id: str, cwd: str) -> None:
        self.path = path
        self.id = id
        self.cwd = cwd

    def __repr__(self) -> str:
        return f"Resolved(path={self.path!r}, id={self.id!r}, cwd={self.cwd!r})"


def file_problem(path: str) -> str | None:
    """Why the file at ``path`` cannot be listed as a session (``unreadable: Is a
    directory``, ``damaged header: line 1 is not valid JSON``), or None."""
    from ama.session.reader import header_problem, open_regular

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
    from ama.session.reader import read_header

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
        raise InvalidArguments(
            f"session id prefix {ref!r} is too short: give at least {MIN_PREFIX} characters"
        )
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
        raise AmaError(
            "ambiguous", f"session id {ref!r} matches {len(unreadable)} damaged session files:\n{lines}"
        )
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
    from ama.session.reader import read_header

    h = read_header(path)
    if h is None or h.id != expected.id or h.cwd != expected.cwd:
        raise AmaError(
            "conflict",
            f"{path} no longer holds session {expected.id} of {expected.cwd}; nothing was changed",
        )
