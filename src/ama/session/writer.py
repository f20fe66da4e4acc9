"""The one writer of a session file.

* The writer holds the file's lease (see ``lease.py``) for as long as it is open.
* Each entry is one ``write()`` of one whole line on an ``O_APPEND`` descriptor, so a
  reader (which takes no lock) sees whole lines, plus at most one partial last line while
  a write is in flight or after a crash.
* A file whose last line was cut by a crash is never rewritten: the next writer starts a
  new line first, so the partial line stays behind as a damaged line that readers skip.
"""

from __future__ import annotations

import errno
import os
import stat

from ama.errors import AmaError
from ama.session import lease


class SessionWriter:
    def __init__(self, fd: int, path: str) -> None:
        self.fd = fd
        self.path = path
        self._needs_newline = False

    @classmethod
    def create(cls, path: str, first_lines: bytes) -> SessionWriter:
        """Create a new session file (never an existing one) holding ``first_lines``.

        When the first lines cannot be written whole (a full disk, a file size limit), the
        file this call created is removed again -- a session without its header would only
        be a damaged file -- and so is the workspace directory if this call made it."""
        parent = os.path.dirname(path)
        made_dir = not os.path.isdir(parent)
        try:
            os.makedirs(parent, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            raise AmaError("exists", f"session file {path} already exists") from None
        except OSError as e:
            raise AmaError("io_error", f"cannot create session file {path}: {e.strerror}") from None
        w = cls(fd, path)
        try:
            lease.acquire(fd, path)
            w.append(first_lines)
        except BaseException:
            w._discard(made_dir)
            raise
        return w

    def _discard(self, made_dir: bool) -> None:
        """Remove the file :meth:`create` made (only if the path still names it)."""
        try:
            st, mine = os.stat(self.path), os.fstat(self.fd)
            if (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino):
                os.unlink(self.path)
        except OSError:
            pass
        self.close()
        if made_dir:
            try:
                os.rmdir(os.path.dirname(self.path))
            except OSError:
                pass

    @classmethod
    def open(cls, path: str) -> SessionWriter:
        """Open an existing session file for appending; raises Busy if another writer has it."""
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
        except FileNotFoundError:
            from ama.errors import NotFound

            raise NotFound(f"session file {path} does not exist") from None
        except OSError as e:
            raise AmaError("io_error", f"cannot open session file {path}: {e.strerror}") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise AmaError("io_error", f"cannot open session file {path}: not a regular file")
        try:
            lease.acquire(fd, path)
        except BaseException:
            os.close(fd)
            raise
        w = cls(fd, path)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            w._needs_newline = True
        return w

    def read_all(self) -> bytes:
        """The file's bytes, read through the leased descriptor: one read of the size the
        file has (no chunks joined into a second copy), then whatever was added meanwhile."""
        data = os.pread(self.fd, max(os.fstat(self.fd).st_size, 1 << 16), 0)
        while True:
            more = os.pread(self.fd, 1 << 20, len(data))
            if not more:
                return data
            data += more

    def append(self, data: bytes) -> None:
        """Append whole line(s); ``data`` ends with a newline."""
        if self.fd < 0:
            raise AmaError("closed", f"session file {self.path} is closed")
        if self._needs_newline:
            data = b"\n" + data
        view = memoryview(data)
        written = 0
        try:
            while written < len(data):
                n = os.write(self.fd, view[written:])
                written += n
        except OSError as e:
            # a partial line may be on disk: the next append starts a fresh line
            self._needs_newline = written > 0 or self._needs_newline
            msg = "the disk is full" if e.errno == errno.ENOSPC else e.strerror
            raise AmaError("io_error", f"cannot append to session file {self.path}: {msg}") from None
        self._needs_newline = False

    def sync(self) -> None:
        if self.fd >= 0:
            os.fsync(self.fd)

    def close(self) -> None:
        if self.fd >= 0:
            lease.release(self.fd)
            os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:  # pragma: no cover - safety net
        try:
            self.close()
        except Exception:
            pass
