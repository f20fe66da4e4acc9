"""The writer's lease on a session file: an exclusive, non-blocking ``flock``.

One process writes a session file at a time.  The lock is taken on the session file
itself (readers never lock, so they never wait and never release it), on its own open
file description, so other file descriptors of the same process do not disturb it.  A
second writer fails at once with ``AmaError("busy")`` naming the holder's pid, which on
Linux is looked up in ``/proc/locks`` by the file's device and inode.
"""

from __future__ import annotations

import fcntl
import os

from ama.errors import Busy


def holder_pid(fd: int) -> int | None:
    """The pid holding a flock on the file open at ``fd``, if the OS tells (Linux)."""
    try:
        st = os.fstat(fd)
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    want_ino = str(st.st_ino)
    maj, mnr = os.major(st.st_dev), os.minor(st.st_dev)
    for line in lines:
        parts = line.split()
        # "1: FLOCK  ADVISORY  WRITE 12345 08:01:1234567 0 EOF" (blocked waiters carry "->")
        if "->" in parts or len(parts) < 6 or parts[1] != "FLOCK":
            continue
        dev_ino = parts[5].split(":")
        if len(dev_ino) != 3 or dev_ino[2] != want_ino:
            continue
        try:
            if int(dev_ino[0], 16) == maj and int(dev_ino[1], 16) == mnr:
                return int(parts[4])
        except ValueError:
            continue
    return None


def acquire(fd: int, path: str) -> None:
    """Take the lease on an open session file or raise Busy naming the holder."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = holder_pid(fd)
        who = f"process {pid}" if pid else "another process"
        raise Busy(f"session {path} is being written by {who}", data={"path": path, "pid": pid}) from None


def release(fd: int) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    except OSError:
        pass


class Lease:
    """A held lease on a session file (context manager); used by archive and trash, which
    must not touch a session another process is writing."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
        try:
            acquire(self.fd, path)
        except BaseException:
            os.close(self.fd)
            raise

    def close(self) -> None:
        if self.fd >= 0:
            release(self.fd)
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
