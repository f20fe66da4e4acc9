"""Content-addressed backups: ``<dataDir>/file-history/blobs/<sha256[:2]>/<sha256>``.

A blob holds a file's original bytes (no compression, no newline or BOM changes).  It is
written to ``<name>.tmp-<pid>-<n>`` and renamed into place; an existing blob is never
rewritten (only touched, so that garbage collection sees it as recently used), except one
whose size shows it was cut short, which is replaced the same atomic way.  ``get`` checks
the hash, so a damaged blob reads as missing instead of restoring wrong bytes.
"""

from __future__ import annotations

import hashlib
import itertools
import os

from ama.checkpoints.paths import file_history_dir

HASH_CHUNK = 1 << 20
_seq = itertools.count()


def _is_sha(sha: str) -> bool:
    return len(sha) == 64 and all(c in "0123456789abcdef" for c in sha)


class BlobStore:
    def __init__(self, data_dir: str | os.PathLike[str]) -> None:
        self.root = os.path.join(file_history_dir(data_dir), "blobs")

    def path(self, sha: str) -> str:
        return os.path.join(self.root, sha[:2], sha)

    def has(self, sha: str) -> bool:
        return _is_sha(sha) and os.path.isfile(self.path(sha))

    def put(self, data: bytes) -> str:
        """Store ``data``; returns its sha256 (hex)."""
        sha = hashlib.sha256(data).hexdigest()
        self._store(sha, len(data), lambda f: f.write(data))
        return sha

    def put_file(self, path: str | os.PathLike[str]) -> str:
        """Store the bytes of the file at ``path`` (read in chunks); returns their sha256."""
        h = hashlib.sha256()
        os.makedirs(self.root, mode=0o700, exist_ok=True)
        tmp = os.path.join(self.root, f"incoming.tmp-{os.getpid()}-{next(_seq)}")
        size = 0
        try:
            with open(path, "rb") as src, open(tmp, "wb") as dst:
                os.chmod(tmp, 0o600)
                while chunk := src.read(HASH_CHUNK):
                    h.update(chunk)
                    dst.write(chunk)
                    size += len(chunk)
            sha = h.hexdigest()
            dest = self.path(sha)
            if not self._current(dest, size):
                os.makedirs(os.path.dirname(dest), mode=0o700, exist_ok=True)
                _install(tmp, dest)
            return sha
        finally:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass

    def get(self, sha: str) -> bytes | None:
        """The bytes of blob ``sha``, or None when it is missing or damaged."""
        if not _is_sha(sha):
            return None
        try:
            with open(self.path(sha), "rb") as f:
                data = f.read()
        except OSError:
            return None
        return data if hashlib.sha256(data).hexdigest() == sha else None

    # --- internals ------------------------------------------------------------------

    @staticmethod
    def _current(dest: str, size: int) -> bool:
        """True when a whole blob already sits at ``dest`` (then its mtime is refreshed)."""
        try:
            st = os.stat(dest)
        except OSError:
            return False
        if st.st_size != size:
            return False
        try:
            os.utime(dest)
        except OSError:
            pass
        return True

    def _store(self, sha: str, size: int, write) -> None:  # type: ignore[no-untyped-def]
        dest = self.path(sha)
        if self._current(dest, size):
            return
        d = os.path.dirname(dest)
        os.makedirs(d, mode=0o700, exist_ok=True)
        tmp = f"{dest}.tmp-{os.getpid()}-{next(_seq)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                write(f)
            _install(tmp, dest)
        finally:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _install(tmp: str, dest: str) -> None:
    """Move a finished temporary file to ``dest`` without rewriting a blob another writer
    put there meanwhile (a hard link fails on an existing name); a damaged blob of the wrong
    size is replaced.  The caller removes ``tmp``."""
    try:
        os.link(tmp, dest)
        return
    except FileExistsError:
        try:
            if os.stat(dest).st_size == os.stat(tmp).st_size:
                return
        except OSError:
            pass
    except OSError:  # a file system without hard links
        pass
    os.replace(tmp, dest)
