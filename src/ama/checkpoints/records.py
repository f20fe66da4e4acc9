"""The checkpoint shapes, as they appear in the session file and in results.

Two ``custom`` entry types carry them (docs/checkpoints.md):

* ``ama.checkpoint``: ``{v: 1, userEntryId, files: {path: FileRecord}, git?, shadowCommit?}``,
  appended right after a new-turn user message: the state of every tracked file before it.
* ``ama.checkpoint-track``: ``{v: 1, userEntryId, path, record}``, appended when edit/write
  first touch a file in the middle of a turn; it joins that turn's checkpoint.

Paths (the keys) are relative to the session's cwd with ``/`` separators when the file lies
inside it, absolute otherwise.  The dataclasses here are the public, typed view; the tracker
keeps the JSON dicts it read or wrote, so that replaying a long session builds no objects.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

VERSION = 1
CHECKPOINT_TYPE = "ama.checkpoint"
TRACK_TYPE = "ama.checkpoint-track"

#: reasons a file is listed in ``CodeRestoreResult.skipped``
SKIP_REASONS = (
    "symlink",
    "hardlink",
    "not_regular",
    "parent_moved",
    "too_large",
    "backup_missing",
)


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


@dataclass
class FileRecord:
    """One file at one moment.  ``blob`` is the sha256 of its bytes in the blob store, or
    None when the file did not exist (or was not backed up: then ``skipped`` says why)."""

    blob: str | None
    mode: int | None = None
    size: int | None = None
    mtime_ns: int | None = None
    real_parent_dir: str | None = None
    skipped: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"blob": self.blob}
        if self.mode is not None:
            out["mode"] = self.mode
        if self.size is not None:
            out["size"] = self.size
        if self.mtime_ns is not None:
            out["mtimeNs"] = self.mtime_ns
        if self.real_parent_dir is not None:
            out["realParentDir"] = self.real_parent_dir
        if self.skipped is not None:
            out["skipped"] = self.skipped
        return out

    @classmethod
    def from_json(cls, d: Any) -> FileRecord:
        if not isinstance(d, dict):
            return cls(blob=None, skipped="backup_missing")
        return cls(
            blob=_str(d.get("blob")),
            mode=_int(d.get("mode")),
            size=_int(d.get("size")),
            mtime_ns=_int(d.get("mtimeNs")),
            real_parent_dir=_str(d.get("realParentDir")),
            skipped=_str(d.get("skipped")),
        )


@dataclass
class CheckpointData:
    user_entry_id: str
    files: dict[str, FileRecord] = field(default_factory=dict)
    git: dict | None = None
    shadow_commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "v": VERSION,
            "userEntryId": self.user_entry_id,
            "files": {k: r.to_json() for k, r in self.files.items()},
        }
        if self.git is not None:
            out["git"] = self.git
        if self.shadow_commit is not None:
            out["shadowCommit"] = self.shadow_commit
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CheckpointData:
        files = d.get("files")
        git = d.get("git")
        return cls(
            user_entry_id=str(d.get("userEntryId") or ""),
            files={k: FileRecord.from_json(v) for k, v in files.items()} if isinstance(files, dict) else {},
            git=git if isinstance(git, dict) else None,
            shadow_commit=_str(d.get("shadowCommit")),
        )


@dataclass
class CodeRestoreResult:
    """What a restore did (or, with ``dry_run``, would do).  Paths are keys: relative to cwd
    with ``/`` inside it, absolute outside.

    * ``restored``: written back (created, overwritten, or only its mode changed)
    * ``deleted``: removed, because the file did not exist at the checkpoint
    * ``conflicts``: changed outside ama since the latest checkpoint and left alone
      (``on_conflict="skip"``); with ``"overwrite"`` such files are restored instead
    * ``skipped``: ``{path, reason}`` with a reason from ``SKIP_REASONS``
    * ``failed``: ``{path, message}``: an OS error while writing or deleting
    * ``insertions`` / ``deletions``: changed lines, over restored and deleted files
    """

    restored: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    failed: list[dict] = field(default_factory=list)
    insertions: int = 0
    deletions: int = 0
    dry_run: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "restored": list(self.restored),
            "deleted": list(self.deleted),
            "conflicts": list(self.conflicts),
            "skipped": [dict(s) for s in self.skipped],
            "failed": [dict(f) for f in self.failed],
            "insertions": self.insertions,
            "deletions": self.deletions,
            "dryRun": self.dry_run,
        }

    @property
    def changed(self) -> int:
        return len(self.restored) + len(self.deleted)


def path_key(cwd: str, path: str) -> str:
    """The record key of absolute ``path``: relative to ``cwd`` with ``/`` when inside it."""
    path = os.path.normpath(path)
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:  # another drive (Windows)
        return path.replace(os.sep, "/") if os.sep != "/" else path
    if rel == os.curdir or rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        return path.replace(os.sep, "/") if os.sep != "/" else path
    return rel.replace(os.sep, "/") if os.sep != "/" else rel


def key_path(cwd: str, key: str) -> str:
    """The absolute path of a record key."""
    native = key.replace("/", os.sep) if os.sep != "/" else key
    return native if os.path.isabs(native) else os.path.join(cwd, native)
