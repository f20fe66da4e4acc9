"""Read many session files on every core for a large index update (a build).

:func:`records` yields the :class:`~ama.index.record.FileRecord` of each path, in the
order of the paths, while forked workers read and extract the files; the caller (the
parent, ``index/update.py``) alone holds the SQLite connection and writes.  The workers are
forked after it opened the connection but never touch it: they only read session files,
compute (``record.read``) and write plain data to a pipe, then leave with ``os._exit``
(no cleanups, no finalizers of inherited objects, no garbage collection).

* Worker ``j`` of ``W`` reads the paths ``j, j + W, j + 2W, ...`` and writes one frame per
  path to its own pipe: an 8-byte length and the record as :mod:`marshal` data.  The
  parent reads the pipes round-robin, so the records come in path order.
* Memory stays bounded: a worker blocks when its pipe is full (1 MiB where the system
  allows), so it is at most a few files ahead of the parent.
* A worker dies with the parent: when the parent is gone, the worker's next write finds
  no reader (``EPIPE``) and it exits.  Each worker keeps no other process's pipe ends, so
  the parent's own read end is the only one.  The parent, when it stops early (an error,
  Ctrl-C), kills and reaps its workers.
* A frame the worker could not make (an exception while reading a file) comes back as an
  error frame, and a worker that died stops sending: the parent then reads those paths
  itself, so the result never depends on the fork.

``AMA_INDEX_WORKERS=N`` sets the number of workers (``1``: never fork; ``N >= 2`` also on
small updates, which the tests use).
"""

from __future__ import annotations

import contextlib
import gc
import marshal
import os
import signal
import struct
import sys
from collections.abc import Generator

from ama.index import record as R
from ama.index.timeutil import Days

#: an update reads its files in workers when they total more than this
PARALLEL_BYTES = 16 << 20
PIPE_BYTES = 1 << 20
_LEN = struct.Struct("<q")
_ERROR = -1  # a frame length: the worker failed on this path


def workers_for(total_bytes: int) -> int:
    """How many workers to read ``total_bytes`` of new files with (0: read them in the
    parent): one per core, at most 8, none for small updates."""
    if not hasattr(os, "fork"):
        return 0
    want = os.environ.get("AMA_INDEX_WORKERS", "")
    if want.isdigit():
        n = min(int(want), 64)
        return n if n >= 2 else 0
    if total_bytes <= PARALLEL_BYTES:
        return 0
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return min(cpus, 8) if cpus >= 2 else 0


def _worker(paths: list[str], w: int) -> None:
    """The body of a forked worker: never returns."""
    code = 0
    try:
        gc.disable()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it kills us if it stops
        days = Days()
        with os.fdopen(w, "wb", buffering=PIPE_BYTES) as out:
            for path in paths:
                try:
                    data = marshal.dumps(R.read(path, None, days).plain())
                except Exception:  # the parent reads this path itself (and sees the error)
                    out.write(_LEN.pack(_ERROR))
                    continue
                out.write(_LEN.pack(len(data)))
                out.write(data)
    except BaseException:  # a broken pipe: the parent is gone (or stopped reading)
        code = 1
    finally:
        os._exit(code)


class _Pool:
    def __init__(self, paths: list[str], n: int) -> None:
        self.pids: list[int] = []
        self.pipes: list[object | None] = []
        sys.stdout.flush()
        sys.stderr.flush()
        ends: list[int] = []  # every read end made so far: a child closes them all
        try:
            for j in range(n):
                r, w = os.pipe()
                with contextlib.suppress(AttributeError, OSError):
                    import fcntl

                    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
                ends.append(r)
                pid = os.fork()
                if pid == 0:  # the child
                    for fd in ends:
                        with contextlib.suppress(OSError):
                            os.close(fd)
                    _worker(paths[j::n], w)
                os.close(w)
                self.pids.append(pid)
                self.pipes.append(os.fdopen(r, "rb", buffering=PIPE_BYTES))
        except BaseException:
            self.close()
            for fd in ends[len(self.pipes) :]:
                with contextlib.suppress(OSError):
                    os.close(fd)
            raise

    def next(self, j: int) -> R.FileRecord | None:
        """The next record of worker ``j``; None when it failed on it or is gone."""
        f = self.pipes[j]
        if f is None:
            return None
        head = f.read(_LEN.size)  # type: ignore[attr-defined]
        if len(head) == _LEN.size:
            (n,) = _LEN.unpack(head)
            if n == _ERROR:
                return None
            data = f.read(n)  # type: ignore[attr-defined]
            if len(data) == n:
                try:
                    return R.from_plain(marshal.loads(data))
                except (ValueError, EOFError, TypeError):
                    pass
        self._stop(j)  # a worker that died: read its paths here
        return None

    def _stop(self, j: int) -> None:
        f = self.pipes[j]
        self.pipes[j] = None
        pid = self.pids[j]
        if pid:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if f is not None:
            with contextlib.suppress(OSError):
                f.close()  # type: ignore[attr-defined]
        if pid:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)
            self.pids[j] = 0

    def close(self) -> None:
        for j in range(len(self.pipes)):
            self._stop(j)

    def finish(self) -> None:
        """After the last record: every worker has exited on its own."""
        for j, f in enumerate(self.pipes):
            if f is not None:
                with contextlib.suppress(OSError):
                    f.close()  # type: ignore[attr-defined]
                self.pipes[j] = None
            pid = self.pids[j]
            if pid:
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, 0)
                self.pids[j] = 0


def records(paths: list[str], n: int, days: Days) -> Generator[R.FileRecord, None, None]:
    """``R.read(p, None, days)`` for each path, in order, computed by ``n`` workers (in
    this process when ``n < 2``)."""
    if n < 2 or len(paths) < 2:
        for p in paths:
            yield R.read(p, None, days)
        return
    n = min(n, len(paths))
    pool = _Pool(paths, n)
    try:
        for i, p in enumerate(paths):
            rec = pool.next(i % n)
            yield rec if rec is not None else R.read(p, None, days)
        pool.finish()
    finally:
        pool.close()
