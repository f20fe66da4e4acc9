"""What ``ama sessions show`` tells of a session, from one walk over its lines.

The walk is the reader's (:func:`ama.session.reader.iter_entries`: the same entries, the
same damage, the same leaf) but keeps no entry: it counts them, keeps the parent of each
id, and keeps only the few entries ``show`` prints (user messages, labels, names, custom
records); the catalog's metadata comes from the same walk (:class:`ama.session.meta.MetaWalk`).
So a session of any size is shown in about the memory of its ids, and what is shown is what
:class:`~ama.session.tree.SessionTree`, :func:`~ama.session.history.count`,
:func:`~ama.session.history.user_messages` and :func:`~ama.session.meta.derive` give over the
parsed file (tested).
"""

from __future__ import annotations

from dataclasses import dataclass

from ama.messages import UserMessage
from ama.session.entries import LEAF_MARK, AnyEntry, CustomEntry, LabelEntry, MessageEntry, SessionInfoEntry
from ama.session.history import Counts, Tally, UserMessageRef, user_messages
from ama.session.meta import Meta, MetaWalk
from ama.session.reader import Buffer, SessionData, gc_paused, iter_entries
from ama.session.tree import labels_of, name_of, path_of, tips_of


@dataclass
class Overview:
    """A session as ``show`` prints it; ``data`` has the header and the damage, no entries."""

    data: SessionData
    leaf_id: str | None
    branch_ids: set[str]
    branches: int  # the number of branch tips
    counts: Counts
    users: list[UserMessageRef]
    labels: dict[str, str]
    name: str | None
    #: the ``custom`` entries but leaf moves, in file order (archive marks, run records...)
    customs: list[AnyEntry]
    #: the catalog's metadata of the file (what :func:`ama.session.meta.derive` gives)
    meta: Meta


def overview(buf: Buffer, *, path: str | None = None) -> Overview:
    """The overview of a session file's bytes (a mapped file's pages are given back as the
    walk goes on)."""
    data = SessionData(path=path, header=None, size=len(buf))
    ids: list[str] = []
    parent: dict[str, str | None] = {}
    marks: set[str] = set()
    users: list[AnyEntry] = []
    kept: list[AnyEntry] = []  # labels and names
    customs: list[AnyEntry] = []
    tally = Tally()
    walk = MetaWalk()
    look = walk.entry
    count = tally.add
    add_id = ids.append
    prev: str | None = None
    with gc_paused():
        for e, line in iter_entries(buf, data):
            look(e, line)
            if e is None:
                continue
            eid = e.id
            pid = e.parent_id
            if pid is not None and pid not in parent:  # the tree's rule: attached to the entry before
                pid = prev
            parent[eid] = pid
            add_id(eid)
            prev = eid
            cls = e.__class__
            if cls is MessageEntry:
                if isinstance(e.message, UserMessage):  # type: ignore[union-attr]
                    users.append(e)
            elif cls is CustomEntry and e.custom_type == LEAF_MARK:  # type: ignore[union-attr]
                marks.add(eid)
            elif cls is CustomEntry:
                customs.append(e)
            elif isinstance(e, LabelEntry | SessionInfoEntry):
                kept.append(e)
            count(e)
    leaf = data.leaf_id  # the reader's (None, or an entry it gave), as SessionTree takes it
    branch = set(path_of(leaf, parent))
    return Overview(
        data=data,
        leaf_id=leaf,
        branch_ids=branch,
        branches=len(tips_of(ids, parent, marks)),
        counts=tally.done(),
        users=user_messages(users, branch),
        labels=labels_of(kept),
        name=name_of(kept),
        customs=customs,
        meta=walk.done(buf),  # type: ignore[arg-type]
    )
