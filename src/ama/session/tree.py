"""The entry tree of one session: parents, children, the current leaf, branches, labels, name.

Parents come from ``parentId``.  A file written by ama only ever points to an earlier
entry; when damage removed the parent (a skipped line), the entry is attached to the entry
just before it in file order and counted in ``reparented``, so the tree stays a tree and
nothing after the damage is lost.

An ``ama.leaf`` entry (a leaf move) makes its parent the leaf.  It stays in the tree (pi
may continue from it), but one without children is not shown as a child or a branch tip.
"""

from __future__ import annotations

from collections.abc import Iterable

from ama.messages import UNSET
from ama.session.entries import (
    LEAF_MARK,
    AnyEntry,
    CustomEntry,
    LabelEntry,
    SessionInfoEntry,
    is_leaf_mark,
)


class SessionTree:
    def __init__(self, entries: Iterable[AnyEntry] = (), leaf_id: str | None = ...) -> None:  # type: ignore[assignment]
        """``leaf_id`` defaults to the last entry; pass the reader's ``leaf_id`` (which
        honours ``leaf`` lines, including a leaf moved before the first entry: None)."""
        self.entries: list[AnyEntry] = []
        self.by_id: dict[str, AnyEntry] = {}
        self.position: dict[str, int] = {}
        self.parent: dict[str, str | None] = {}
        self.reparented = 0
        #: ids of the ``ama.leaf`` entries
        self.marks: set[str] = set()
        self._children: dict[str | None, list[str]] | None = None
        #: the last path asked for: its leaf, the ids root -> leaf and (once asked for) the
        #: entries; an entry's ancestors never change
        self._path: tuple[str | None, list[str], list[AnyEntry]] | None = None
        self.leaf_id: str | None = None
        #: the latest ``session_info`` entry that sets a name
        self._named: SessionInfoEntry | None = None
        self._extend(entries)
        if leaf_id is not ... and (leaf_id is None or leaf_id in self.by_id):
            self.leaf_id = leaf_id

    # --- building -------------------------------------------------------------------

    def add(self, entry: AnyEntry) -> None:
        """Append an entry (file order) and make it the leaf (an ``ama.leaf`` entry: its
        parent)."""
        pid = entry.parent_id
        if pid is not None and pid not in self.by_id:
            self.reparented += 1
            pid = self.entries[-1].id if self.entries else None
        path = self._path
        if path is not None and (path[0] != pid or entry.id in self.by_id or len(path[2]) not in (0, len(path[1]))):
            path = None  # a path not through this entry (or an id given again): forgotten
        self.position[entry.id] = len(self.entries)
        self.entries.append(entry)
        self.by_id[entry.id] = entry
        self.parent[entry.id] = pid
        if path is not None:  # appended under the last path's leaf: that path, one longer
            path[1].append(entry.id)
            if path[2]:
                path[2].append(entry)
            path = (entry.id, path[1], path[2])
        self._path = path
        if self._children is not None:
            self._children.setdefault(pid, []).append(entry.id)
        if is_leaf_mark(entry):
            self.marks.add(entry.id)
            self.leaf_id = pid
        else:
            self.leaf_id = entry.id
            if isinstance(entry, SessionInfoEntry) and entry.name is not UNSET:
                self._named = entry

    def _extend(self, entries: Iterable[AnyEntry]) -> None:
        """:meth:`add` for each entry, in one loop (opening a session adds tens of thousands)."""
        ents, by_id, position, parent, marks = self.entries, self.by_id, self.position, self.parent, self.marks
        append = ents.append
        i = len(ents)
        prev = ents[-1].id if ents else None
        leaf = self.leaf_id
        named = self._named
        reparented = 0
        for e in entries:
            eid = e.id
            pid = e.parent_id
            if pid is not None and pid not in by_id:
                reparented += 1
                pid = prev
            position[eid] = i
            i += 1
            append(e)
            by_id[eid] = e
            parent[eid] = pid
            if e.__class__ is CustomEntry and e.custom_type == LEAF_MARK:  # type: ignore[union-attr]
                marks.add(eid)
                leaf = pid
            else:
                leaf = eid
                if isinstance(e, SessionInfoEntry) and e.name is not UNSET:
                    named = e
            prev = eid
        self.reparented += reparented
        self.leaf_id = leaf
        self._named = named
        self._children = None
        self._path = None

    def set_leaf(self, entry_id: str | None) -> None:
        if entry_id is not None and entry_id not in self.by_id:
            raise KeyError(entry_id)
        self.leaf_id = entry_id

    # --- queries --------------------------------------------------------------------

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self.by_id

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, entry_id: str) -> AnyEntry | None:
        return self.by_id.get(entry_id)

    def children(self, entry_id: str | None) -> list[str]:
        """Ids of the direct children of an entry (None: the roots), in file order; an
        ``ama.leaf`` entry only when something was appended under it."""
        if self._children is None:
            ch: dict[str | None, list[str]] = {}
            for e in self.entries:
                ch.setdefault(self.parent[e.id], []).append(e.id)
            self._children = ch
        kids = self._children.get(entry_id, ())
        if not self.marks:
            return list(kids)
        return [k for k in kids if k not in self.marks or self._children.get(k)]

    def tips(self) -> list[str]:
        """Ids of the entries without children (the ends of branches), in file order."""
        return tips_of([e.id for e in self.entries], self.parent, self.marks)

    def path_ids(self, leaf_id: str | None = ...) -> list[str]:  # type: ignore[assignment]
        """Ids from the root to ``leaf_id`` (default: the current leaf), inclusive."""
        if leaf_id is ...:
            leaf_id = self.leaf_id
        return list(self._path_to(leaf_id)[1])

    def _path_to(self, leaf_id: str | None) -> tuple[str | None, list[str], list[AnyEntry]]:
        if self._path is None or self._path[0] != leaf_id:
            self._path = (leaf_id, path_of(leaf_id, self.parent), [])
        return self._path

    def branch(self, leaf_id: str | None = ...) -> list[AnyEntry]:  # type: ignore[assignment]
        """Entries from the root to ``leaf_id`` (default: the current leaf)."""
        if leaf_id is ...:
            leaf_id = self.leaf_id
        _, ids, entries = self._path_to(leaf_id)
        if len(entries) != len(ids):
            by_id = self.by_id
            entries[:] = [by_id[i] for i in ids]
        return list(entries)

    def is_ancestor(self, ancestor: str, entry_id: str | None) -> bool:
        cur = entry_id
        while cur is not None:
            if cur == ancestor:
                return True
            cur = self.parent[cur]
        return False

    def labels(self) -> dict[str, str]:
        """Current label of each labelled entry (the latest ``label`` entry wins)."""
        return labels_of(self.entries)

    @property
    def name(self) -> str | None:
        """The session name: the latest ``session_info`` entry that sets one."""
        e = self._named
        return None if e is None else (e.name or None)  # type: ignore[return-value]

    def latest_custom(self, custom_type: str, *, on_branch: bool = True) -> CustomEntry | None:
        seq = self.branch() if on_branch else self.entries
        for e in reversed(seq):
            if isinstance(e, CustomEntry) and e.custom_type == custom_type:
                return e
        return None


# --- over plain data (``sessions show`` computes these while it reads) -------------------


def tips_of(ids: list[str], parent: dict[str, str | None], marks: set[str]) -> list[str]:
    """Ids of the entries without children, in the order of ``ids``; an ``ama.leaf`` entry
    (in ``marks``) is neither a tip nor, unless something was appended under it, a child."""
    has_kids = set(parent.values())
    if marks:
        counted = {parent[k] for k in ids if k not in marks or k in has_kids}
    else:
        counted = has_kids
    return [i for i in ids if i not in marks and i not in counted]


def path_of(leaf_id: str | None, parent: dict[str, str | None]) -> list[str]:
    """Ids from the root to ``leaf_id``, inclusive."""
    out: list[str] = []
    cur = leaf_id
    while cur is not None:
        out.append(cur)
        cur = parent[cur]
    out.reverse()
    return out


def labels_of(entries: Iterable[AnyEntry]) -> dict[str, str]:
    """Current label of each labelled entry (the latest ``label`` entry wins)."""
    out: dict[str, str] = {}
    for e in entries:
        if isinstance(e, LabelEntry):
            if e.label is UNSET or not e.label:
                out.pop(e.target_id, None)
            else:
                out[e.target_id] = e.label  # type: ignore[assignment]
    return out


def name_of(entries: list[AnyEntry]) -> str | None:
    """The latest name a ``session_info`` entry of ``entries`` sets."""
    for e in reversed(entries):
        if isinstance(e, SessionInfoEntry) and e.name is not UNSET:
            return e.name or None  # type: ignore[return-value]
    return None
