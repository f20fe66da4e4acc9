"""Open the index for a reader: connect, refresh the root, or say why it cannot be used.

Readers call :func:`open_current` and fall back to scanning the files on
:class:`~ama.index.db.IndexUnavailable` (missing and not creatable, locked beyond the busy
timeout, damaged, written by a newer ama).  :func:`fallback_note` is the one line a
command prints to stderr when the index was damaged rather than merely busy.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Callable

from ama.index.db import IndexUnavailable, connect, unusable
from ama.index.indexer import RefreshInfo, refresh

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of a start); mypy knows it
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")

MMAP_BYTES = 1 << 30


def open_current(root: str, *, progress: bool | None = None) -> tuple[sqlite3.Connection, RefreshInfo]:
    """A connection whose rows for ``root`` match the files now; the caller closes it.

    ``progress``: show a progress bar while (re)building; default: when stderr is a terminal."""
    if progress is None:
        progress = sys.stderr.isatty()
    db = connect()
    try:
        # pages read through a map instead of one pread each: a search reads the ~10 MB
        # vocabulary of 10,000 sessions (2,700 pages), a page of the catalog a few indexes
        db.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        info = refresh(db, os.path.abspath(root), progress=progress)
    except BaseException:
        db.close()
        raise
    return db, info


def fallback_note(err: IndexUnavailable) -> str | None:
    """A warning for stderr, or None when the index was only busy (another process is
    writing it) and scanning is the expected behaviour."""
    if "locked" in err.message or "busy" in err.message:
        return None
    return f"ama: warning: {err.message}; scanning the session files instead"


def note(err: IndexUnavailable) -> None:
    msg = fallback_note(err)
    if msg:
        print(msg, file=sys.stderr)


def with_index(root: str, fn: Callable[[sqlite3.Connection, RefreshInfo], T]) -> tuple[T] | None:
    """``(fn(db, info),)`` on a current index, or None when the index cannot be used (a
    one-line note on stderr when it is damaged rather than busy): scan instead."""
    try:
        db, info = open_current(root)
    except IndexUnavailable as err:
        note(err)
        return None
    try:
        return (fn(db, info),)
    except IndexUnavailable as err:
        note(err)
        return None
    except sqlite3.Error as e:
        note(unusable(e))
        return None
    finally:
        db.close()
