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
* A thread of the parent reads the pipes ahead into memory, up to ``BUFFER_BYTES``: the
  parent writes its rows in large batches (``update._Rows``), each a few hundred
  milliseconds inside SQLite (which releases the GIL), and the workers go on meanwhile
  (with only the pipes between them, they stopped when the pipes were full and the
  parent then waited for them: a fifth of a build's time).  Memory stays bounded: a
  worker blocks when its pipe is full and the thread stops reading at the limit.
* Workers run at a lower priority (``WORKER_NICE``): the parent's writing is the critical
  path, and they only have to stay ahead of it.
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

import collections
import contextlib
import gc
import marshal
import os
import signal
import struct
import sys
import threading
from collections.abc import Generator
from typing import BinaryIO

from ama.index import record as R
from ama.index.fanout import usable_cpus
from ama.index.timeutil import Days

#: an update reads its files in workers when they total more than this
PARALLEL_BYTES = 16 << 20
PIPE_BYTES = 1 << 20
#: how much lower the workers' priority is than the parent's: the parent's writing is the
#: build's critical path (it needs more CPU than all the workers together on two cores),
#: and the workers only have to stay ahead of it.  With three processes on two cores and
#: equal priorities the parent got ~80 % of a core; with the workers 5 or 10 lower, a
#: 10,000-session build took a median 13.3 s (7 builds) instead of 15.1 s (5 builds,
#: interleaved with those).
WORKER_NICE = 10
#: record bytes the parent holds read ahead of its writing (a batch of rows takes it a
#: few hundred milliseconds to write: the workers fill this meanwhile)
BUFFER_BYTES = 64 << 20
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
    cpus = usable_cpus()
    return min(cpus, 8) if cpus >= 2 else 0


def _worker(paths: list[str], w: int) -> None:
    """The body of a forked worker: never returns."""
    code = 0
    try:
        gc.disable()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it kills us if it stops
        with contextlib.suppress(OSError):
            os.nice(WORKER_NICE)
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


def _read_frame(f: BinaryIO) -> bytes | None:
    """The next frame of a worker's pipe: the record's bytes, ``b""`` when the worker
    failed on that path, or None when the worker is gone (its pipe ended or was cut)."""
    try:
        head = f.read(_LEN.size)
        if len(head) == _LEN.size:
            (n,) = _LEN.unpack(head)
            if n == _ERROR:
                return b""
            data = f.read(n)
            if len(data) == n and n > 0:
                return data
    except (OSError, ValueError):  # (a pipe closed under us)
        pass
    return None


class _Pool:
    """The forked workers, and a thread of the parent (``_pump``) that reads their frames
    in path order into memory, up to ``BUFFER_BYTES``, so that they keep working while the
    parent is busy writing a large batch of rows (it releases the GIL inside SQLite)."""

    def __init__(self, paths: list[str], n: int) -> None:
        self.pids: list[int] = []
        self.pipes: list[BinaryIO] = []
        self.count = len(paths)
        self.frames: collections.deque[bytes | None] = collections.deque()  # b"": an error frame
        self.held = 0  # bytes in ``frames``
        self.cond = threading.Condition()
        self.closed = False
        self.pumped = False  # the pump thread has ended
        self.thread: threading.Thread | None = None
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
            self._kill()
            self._reap()
            for fd in ends[len(self.pipes) :]:
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._close_pipes()
            raise
        self.thread = threading.Thread(target=self._pump, name="ama-index-pump", daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        """Read frame ``i`` from the pipe of worker ``i % n`` for every path, in order: the
        record's bytes, ``b""`` (the worker failed on the path) or None (it is gone)."""
        try:
            n = len(self.pipes)
            alive = [True] * n
            for i in range(self.count):
                j = i % n
                data = _read_frame(self.pipes[j]) if alive[j] else None
                if data is None:
                    alive[j] = False  # its remaining paths come as None too
                with self.cond:
                    while self.held > BUFFER_BYTES and not self.closed:
                        self.cond.wait()
                    if self.closed:
                        return
                    self.frames.append(data)
                    self.held += len(data) if data is not None else 0
                    self.cond.notify_all()
        finally:
            with self.cond:
                self.pumped = True
                self.cond.notify_all()

    def next(self) -> R.FileRecord | None:
        """The next record; None when its worker failed on it or is gone."""
        with self.cond:
            while not self.frames and not self.pumped:
                self.cond.wait()
            if not self.frames:  # the pump stopped early: the caller reads the path itself
                return None
            data = self.frames.popleft()
            if data is not None:
                self.held -= len(data)
            self.cond.notify_all()
        if not data:  # None, or the worker's error frame (b"")
            return None
        try:
            return R.from_plain(marshal.loads(data))
        except (ValueError, EOFError, TypeError):
            return None

    def _kill(self) -> None:
        """SIGKILL every worker not reaped yet (a reaped one's pid is 0, and ``os.kill(0)``
        would signal this whole process group)."""
        for pid in self.pids:
            if pid:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def _reap(self) -> None:
        for j, pid in enumerate(self.pids):
            if pid:
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, 0)
                self.pids[j] = 0

    def _close_pipes(self) -> None:
        for f in self.pipes:
            with contextlib.suppress(OSError):
                f.close()
        self.pipes = []

    def close(self) -> None:
        """Stop: the workers are killed (a worker blocked on its pipe or reading a file
        stops at once; one that has sent all its frames is exiting anyway), the pump thread
        ends (it sees the pipes' end), and all is reaped."""
        with self.cond:
            self.closed = True
            self.cond.notify_all()
        self._kill()
        if self.thread is not None:
            self.thread.join()
            self.thread = None
        self._reap()
        self._close_pipes()


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
        for p in paths:
            rec = pool.next()
            yield rec if rec is not None else R.read(p, None, days)
    finally:
        pool.close()
