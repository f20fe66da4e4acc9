"""Lineage of one session, found from headers (cheap) for ``sessions show``.

A child's header names its parent in ``parentSession``: the path of the parent's file (what
pi writes and ama writes now) or the parent's id (older ama files); both are read.  ``rootId``
and ``relationType`` sit beside it, so the lineage is known even when the parent's file is
gone.
"""

from __future__ import annotations

import os

from ama.session.entries import CustomEntry, SessionHeader
from ama.session.layout import iter_session_files
from ama.session.reader import SessionData, read_header, read_session
from ama.session.summary import ARCHIVE_TYPE


def _own_archived(data: SessionData) -> bool:
    for e in reversed(data.entries):
        if isinstance(e, CustomEntry) and e.custom_type == ARCHIVE_TYPE:
            return bool(isinstance(e.data, dict) and e.data.get("archived"))
    return False


def _ref(h: SessionHeader | None) -> str | None:
    return h.parent_session if h is not None and isinstance(h.parent_session, str) and h.parent_session else None


def points_at(ref: str | None, sid: str, path: str | None) -> bool:
    """Whether a ``parentSession`` value names the session ``sid`` stored at ``path``."""
    if not ref:
        return False
    if ref == sid:
        return True
    if path is None or not ref.endswith(".jsonl"):
        return False
    return os.path.abspath(ref) == os.path.abspath(path) or os.path.basename(ref) == os.path.basename(path)


def resolve_parent(ref: str | None, headers: dict[str, SessionHeader]) -> str | None:
    """The path of the parent's file among ``headers`` (path -> header), or None."""
    if not ref:
        return None
    for p, h in headers.items():
        if points_at(ref, h.id, p):
            return p
    return None


def lineage_of(sessions_dir: str, data: SessionData) -> dict:
    """``{parent, parentId, parentPath, rootId, relationType, children, archived,
    archivedOwn}`` for a loaded session (``parent``: the header's ``parentSession`` as
    written; ``parentId``/``parentPath``: None when that file is not found)."""
    headers: dict[str, SessionHeader] = {}
    for path in iter_session_files(sessions_dir):
        h = read_header(path)
        if h is not None:
            headers[path] = h
    parent_ref = _ref(data.header)
    parent_path = resolve_parent(parent_ref, headers)
    if parent_path is None and parent_ref and parent_ref.endswith(".jsonl") and os.path.isfile(parent_ref):
        h = read_header(parent_ref)
        if h is not None:
            parent_path = parent_ref
            headers[parent_ref] = h
    children = sorted(
        h.id for p, h in headers.items() if data.id and p != data.path and points_at(_ref(h), data.id, data.path)
    )
    own = _own_archived(data)
    archived = own
    seen = {os.path.abspath(data.path or "")}
    p: str | None = parent_path
    while p is not None and not archived:
        if os.path.abspath(p) in seen:
            break
        seen.add(os.path.abspath(p))
        try:
            pd = read_session(p)
        except OSError:
            break
        archived = _own_archived(pd)
        p = resolve_parent(_ref(pd.header), headers)
    h = data.header
    relation = h.relation_type if h is not None and isinstance(h.relation_type, str) else None
    if relation is None and parent_ref:
        relation = "fork"  # an older ama file or a pi file: forks were the only children
    return {
        "parent": parent_ref,
        "parentId": headers[parent_path].id if parent_path else None,
        "parentPath": parent_path,
        "rootId": h.lineage_root if h is not None and (parent_ref or isinstance(h.root_id, str)) else None,
        "relationType": relation,
        "children": children,
        "archived": archived,
        "archivedOwn": own,
    }
