"""What a restore wants, as :class:`~ama.checkpoints.restore.Target`s: from ``tools``
records, and from the shadow repository (only the paths that differ)."""

from __future__ import annotations

import os
import stat as st_mod
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from ama.checkpoints.blobs import BlobStore
from ama.checkpoints.history import History
from ama.checkpoints.records import key_path
from ama.checkpoints.restore import Target
from ama.checkpoints.shadow import ShadowGit

Known = Callable[[str, str], bool]  # (key, sha256 of the current content) -> known?


def tools_target(cwd: str, key: str, rec: dict[str, Any], blobs: BlobStore, known: Known) -> Target:
    blob = rec.get("blob")
    skipped = rec.get("skipped")
    mode = rec.get("mode")
    rpd = rec.get("realParentDir")
    sha = blob if isinstance(blob, str) else None
    return Target(
        key=key,
        path=key_path(cwd, key),
        exists=sha is not None or bool(skipped),
        sha256=sha,
        load=partial(blobs.get, sha) if sha else None,
        mode=st_mod.S_IMODE(mode) if isinstance(mode, int) else None,
        real_parent_dir=rpd if isinstance(rpd, str) else None,
        skipped=skipped if isinstance(skipped, str) else None,
        known=partial(known, key),
    )


def tools_targets(
    cwd: str, history: History, uid: str, keys: Iterable[str], blobs: BlobStore, known: Known
) -> list[Target]:
    out = []
    for key in keys:
        rec = history.target_record(uid, key)
        if rec is not None:
            out.append(tools_target(cwd, key, rec, blobs, known))
    return out


def _is_file_mode(mode: str) -> bool:
    return mode in ("100644", "100755")


def shadow_targets(
    shadow: ShadowGit,
    cwd: str,
    target_commit: str,
    latest_commit: str | None,
    tracked_inside: list[str],
    *,
    max_bytes: int,
    known: Known,
) -> tuple[list[Target], list[dict], set[str]]:
    """Targets for the paths that differ between ``target_commit`` and the work tree now.

    Returns ``(targets, skipped, covered)``: ``skipped`` are symlinks and submodules that
    differ (not restored); ``covered`` are the ``tracked_inside`` keys the shadow repository
    answers for (the others, ignored files, are left to their ``tools`` records).
    """
    now = shadow.write_tree()
    changes = shadow.diff(target_commit, now)
    if latest_commit and latest_commit != target_commit:
        since = {c.path for c in shadow.diff(latest_commit, now)}
    elif latest_commit:
        since = {c.path for c in changes}
    else:
        since = None  # no snapshot to compare with: only ama's own knowledge counts
    # paths the target has but the work tree's snapshot lacks: deleted, or ignored now
    absent_now = [c.path for c in changes if c.status == "D"]
    ignored = shadow.ignored(sorted(set(absent_now) | set(tracked_inside)))
    covered = {k for k in tracked_inside if k not in ignored}

    def is_known(key: str, cur: str) -> bool:
        if since is not None and key not in since:
            return True
        return known(key, cur)

    wanted_oids = [c.a_oid for c in changes if c.status != "A" and _is_file_mode(c.a_mode)]
    sizes = shadow.sizes(sorted(set(wanted_oids)))
    small = sorted({o for o in wanted_oids if sizes.get(o, 0) <= max_bytes})
    contents = shadow.blobs(small)
    real_cwd = os.path.realpath(cwd)
    targets: list[Target] = []
    skipped: list[dict] = []
    for c in changes:
        if c.path in ignored:
            continue
        if c.status != "A" and not _is_file_mode(c.a_mode):
            skipped.append({"path": c.path, "reason": "symlink" if c.a_mode == "120000" else "not_regular"})
            continue
        if c.status == "A" and not _is_file_mode(c.b_mode):
            continue  # a symlink or submodule that appeared since: not ours to remove
        exists = c.status != "A"
        oid = c.a_oid
        too_large = exists and sizes.get(oid, 0) > max_bytes
        targets.append(
            Target(
                key=c.path,
                path=os.path.join(cwd, c.path),
                exists=exists,
                load=partial(contents.get, oid) if exists else None,
                exec_bit=(c.a_mode == "100755") if exists else None,
                real_parent_dir=os.path.normpath(os.path.join(real_cwd, os.path.dirname(c.path))),
                skipped="too_large" if too_large else None,
                max_bytes=max_bytes,
                known=partial(is_known, c.path),
            )
        )
    return targets, skipped, covered
