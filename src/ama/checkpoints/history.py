"""Replay of a session's checkpoint entries: ``userEntryId -> checkpoint``, plus per file its
earliest and latest record.

Both entry kinds are replayed in file order over the whole file (every branch, not only the
active one): file state is about the disk, not about the conversation.  A track entry joins
the checkpoint of its ``userEntryId`` (adding only files that checkpoint does not have); one
that arrives before its checkpoint waits for it and then wins over the checkpoint's own
record of that file (it was taken first, before ama wrote).  The earliest record of each file is kept
for ever: it is the fallback for a checkpoint that does not list the file (the file was
first touched later, so it was in that state then).

Records stay the JSON dicts of the session file; nothing is converted until asked for.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ama.checkpoints.records import CHECKPOINT_TYPE, TRACK_TYPE

Raw = dict[str, Any]


class History:
    def __init__(self) -> None:
        #: userEntryId -> {"files": {key: record}, "git"?, "shadowCommit"?}, oldest first
        self.checkpoints: dict[str, Raw] = {}
        self.earliest: dict[str, Raw] = {}
        self.latest: dict[str, Raw] = {}
        self._pending: dict[str, dict[str, Raw]] = {}

    # --- building -------------------------------------------------------------------

    def replay(self, entries: Iterable[Any]) -> None:
        for e in entries:
            ctype = getattr(e, "custom_type", None)
            if ctype in (CHECKPOINT_TYPE, TRACK_TYPE):
                data = getattr(e, "data", None)
                if isinstance(data, dict):
                    if ctype == CHECKPOINT_TYPE:
                        self.add_checkpoint(data)
                    else:
                        self.add_track(data)

    def add_checkpoint(self, data: Raw) -> None:
        uid = data.get("userEntryId")
        files = data.get("files")
        if not isinstance(uid, str) or not uid or not isinstance(files, dict):
            return
        files = {k: r for k, r in files.items() if isinstance(k, str) and isinstance(r, dict)}
        for key, rec in files.items():
            self._note(key, rec)
        # tracks written before this checkpoint (it came late) saw the files earlier, before
        # ama changed them: they describe "before this message" better than the snapshot
        files.update(self._pending.pop(uid, {}))
        cp: Raw = {"files": files}
        for field in ("git", "shadowCommit"):
            if data.get(field) is not None:
                cp[field] = data[field]
        self.checkpoints.pop(uid, None)  # a repeated checkpoint moves to the end
        self.checkpoints[uid] = cp

    def add_track(self, data: Raw) -> None:
        key, rec, uid = data.get("path"), data.get("record"), data.get("userEntryId")
        if not isinstance(key, str) or not key or not isinstance(rec, dict):
            return
        if isinstance(uid, str) and uid:
            cp = self.checkpoints.get(uid)
            if cp is not None:
                cp["files"].setdefault(key, rec)
            else:
                self._pending.setdefault(uid, {}).setdefault(key, rec)
        self._note(key, rec)

    def _note(self, key: str, rec: Raw) -> None:
        self.earliest.setdefault(key, rec)
        self.latest[key] = rec

    # --- queries ----------------------------------------------------------------------

    @property
    def tracked(self) -> list[str]:
        """Every file that appears in any record, in the order first seen."""
        return list(self.earliest)

    @property
    def current_turn(self) -> str | None:
        """The userEntryId of the newest checkpoint."""
        return next(reversed(self.checkpoints), None)

    def latest_shadow_commit(self) -> str | None:
        for cp in reversed(self.checkpoints.values()):
            commit = cp.get("shadowCommit")
            if isinstance(commit, str) and commit:
                return commit
        return None

    def kept(self, keep: int) -> list[str]:
        """The userEntryIds still offered as rewind points (the newest ``keep``)."""
        ids = list(self.checkpoints)
        return ids[-keep:] if keep > 0 else []

    def target_record(self, uid: str, key: str) -> Raw | None:
        """The record of ``key`` at checkpoint ``uid``, else the file's earliest record."""
        cp = self.checkpoints.get(uid)
        if cp is not None:
            rec = cp["files"].get(key)
            if rec is not None:
                return rec
        return self.earliest.get(key)
