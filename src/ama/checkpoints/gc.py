"""Clean-up and accounting of ``<dataDir>/file-history``.

* :func:`collect_garbage` (``ama sessions prune``): *mark* every blob a session file names
  (every ``*.jsonl`` under each sessions directory, its ``.trash/`` included, over the
  default directory, the ones given, and those registered in ``file-history/roots.json``),
  then *sweep* blobs nobody names whose mtime is older than ``min_age_s`` (a blob being
  written, or reused, by a running session is young: ``BlobStore.put`` touches it).
  Marking is conservative: any ``"blob": "<sha256>"`` in a file counts, and a session file
  that exists but cannot be read (permission, I/O error, a link to a missing disk) stops the
  sweep: nothing is deleted, and the result names the files (``unreadable``).  Non-regular
  files (a FIFO named ``*.jsonl``) are skipped without being opened.
* :func:`register_sessions_dir`: sessions kept outside the default directory
  (``--session-dir``, ``AMA_SESSION_DIR``) are remembered in ``roots.json`` so that their
  references are seen.  A registered directory that no longer exists is dropped.
* :func:`usage`: blob count and size, shadow repositories and their size (``ama doctor``).

Shadow repositories are never collected; deleting one is safe (its checkpoints are then
restored from their ``tools`` records).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import time

from ama.checkpoints.paths import file_history_dir
from ama.session.layout import iter_session_files

_BLOB_REF = re.compile(rb'"blob"\s*:\s*"([0-9a-f]{64})"')
_SHA = re.compile(r"^[0-9a-f]{64}$")
ROOTS_FILE = "roots.json"


def _roots_path(data_dir: str) -> str:
    return os.path.join(file_history_dir(data_dir), ROOTS_FILE)


def registered_dirs(data_dir: str | os.PathLike[str]) -> list[str]:
    try:
        with open(_roots_path(os.fspath(data_dir)), encoding="utf-8") as f:
            obj = json.load(f)
    except (OSError, ValueError):
        return []
    dirs = obj.get("sessionsDirs") if isinstance(obj, dict) else None
    return [d for d in dirs if isinstance(d, str)] if isinstance(dirs, list) else []


def _write_roots(data_dir: str, dirs: list[str]) -> None:
    path = _roots_path(data_dir)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"v": 1, "sessionsDirs": dirs}, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


class _RootsLock:
    def __init__(self, data_dir: str) -> None:
        self.path = _roots_path(data_dir) + ".lock"
        self.fd = -1

    def __enter__(self) -> _RootsLock:
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            import fcntl

            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - Windows
            pass
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


def _default_dir(data_dir: str) -> str:
    return os.path.abspath(os.path.join(data_dir, "sessions"))


def register_sessions_dir(data_dir: str | os.PathLike[str], sessions_dir: str | os.PathLike[str]) -> None:
    """Remember a sessions directory outside ``<dataDir>/sessions`` for GC."""
    data_dir = os.fspath(data_dir)
    d = os.path.abspath(os.fspath(sessions_dir))
    if d == _default_dir(data_dir) or d in registered_dirs(data_dir):
        return
    with _RootsLock(data_dir):
        dirs = registered_dirs(data_dir)
        if d not in dirs:
            _write_roots(data_dir, [*dirs, d])


def _scan(path: str, into: set[str]) -> bool:
    """Add the blobs ``path`` names to ``into``; False when it exists but cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        # vanished since it was listed (deleted: its blobs are free), unless it is a link
        # whose target is missing, e.g. on a disk that is not mounted now
        return not os.path.islink(path)
    except IsADirectoryError:
        return True  # a directory named *.jsonl names no blob
    except OSError as e:
        return e.errno == errno.ENXIO  # a socket-like special file: not a session
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return True  # a FIFO or device named *.jsonl: never read (it could block)
        with open(fd, "rb", closefd=False) as f:
            data = f.read()
    except OSError:
        return False
    finally:
        os.close(fd)
    if b'"blob"' in data:
        into.update(m.decode() for m in _BLOB_REF.findall(data))
    return True


def collect_garbage(
    data_dir: str | os.PathLike[str],
    sessions_dirs: list[str],
    *,
    min_age_s: float = 86400,
    dry_run: bool = False,
) -> dict:
    """Delete backup blobs no session file references and older than ``min_age_s``.

    Returns ``{referenced, removed, bytes, kept, sessions, missingDirs, unreadable, dryRun}``:
    referenced hashes found, blobs removed (or that would be) and their bytes, blobs kept,
    files scanned, and the session files that could not be read.  When ``unreadable`` is not
    empty nothing is removed: a blob such a file names cannot be told from an orphan."""
    data_dir = os.fspath(data_dir)
    registered = registered_dirs(data_dir)
    roots: list[str] = []
    for d in [_default_dir(data_dir), *(os.path.abspath(x) for x in sessions_dirs), *registered]:
        if d not in roots:
            roots.append(d)
    missing = [d for d in registered if not os.path.isdir(d)]
    if missing and not dry_run:
        with _RootsLock(data_dir):
            _write_roots(data_dir, [d for d in registered_dirs(data_dir) if d not in missing])
    referenced: set[str] = set()
    scanned = 0
    unreadable: list[str] = []
    for root in roots:
        for trash in (False, True):
            for path in iter_session_files(root, trash=trash):
                if not _scan(path, referenced):
                    unreadable.append(path)
                scanned += 1
    if unreadable:
        return {
            "referenced": len(referenced),
            "removed": 0,
            "bytes": 0,
            "kept": _count_blobs(os.path.join(file_history_dir(data_dir), "blobs")),
            "sessions": scanned,
            "missingDirs": missing,
            "unreadable": unreadable,
            "dryRun": dry_run,
        }
    blob_root = os.path.join(file_history_dir(data_dir), "blobs")
    now = time.time()
    removed = kept = freed = 0
    for sub in _listdir(blob_root):
        d = os.path.join(blob_root, sub)
        if not os.path.isdir(d):
            continue
        for name in _listdir(d):
            path = os.path.join(d, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            is_blob = bool(_SHA.match(name))
            if is_blob and name in referenced or now - st.st_mtime < min_age_s:
                kept += is_blob
                continue
            if not is_blob and ".tmp-" not in name:
                continue  # not ours
            if not dry_run:
                try:
                    os.unlink(path)
                except OSError:
                    kept += is_blob
                    continue
            removed += is_blob
            freed += st.st_size
        if not dry_run:
            try:
                os.rmdir(d)  # only when empty
            except OSError:
                pass
    return {
        "referenced": len(referenced),
        "removed": removed,
        "bytes": freed,
        "kept": kept,
        "sessions": scanned,
        "missingDirs": missing,
        "unreadable": [],
        "dryRun": dry_run,
    }


def _count_blobs(blob_root: str) -> int:
    return sum(1 for sub in _listdir(blob_root) for name in _listdir(os.path.join(blob_root, sub)) if _SHA.match(name))


def _listdir(path: str) -> list[str]:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def _tree_size(path: str) -> int:
    total = 0
    for d, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(d, name)).st_size
            except OSError:
                pass
    return total


def usage(data_dir: str | os.PathLike[str]) -> dict:
    """``{blobs, blobBytes, shadowRepos, shadowBytes}`` of ``<dataDir>/file-history``."""
    root = file_history_dir(data_dir)
    blob_root = os.path.join(root, "blobs")
    blobs = blob_bytes = 0
    for sub in _listdir(blob_root):
        d = os.path.join(blob_root, sub)
        for name in _listdir(d):
            if _SHA.match(name):
                try:
                    blob_bytes += os.lstat(os.path.join(d, name)).st_size
                    blobs += 1
                except OSError:
                    pass
    shadow_root = os.path.join(root, "shadow")
    repos = [os.path.join(shadow_root, n) for n in _listdir(shadow_root)]
    repos = [r for r in repos if os.path.isdir(r)]
    return {
        "blobs": blobs,
        "blobBytes": blob_bytes,
        "shadowRepos": len(repos),
        "shadowBytes": sum(_tree_size(r) for r in repos),
        "path": root,
    }
