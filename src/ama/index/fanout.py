"""Spread a scan over the machine's cores with ``fork`` (POSIX), results back by ``marshal``.

The scans (``--no-cache`` or no usable index) read every session file; on a machine with
several cores each forked child reads its share of the files.  Results must be plain data
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
    children: list[tuple[int, int, list[int]]] = []
    for g in groups[1:]:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: compute, send, leave without running the parent's cleanups
            code = 1
            try:
                os.close(r)
                data = marshal.dumps(work(g))  # type: ignore[arg-type]
                with os.fdopen(w, "wb") as out:
                    out.write(data)
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        children.append((pid, r, g))
    results = [work(groups[0])]
    for pid, r, g in children:
        with os.fdopen(r, "rb") as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) == 0 and data:
            results.append(marshal.loads(data))
        else:
            results.append(work(g))
    return results
