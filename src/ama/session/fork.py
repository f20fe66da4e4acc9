"""Fork: a new, independent session file holding another session's effective history.

The child lives in the same workspace (same ``cwd``), names its parent in the header's
``parentSession`` (the path of the parent's file, as pi writes it), with ``rootId`` (the
first session of the lineage) and ``relationType: "fork"`` beside it, and holds the entries on the chosen branch (root ->
leaf, or root -> ``at``): abandoned branches, the parent's runtime state (run records,
task registry, queued messages, pending approvals, archive flags) and labels or edits that
point outside the branch are left out.  Lines are copied byte for byte where their parent
is unchanged, so fields this version does not know survive.

The source is read from a stable snapshot: stat, read, stat must agree (size, mtime,
inode), retried at most three times, else the fork is refused and nothing is written.
"""

from __future__ import annotations

import os
import uuid

import msgspec

from ama.errors import AmaError, Busy, NotFound
from ama.session.entries import (
    CURRENT_VERSION,
    AnyEntry,
    ContextEditEntry,
    CustomEntry,
    LabelEntry,
    SessionHeader,
    encode_line,
    now_iso,
)
from ama.session.layout import new_session_path
from ama.session.reader import SessionData, parse_session
from ama.session.tree import SessionTree

#: custom types that are the parent's runtime state, not history
RUNTIME_CUSTOM_TYPES = frozenset(
    {"ama.run", "ama.task", "ama.queue", "ama.pending_approval", "ama.archive", "ama.plan_state"}
)
SNAPSHOT_TRIES = 3

_enc = msgspec.json.Encoder()
_dec = msgspec.json.Decoder()


def stable_read(path: str, tries: int = SNAPSHOT_TRIES, *, open_=open) -> bytes:
    """The file's bytes from a moment when stat, read and stat agreed."""
    for _ in range(tries):
        try:
            st1 = os.stat(path)
            with open_(path, "rb") as f:
                data = f.read()
            st2 = os.stat(path)
        except FileNotFoundError:
            raise NotFound(f"session file {path} does not exist") from None
        same = (st1.st_size, st1.st_mtime_ns, st1.st_ino) == (st2.st_size, st2.st_mtime_ns, st2.st_ino)
        if same and len(data) == st2.st_size:
            return data
    raise Busy(f"session {path} kept changing while being read ({tries} tries); try again when it is idle")


def _keep(e: AnyEntry) -> bool:
    return not (isinstance(e, CustomEntry) and e.custom_type in RUNTIME_CUSTOM_TYPES)


def fork_lines(data: SessionData, at: str | None = None) -> list[bytes]:
    """The child's entry lines (each ending in a newline) for the branch ending at ``at``."""
    tree = SessionTree(data.entries, data.leaf_id)
    if at is not None and at not in tree:
        raise NotFound(f"no entry {at} in session {data.id}")
    branch = tree.branch() if at is None else tree.branch(at)
    raws = data.raws
    reuse_raw = raws is not None and data.header is not None and data.header.version == CURRENT_VERSION
    kept = [e for e in branch if _keep(e)]
    ids = {e.id for e in kept}
    kept = [
        e
        for e in kept
        if not (isinstance(e, LabelEntry | ContextEditEntry) and e.target_id not in ids)
    ]
    out: list[bytes] = []
    prev: str | None = None
    for e in kept:
        if reuse_raw and e.parent_id == prev:
            out.append(raws[tree.position[e.id]] + b"\n")  # type: ignore[index]
        elif reuse_raw:
            obj = _dec.decode(raws[tree.position[e.id]])  # type: ignore[index]
            obj["parentId"] = prev
            out.append(_enc.encode(obj) + b"\n")
        else:
            out.append(encode_line(msgspec.structs.replace(e, parent_id=prev)))
        prev = e.id
    return out


def fork_session(path: str, sessions_dir: str, *, expected_id: str | None = None, at: str | None = None) -> tuple[str, str]:
    """Fork the session file at ``path``; returns ``(new id, new path)``."""
    raw = stable_read(path)
    data = parse_session(raw, path=path, keep_raw=True)
    if data.header is None:
        raise AmaError("corrupt", f"cannot fork {path}: its header line is damaged ({data.header_error})")
    if data.header.version > CURRENT_VERSION:
        raise AmaError("readonly", f"cannot fork {path}: {data.readonly_reason}")
    if expected_id is not None and data.header.id != expected_id:
        raise AmaError("conflict", f"{path} no longer holds session {expected_id}; nothing was written")
    lines = fork_lines(data, at)
    sid = str(uuid.uuid4())
    ts = now_iso()
    cwd = data.header.cwd
    header = SessionHeader(
        version=CURRENT_VERSION,
        id=sid,
        timestamp=ts,
        cwd=cwd,
        parent_session=os.path.abspath(path),
        root_id=data.header.lineage_root,
        relation_type="fork",
    )
    target = new_session_path(sessions_dir, cwd, sid, ts)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = os.path.join(os.path.dirname(target), f".{os.path.basename(target)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(encode_line(header))
            f.writelines(lines)
            f.flush()
            os.fsync(f.fileno())
        os.link(tmp, target)  # never replaces an existing file
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    return sid, target
