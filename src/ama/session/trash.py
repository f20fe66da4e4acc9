"""Delete to trash, restore from trash, prune the trash.

``rm`` moves a session file to ``<sessions>/.trash/`` under the same relative path (only
when no process is writing it); ``restore`` moves it back (never over an existing file);
``prune`` deletes trashed files older than a cutoff, judged by the time they were moved to
the trash (the inode change time, which a rename updates).
"""

from __future__ import annotations

import os
import time

from ama.errors import AmaError
from ama.session.catalog import Resolved, resolve, verify
from ama.session.layout import TRASH, iter_session_files
from ama.session.lease import Lease


def _free_target(path: str) -> str:
    if not os.path.exists(path):
        return path
    stem, ext = os.path.splitext(path)
    n = 1
    while os.path.exists(f"{stem}.{n}{ext}"):
        n += 1
    return f"{stem}.{n}{ext}"


def trash_session(sessions_dir: str, ref: str) -> dict:
    """Move a session to the trash.  A file that is not a readable session (a damaged
    header, a directory or a looping link named ``*.jsonl``) is moved too when ``ref`` is
    its path: nothing else can name it reliably."""
    by_path = ref.endswith(".jsonl") or os.sep in ref
    r = resolve(sessions_dir, ref, damaged=by_path)
    rel = os.path.relpath(r.path, os.path.abspath(sessions_dir))
    if rel.startswith(".."):
        raise AmaError("invalid_arguments", f"{r.path} is not inside the sessions directory {sessions_dir}")
    dest = _free_target(os.path.join(sessions_dir, TRASH, rel))
    if r.id or os.path.isfile(r.path):
        with Lease(r.path):
            if r.id:
                verify(r.path, r)
            _move(r.path, dest)
    else:
        _move(r.path, dest)  # cannot be opened, so nobody is writing it
    return {"id": r.id, "path": r.path, "trashPath": dest}


def _move(src: str, dest: str) -> None:
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    os.rename(src, dest)


def restore_session(sessions_dir: str, ref: str) -> dict:
    r: Resolved = resolve(sessions_dir, ref, trash=True)
    trash_root = os.path.join(sessions_dir, TRASH)
    rel = os.path.relpath(r.path, trash_root)
    dest = os.path.join(sessions_dir, rel)
    if os.path.exists(dest):
        raise AmaError("exists", f"cannot restore session {r.id}: {dest} already exists")
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    os.link(r.path, dest)  # fails instead of replacing a file created meanwhile
    os.unlink(r.path)
    return {"id": r.id, "path": dest}


def prune_trash(sessions_dir: str, *, older_than_s: float, dry_run: bool = False) -> dict:
    now = time.time()
    removed, kept = [], 0
    freed = 0
    for path in iter_session_files(sessions_dir, trash=True):
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if now - st.st_ctime < older_than_s:
            kept += 1
            continue
        if not dry_run:
            try:
                os.unlink(path)
            except OSError:  # a directory named *.jsonl: not ours to delete recursively
                kept += 1
                continue
        removed.append(path)
        freed += st.st_size
    if not dry_run:
        # drop now-empty workspace directories inside the trash
        root = os.path.join(sessions_dir, TRASH)
        for d, _dirs, _files in sorted(os.walk(root), reverse=True):
            if d != root:
                try:
                    os.rmdir(d)
                except OSError:
                    pass
    return {"removed": removed, "kept": kept, "bytes": freed, "dryRun": dry_run}
