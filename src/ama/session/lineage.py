"""Lineage of one session, found from headers (cheap) for ``sessions show``."""

from __future__ import annotations

import os

from ama.session.entries import CustomEntry
from ama.session.layout import iter_session_files
from ama.session.reader import SessionData, read_header, read_session
from ama.session.summary import ARCHIVE_TYPE


def _own_archived(data: SessionData) -> bool:
    for e in reversed(data.entries):
        if isinstance(e, CustomEntry) and e.custom_type == ARCHIVE_TYPE:
            return bool(isinstance(e.data, dict) and e.data.get("archived"))
    return False


def lineage_of(sessions_dir: str, data: SessionData) -> dict:
    """``{parent, children, archived, archivedOwn}`` for a loaded session."""
    headers = {}
    for path in iter_session_files(sessions_dir):
        h = read_header(path)
        if h is not None:
            headers[path] = h
    by_id = {h.id: p for p, h in headers.items()}
    parent_ref = data.header.parent_session if data.header and isinstance(data.header.parent_session, str) else None
    children = sorted(h.id for h in headers.values() if data.id and h.parent_session == data.id)
    own = _own_archived(data)
    archived = own
    seen = {os.path.abspath(data.path or "")}
    ref = parent_ref
    while ref and not archived:
        p = by_id.get(ref) or (ref if os.path.isfile(ref) else None)
        if p is None or os.path.abspath(p) in seen:
            break
        seen.add(os.path.abspath(p))
        try:
            pd = read_session(p)
        except OSError:
            break
        archived = _own_archived(pd)
        ref = pd.header.parent_session if pd.header and isinstance(pd.header.parent_session, str) else None
    return {"parent": parent_ref, "children": children, "archived": archived, "archivedOwn": own}
