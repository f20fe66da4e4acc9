"""Archive and unarchive, by lineage.

Archiving appends one ``custom{customType:"ama.archive", data:{archived}}`` entry to the
chosen session only; its descendants (forks, sub-agent sessions) inherit the state through
the catalog's lineage projection.  Before writing, the leases of the session and of all
its descendants are taken in stable id order; if any member is busy, every lease is
released and the operation fails with zero writes.
"""

from __future__ import annotations

from contextlib import ExitStack

from ama.errors import AmaError, NotFound
from ama.session.catalog import descendants, resolve, scan
from ama.session.lease import Lease
from ama.session.store import Session
from ama.session.summary import ARCHIVE_TYPE


def set_archived(sessions_dir: str, ref: str, archived: bool) -> dict:
    target = resolve(sessions_dir, ref)
    summaries = scan(sessions_dir)
    root = next((s for s in summaries if s.path == target.path), None)
    if root is None:
        raise NotFound(f"session {ref!r} is not in {sessions_dir}")
    members = [root, *descendants(summaries, root)]
    members.sort(key=lambda s: (s.id, s.path))
    with ExitStack() as stack:
        session: Session | None = None
        for m in members:
            if m.path == root.path:
                session = Session.open(m.path)
                stack.callback(session.close)
            else:
                stack.enter_context(Lease(m.path))
        assert session is not None
        if session.id != target.id or session.cwd != target.cwd:
            raise AmaError("conflict", f"{target.path} no longer holds session {target.id}; nothing was changed")
        current = session.tree.latest_custom(ARCHIVE_TYPE, on_branch=False)
        own = bool(current and isinstance(current.data, dict) and current.data.get("archived"))
        changed = own != archived
        if changed:
            session.append_custom(ARCHIVE_TYPE, {"archived": archived})
    return {
        "id": target.id,
        "path": target.path,
        "archived": archived,
        "changed": changed,
        "lineage": [m.id for m in members if m.path != root.path],
    }
