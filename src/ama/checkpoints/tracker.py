"""``CheckpointTracker``: records file checkpoints in a session and restores them.

    tracker = CheckpointTracker(session=s, cwd=cwd, data_dir=data_dir, mode="tools")
    agent.before_write, agent.after_write = tracker.before_write, tracker.after_write
    tracker.checkpoint(user_entry.id)          # right after each new-turn user message
    tracker.restore(user_entry.id, dry_run=True)

Timing (docs/rewind-plan.md §2): ``before_write`` backs a file up the first time edit/write
touch it (``ama.checkpoint-track``); ``checkpoint`` re-snapshots every tracked file as it is
on disk, reusing the previous record without reading when size, mode and mtime are
unchanged, and, in ``shadow-git`` mode, commits the whole work tree to the shadow repository.
Failures are reported through ``notify`` and never raised into the tool that writes.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat as st_mod
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ama.checkpoints.blobs import BlobStore
from ama.checkpoints.gc import register_sessions_dir
from ama.checkpoints.githead import read_git_head
from ama.checkpoints.history import History
from ama.checkpoints.records import (
    CHECKPOINT_TYPE,
    TRACK_TYPE,
    VERSION,
    CheckpointData,
    CodeRestoreResult,
    key_path,
    path_key,
)
from ama.errors import AmaError, InvalidArguments

if TYPE_CHECKING:
    from ama.checkpoints.restore import Target
    from ama.checkpoints.shadow import ShadowGit

#: shadow-git guard rails: more files than this (not ignored), or a slower snapshot
SHADOW_MAX_FILES = 20_000
SHADOW_MAX_SECONDS = 3.0

MODES = ("tools", "shadow-git", "off")


def default_mode(configured: str | None, *, sandbox_bash: str | None) -> str:
    """The checkpoint mode of a session: an explicit ``checkpoints.mode`` (user or project
    file, ``AMA_CHECKPOINTS``) wins; without one, ``shadow-git`` when ``sandbox.bash`` is
    ``auto`` -- sandboxed commands then run without asking, and the shadow snapshot makes
    whatever they changed one rewind away -- else ``tools``.  The shadow-git guard rails
    (file count, snapshot time) still fall back to ``tools``."""
    if configured in MODES:
        return configured
    return "shadow-git" if sandbox_bash == "auto" else "tools"
#: a file modified this recently may still change within the same timestamp tick: its
#: record gets no mtime, so the next checkpoint reads it instead of trusting the stat
RACY_NS = 2_000_000_000
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

Raw = dict[str, Any]


class CheckpointTracker:
    def __init__(
        self,
        *,
        session: Any,
        cwd: str,
        data_dir: str | os.PathLike[str],
        mode: str = "tools",
        max_file_bytes: int = 5 << 20,
        keep: int = 100,
        notify: Callable[[str], None] | None = None,
        shadow_max_files: int = SHADOW_MAX_FILES,
        shadow_max_seconds: float = SHADOW_MAX_SECONDS,
    ) -> None:
        self.session = session
        self.cwd = os.path.abspath(cwd)
        self.data_dir = os.fspath(data_dir)
        self.mode = mode if mode in MODES else "tools"
        self.max_file_bytes = max_file_bytes
        self.keep = keep
        self.notify_fn = notify
        self.shadow_max_files = shadow_max_files
        self.shadow_max_seconds = shadow_max_seconds
        self.blobs = BlobStore(self.data_dir)
        self.history = History()
        self.enabled = self.mode != "off" and bool(getattr(session, "persisted", True))
        #: key -> sha256 of what ama last wrote there: from this process's writes, and on
        #: opening a session from the ``details.sha256`` of its edit/write results, so that
        #: rewinding the last turn from a new process sees ama's own work as known
        self.last_written: dict[str, str] = {}
        if self.enabled:
            self.history.replay(session.entries)
            self._replay_writes(session.entries)
        self._failed: set[str] = set()
        self._lock = threading.RLock()
        self._shadow: ShadowGit | None = None
        self._shadow_checked = False
        #: shadow-git: the snapshot taken after the latest bash command, newer than any
        #: checkpoint's (this process only; the next checkpoint supersedes it)
        self._after_command: str | None = None
        self._registered = False

    def _replay_writes(self, entries: Any) -> None:
        for e in entries:
            msg = getattr(e, "message", None)
            if getattr(msg, "tool_name", None) not in ("edit", "write") or getattr(msg, "is_error", True):
                continue
            details = getattr(msg, "details", None)
            if not isinstance(details, dict):
                continue
            path, sha = details.get("path"), details.get("sha256")
            if isinstance(path, str) and path and isinstance(sha, str) and len(sha) == 64:
                self.last_written[self.key(path)] = sha

    # --- helpers ----------------------------------------------------------------------

    def _notify(self, text: str) -> None:
        if self.notify_fn is not None:
            try:
                self.notify_fn(text)
            except Exception:
                pass

    def key(self, path: str) -> str:
        return path_key(self.cwd, os.path.join(self.cwd, path))

    def _abs(self, key: str) -> str:
        return key_path(self.cwd, key)

    def _register(self) -> None:
        """Make GC see this session's directory (once per tracker)."""
        if self._registered:
            return
        self._registered = True
        path = getattr(self.session, "path", None)
        if not path:
            return
        d = os.path.dirname(os.path.abspath(path))
        if os.path.basename(d).startswith("--"):  # <sessions>/--<cwd>--/<file>.jsonl
            d = os.path.dirname(d)
        try:
            register_sessions_dir(self.data_dir, d)
        except OSError as e:
            self._notify(f"checkpoints: could not register {d} for cleanup: {e}")

    def _latest_user_entry(self) -> str | None:
        from ama.messages import UserMessage

        for e in reversed(getattr(self.session, "entries", [])):
            if isinstance(getattr(e, "message", None), UserMessage):
                return str(e.id)
        return None

    def _record(self, path: str, prev: Raw | None) -> Raw:
        """The record of ``path`` as it is now; ``prev`` is reused when the stat says the
        file is unchanged, and its blob when the content is."""
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            if prev is not None and prev.get("blob") is None and not prev.get("skipped"):
                return prev
            return {"blob": None, "realParentDir": os.path.realpath(os.path.dirname(path))}
        mode = st_mod.S_IMODE(st.st_mode)
        if not st_mod.S_ISREG(st.st_mode):
            if prev is not None and prev.get("skipped") == "not_regular":
                return prev
            return {
                "blob": None,
                "skipped": "not_regular",
                "realParentDir": os.path.realpath(os.path.dirname(path)),
            }
        if (
            prev is not None
            and prev.get("mtimeNs") == st.st_mtime_ns
            and prev.get("size") == st.st_size
            and prev.get("mode") == mode
            and (prev.get("blob") is not None or prev.get("skipped") == "too_large")
        ):
            return prev
        rec: Raw = {"blob": None, "mode": mode, "size": st.st_size}
        if time.time_ns() - st.st_mtime_ns >= RACY_NS:
            rec["mtimeNs"] = st.st_mtime_ns
        rec["realParentDir"] = (prev or {}).get("realParentDir") or os.path.realpath(os.path.dirname(path))
        if st.st_size > self.max_file_bytes:
            rec["skipped"] = "too_large"
            return rec
        try:
            fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):
            return {"blob": None, "realParentDir": rec["realParentDir"]}  # deleted meanwhile
        except OSError as e:
            if e.errno != errno.ELOOP:
                raise
            return {"blob": None, "skipped": "not_regular", "realParentDir": rec["realParentDir"]}
        try:
            fst = os.fstat(fd)
            if not st_mod.S_ISREG(fst.st_mode):
                return {"blob": None, "skipped": "not_regular", "realParentDir": rec["realParentDir"]}
            if (fst.st_dev, fst.st_ino, fst.st_mtime_ns) != (st.st_dev, st.st_ino, st.st_mtime_ns):
                rec.pop("mtimeNs", None)  # replaced meanwhile: what we read is not what we stat'ed
            chunks = []
            size = 0
            while size <= self.max_file_bytes and (chunk := os.read(fd, 1 << 20)):
                chunks.append(chunk)
                size += len(chunk)
        finally:
            os.close(fd)
        data = b"".join(chunks)
        if len(data) > self.max_file_bytes:
            rec.update(size=len(data), skipped="too_large")
            rec.pop("mtimeNs", None)
            return rec
        sha = hashlib.sha256(data).hexdigest()
        if prev is None or prev.get("blob") != sha or not self.blobs.has(sha):
            self.blobs.put(data)
        rec["blob"] = sha
        rec["size"] = len(data)
        if len(data) != st.st_size:
            rec.pop("mtimeNs", None)  # it changed while we read it
        return rec

    # --- the write hooks --------------------------------------------------------------

    def before_write(self, path: str) -> None:
        """edit/write are about to change ``path``: back it up on first touch."""
        if not self.enabled:
            return
        try:
            with self._lock:
                key = self.key(path)
                if key in self.history.latest or key in self._failed:
                    return
                self._register()
                rec = self._record(self._abs(key), None)
                uid = self.history.current_turn or self._latest_user_entry()
                data = {"v": VERSION, "userEntryId": uid, "path": key, "record": rec}
                self.session.append_custom(TRACK_TYPE, data)
                self.history.add_track(data)
        except Exception as e:  # a backup must never stop an edit
            self._failed.add(self.key(path))
            self._notify(f"checkpoints: could not back up {path} before writing it: {e}")

    def after_write(self, path: str, data: bytes) -> None:
        if not self.enabled:
            return
        with self._lock:
            self.last_written[self.key(path)] = hashlib.sha256(data).hexdigest()

    # --- checkpoints ------------------------------------------------------------------

    def checkpoint(self, user_entry_id: str) -> CheckpointData | None:
        """Record the state before the new-turn user message ``user_entry_id``."""
        if not self.enabled:
            return None
        try:
            with self._lock:
                self._failed.clear()
                latest = self.history.latest
                files: dict[str, Raw] = {}
                unreadable = []
                for key in self.history.tracked:
                    try:
                        files[key] = self._record(self._abs(key), latest.get(key))
                    except OSError as e:  # keep what we knew rather than lose the file
                        files[key] = latest[key]
                        unreadable.append(f"{key} ({e.strerror or e})")
                if unreadable:
                    self._notify(
                        "checkpoints: could not read "
                        + ", ".join(unreadable[:5])
                        + (f" and {len(unreadable) - 5} more" if len(unreadable) > 5 else "")
                        + "; their previous records are kept"
                    )
                data: Raw = {"v": VERSION, "userEntryId": user_entry_id, "files": files}
                git = read_git_head(self.cwd)
                if git is not None:
                    data["git"] = git
                if self.mode == "shadow-git":
                    commit = self._shadow_snapshot(user_entry_id)
                    if commit:
                        data["shadowCommit"] = commit
                        self._after_command = None
                if files or "shadowCommit" in data:
                    self._register()
                self.session.append_custom(CHECKPOINT_TYPE, data)
                self.history.add_checkpoint(data)
                return CheckpointData.from_json(data)
        except Exception as e:
            self._notify(f"checkpoints: could not record a checkpoint: {e}")
            return None

    def checkpoints(self) -> dict[str, CheckpointData]:
        return {
            uid: CheckpointData.from_json({"userEntryId": uid, **cp})
            for uid, cp in self.history.checkpoints.items()
        }

    def has_checkpoint(self, user_entry_id: str) -> bool:
        return user_entry_id in self.history.kept(self.keep)

    def git_hint(self, user_entry_id: str) -> dict | None:
        cp = self.history.checkpoints.get(user_entry_id)
        recorded = cp.get("git") if cp else None
        if not isinstance(recorded, dict) or not recorded.get("head"):
            return None
        now = read_git_head(self.cwd)
        if now is None or now.get("head") == recorded["head"]:
            return None
        out = {"recordedHead": recorded["head"], "currentHead": now["head"]}
        if recorded.get("branch"):
            out["recordedBranch"] = recorded["branch"]
        if now.get("branch"):
            out["currentBranch"] = now["branch"]
        return out

    # --- shadow git -------------------------------------------------------------------

    def _latest_shadow(self) -> str | None:
        return self._after_command or self.history.latest_shadow_commit()

    def after_command(self) -> None:
        """A bash command ran (shadow-git only): snapshot the work tree, so that a rewind
        counts what the command changed as known -- ama's own doing, restored -- and not as
        a change made by someone else (a conflict).  Kept in memory: after a restart, the
        changes of the last turn's commands are conflicts again.  Never raises."""
        if not self.enabled or self.mode != "shadow-git":
            return
        with self._lock:
            commit = self._shadow_snapshot("after command")
            if commit is not None:
                self._after_command = commit

    def _downgrade(self, why: str) -> None:
        self.mode = "tools"
        self._shadow = None
        self._notify(
            f"checkpoints: shadow-git is off for this session ({why}); edit/write changes are still tracked"
        )

    def _shadow_ready(self) -> ShadowGit | None:
        if self._shadow is not None or self._shadow_checked:
            return self._shadow
        self._shadow_checked = True
        from ama.checkpoints.shadow import ShadowError, ShadowGit

        git = shutil.which("git")
        if git is None:
            self._downgrade("git was not found on PATH")
            return None
        real = os.path.realpath(self.cwd)
        if real == os.path.realpath(os.path.expanduser("~")) or os.path.dirname(real) == real:
            self._downgrade(f"{real} is the home or root directory")
            return None
        sh = ShadowGit(self.data_dir, self.cwd, git=git)
        try:
            n = sh.count_files(self.shadow_max_files)
        except (ShadowError, OSError) as e:
            self._downgrade(f"the shadow repository could not be set up: {e}")
            return None
        if n > self.shadow_max_files:
            self._downgrade(
                f"the workspace has more than {self.shadow_max_files:,} files that are not ignored"
            )
            return None
        self._shadow = sh
        return sh

    def _shadow_snapshot(self, uid: str) -> str | None:
        sh = self._shadow_ready()
        if sh is None:
            return None
        from ama.checkpoints.shadow import ShadowError

        t0 = time.monotonic()
        try:
            tree = sh.write_tree()
            ref = str(getattr(self.session, "id", "") or "session")
            commit = sh.commit(
                tree, f"ama checkpoint {uid}", parent=self._latest_shadow(), ref=ref
            )
        except (ShadowError, OSError) as e:
            self._downgrade(f"a snapshot failed: {e}")
            return None
        took = time.monotonic() - t0
        # the snapshot that first builds this process's index hashes every file once; the
        # guard is about what every turn costs, so that one is not held against it
        if took > self.shadow_max_seconds and not sh.cold:
            self._downgrade(f"a snapshot took {took:.1f} s, more than {self.shadow_max_seconds:g} s")
        return commit

    # --- restoring --------------------------------------------------------------------

    def _known(self, key: str, sha: str) -> bool:
        """Conflict detection: ``sha`` (of the current content) is what ama last wrote there
        or what the latest checkpoint recorded."""
        if self.last_written.get(key) == sha:
            return True
        rec = self.history.latest.get(key)
        return rec is not None and rec.get("blob") == sha

    def _tools_targets(self, uid: str) -> list[Target]:
        from ama.checkpoints import plan

        return plan.tools_targets(self.cwd, self.history, uid, self.history.tracked, self.blobs, self._known)

    def _targets(self, uid: str) -> tuple[list[Target], list[dict]]:
        """What restoring ``uid`` wants; may raise ``ShadowError``."""
        from ama.checkpoints import plan

        cp = self.history.checkpoints[uid]
        keys = self.history.tracked
        commit = cp.get("shadowCommit")
        sh = self._shadow_ready() if self.mode == "shadow-git" and isinstance(commit, str) else None
        if isinstance(commit, str) and sh is not None and sh.has_commit(commit):
            inside = [k for k in keys if not os.path.isabs(k)]
            targets, skipped, covered = plan.shadow_targets(
                sh,
                self.cwd,
                commit,
                self._latest_shadow(),
                inside,
                max_bytes=self.max_file_bytes,
                known=self._known,
            )
            rest = [k for k in keys if k not in covered]
            return targets + plan.tools_targets(
                self.cwd, self.history, uid, rest, self.blobs, self._known
            ), skipped
        return self._tools_targets(uid), []

    def _require(self, uid: str) -> None:
        if not self.enabled or not self.has_checkpoint(uid):
            raise AmaError("no_checkpoint", f"there is no file checkpoint for entry {uid}")

    def restore(
        self, user_entry_id: str, *, dry_run: bool = False, on_conflict: str = "skip", read_files: Any = None
    ) -> CodeRestoreResult:
        """Put tracked files back as checkpoint ``user_entry_id`` recorded them."""
        if on_conflict not in ("skip", "overwrite"):
            raise InvalidArguments(f"onConflict must be skip or overwrite, not {on_conflict!r}")
        from ama.checkpoints.restore import apply
        from ama.checkpoints.shadow import ShadowError

        with self._lock:
            self._require(user_entry_id)
            try:
                targets, skipped = self._targets(user_entry_id)
            except ShadowError as e:
                self._notify(
                    f"checkpoints: the shadow repository could not be read ({e}); restoring edit/write records"
                )
                targets, skipped = self._tools_targets(user_entry_id), []
            result, done = apply(targets, dry_run=dry_run, overwrite=on_conflict == "overwrite")
            result.skipped = sorted(result.skipped + skipped, key=lambda s: s["path"])
            if not dry_run:
                for d in done:
                    if d.sha256 is not None:
                        self.last_written[d.target.key] = d.sha256
                    else:
                        self.last_written.pop(d.target.key, None)
                    if read_files is not None:
                        read_files.forget(d.target.path)
        if result.failed and not result.restored and not result.deleted:
            first = result.failed[0]
            raise AmaError(
                "rewind_failed",
                f"no file was restored: {first['path']}: {first['message']}"
                + (f" (and {len(result.failed) - 1} more)" if len(result.failed) > 1 else ""),
                data=result.to_json(),
            )
        return result

    def differing_files(self, user_entry_id: str) -> list[str]:
        """Files whose content now differs from checkpoint ``user_entry_id`` (tracked files,
        and in shadow-git mode every file of the snapshot)."""
        if not self.enabled or user_entry_id not in self.history.checkpoints:
            return []
        from ama.checkpoints.restore import differs
        from ama.checkpoints.shadow import ShadowError

        with self._lock:
            try:
                targets, _ = self._targets(user_entry_id)
            except ShadowError:
                targets = self._tools_targets(user_entry_id)
            return sorted(t.key for t in targets if not t.skipped and differs(t))
