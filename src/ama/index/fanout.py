"""Spread a scan over the machine's cores with ``fork`` (POSIX), results back by ``marshal``.

The scans (``--no-cache`` or no usable index) read every session file; on a machine with
several cores each forked child reads its share of the files: a fixed share (:func:`run`),
or small groups taken one after another from a common queue until none is left
(:func:`run_shared`), so that a process that runs slower (a busy core, files that take
longer) takes fewer.  Results must be plain data
(tuples, lists, dicts, str, int, float, None) and the caller must combine them so that the
outcome does not depend on how the files were split (sums of integers, sorted lists).
A child that fails is redone in the parent, so the result never depends on the fork.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of a start); mypy knows it
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, TypeVar

    T = TypeVar("T")

MIN_BYTES_PER_WORKER = 8 << 20  # not worth a process below this


def file_sizes(paths: Sequence[str]) -> list[int]:
    """The size of each file (0 when it cannot be read): the weights :func:`split` takes."""
    out = []
    for p in paths:
        try:
            out.append(os.stat(p).st_size)
        except OSError:
            out.append(0)
    return out


def read_whole(fd: int, size: int) -> bytes:
    """The file open at ``fd`` from its offset to its end: one read of ``size + 1`` bytes
    (``size``: what ``fstat`` said), more while it keeps coming (a file that grew since, or
    is beyond what one read gives: Linux stops at about 2 GB).  Raises OSError."""
    want = max(0, size) + 1
    data = os.read(fd, want)
    if len(data) < want and len(data) < _MAX_READ:
        return data
    parts = [data]
    while chunk := os.read(fd, 1 << 24):
        parts.append(chunk)
    return b"".join(parts)


_MAX_READ = 0x7FFFF000  # Linux reads at most this much at once


def usable_cpus() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def workers_for(total_bytes: int) -> int:
    """How many processes to scan ``total_bytes`` with: one per core, at most 8, none
    below 8 MB each.  ``AMA_SCAN_WORKERS=N`` sets the number (1: never fork)."""
    if not hasattr(os, "fork"):
        return 1
    want = workers_env()
    if want is not None:
        return max(1, min(want, 64))
    return max(1, min(usable_cpus(), 8, total_bytes // MIN_BYTES_PER_WORKER))


def workers_env() -> int | None:
    """``AMA_SCAN_WORKERS`` (tests, tuning), None when it is unset or not a number."""
    want = os.environ.get("AMA_SCAN_WORKERS", "").strip()
    return int(want) if want.isdigit() else None


def split(items: Sequence[Any], sizes: Sequence[int], parts: int) -> list[list[int]]:
    """Indexes of ``items`` in ``parts`` groups of about equal total size (order kept)."""
    total = sum(sizes) or 1
    groups: list[list[int]] = [[] for _ in range(parts)]
    acc = 0
    for i, size in enumerate(sizes):
        g = min(parts - 1, acc * parts // total)
        groups[g].append(i)
        acc += size
    return [g for g in groups if g]


def run(work: Callable[[list[int]], T], groups: list[list[int]]) -> list[T]:
    """``[work(g) for g in groups]``, the groups after the first in forked children."""
    if len(groups) <= 1:
        return [work(g) for g in groups]
    sys.stdout.flush()
    sys.stderr.flush()
    from functools import partial

    children = [(*_spawn(partial(work, g)), g) for g in groups[1:]]
    results = [work(groups[0])]
    for pid, r, g in children:
        got = _collect(pid, r)
        results.append(work(g) if got is _MISSING else got)
    return results


#: groups per process for :func:`run_shared` (the last groups even out the processes' ends)
GROUPS_PER_WORKER = 8
_TOKEN = 2  # bytes of a group's number in the queue (a pipe: each read takes one whole)
_QUEUE_BYTES = 4096  # what any pipe holds (Linux gives one page when a user has many pipes)


def run_shared(work: Callable[[list[int]], T], groups: list[list[int]], workers: int) -> list[T]:
    """``[work(g) for g in groups]``, computed by this process and ``workers - 1`` forked
    children, each taking the next group from a common queue as it finishes one.

    The queue is a pipe filled with the groups' numbers before the fork and closed for
    writing (a read of one number takes it whole; an empty pipe reads as its end).  Each
    child sends back its ``(number, result)`` pairs; a group whose result did not come
    back (the child failed or was killed) is computed here, so the result never depends on
    the fork, nor on which process computed which group."""
    n = len(groups)
    if workers <= 1 or n <= 1 or n * _TOKEN > _QUEUE_BYTES or not hasattr(os, "fork"):
        return [work(g) for g in groups]
    import contextlib
    import signal

    r, w = os.pipe()
    try:
        queue = b"".join(i.to_bytes(_TOKEN, "little") for i in range(n))
        while queue:  # (one write: no reader yet, the pipe must hold it all)
            queue = queue[os.write(w, queue) :]
    finally:
        os.close(w)
    sys.stdout.flush()
    sys.stderr.flush()
    children: list[tuple[int, int]] = []
    results: dict[int, T] = {}
    done = False
    try:
        for _ in range(min(workers, n) - 1):
            children.append(_spawn(lambda: _take(r, work, groups)))
        results.update(_take(r, work, groups))
        done = True
    finally:
        os.close(r)
        for pid, rr in children:
            if not done:  # (an error here, Ctrl-C): the children's work is not wanted
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            got = _collect(pid, rr)
            if done and got is not _MISSING:
                results.update(got)
    return [results[i] if i in results else work(groups[i]) for i in range(n)]


def _spawn(compute: Callable[[], Any]) -> tuple[int, int]:
    """Fork a child that sends ``compute()`` back by ``marshal``: ``(pid, fd to read it from)``.
    The caller flushes stdout and stderr first (else the child would write their buffers too)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, leave without running the parent's cleanups
        code = 1
        try:
            os.close(r)
            data = marshal.dumps(compute())
            with os.fdopen(w, "wb") as out:
                out.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    return pid, r


_MISSING = object()  # what :func:`_collect` gives for a child that failed


def _collect(pid: int, fd: int) -> Any:
    """Read what the child of :func:`_spawn` sent and reap it: its result, or
    :data:`_MISSING` when it did not end well or sent nothing."""
    with os.fdopen(fd, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) == 0 and data:
        return marshal.loads(data)
    return _MISSING


def _take(queue: int, work: Callable[[list[int]], T], groups: list[list[int]]) -> list[tuple[int, T]]:
    """Take groups from the queue until it is empty: ``(number, work(group))`` of each."""
    out = []
    while len(token := os.read(queue, _TOKEN)) == _TOKEN:
        i = int.from_bytes(token, "little")
        out.append((i, work(groups[i])))
    return out
