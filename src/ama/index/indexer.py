"""Keep the index current with the session files of one sessions directory (a *root*).

:func:`refresh` stats every ``*.jsonl`` file (as the catalog finds them) and compares
size, mtime and inode with what the index saw:

* unchanged: nothing is read;
* grown (same inode, the bytes already read unchanged): only the appended bytes are read,
  continuing the file's saved extraction state;
* anything else (shrunk, rewritten, replaced): the file's rows are dropped and it is read
  from the start;
* gone: its rows are dropped.

A change of the local time zone invalidates the day buckets: everything is rebuilt.  So
does an index whose search table carries more dead rows (of files read again from the
start) than live ones.  The catalog summary of a changed file is recomputed from all its
bytes with ``ama.session.summary.summarize_bytes`` (what the scan lists).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable

from ama.index.db import unusable
from ama.index.rows import INDEX_FORMAT
from ama.index.timeutil import tz_key
from ama.session.layout import iter_session_files


class RefreshInfo:
    __slots__ = ("root_id", "scanned", "cached", "removed", "paths")

    def __init__(self, root_id: int, scanned: int = 0, cached: int = 0, removed: int = 0) -> None:
        self.root_id = root_id
        self.scanned = scanned  # files read (wholly or from their last offset)
        self.cached = cached  # files answered from the index without reading
        self.removed = removed
        self.paths: list[str] = []  # the session files, in the catalog's walk order

    def __repr__(self) -> str:
        return f"RefreshInfo(root_id={self.root_id}, scanned={self.scanned}, cached={self.cached}, removed={self.removed})"


def disk_files(root: str) -> dict[str, tuple[int, int, int]]:
    out: dict[str, tuple[int, int, int]] = {}
    for p in iter_session_files(root):
        try:
            st = os.stat(p)
        except OSError:
            try:
                st = os.lstat(p)  # a dangling or looping link: listed as unreadable
            except OSError:
                continue
        out[p] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def meta(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else row[0]


def root_id(db: sqlite3.Connection, root: str) -> int | None:
    row = db.execute("SELECT id FROM roots WHERE path = ?", (root,)).fetchone()
    return None if row is None else row[0]


def changes(
    db: sqlite3.Connection, root: str, disk: dict[str, tuple[int, int, int]]
) -> tuple[int | None, list[str], list[str], bool]:
    """``(root_id, changed paths, removed paths, rebuild everything?)`` without writing: a
    rebuild is due when the time zone or the index format changed."""
    rebuild = meta(db, "tz") != tz_key() or meta(db, "format") != INDEX_FORMAT
    rid = root_id(db, root)
    if rid is None:
        return None, sorted(disk), [], rebuild
    seen = {}
    for p, size, mtime, ino in db.execute(
        "SELECT path, size, mtime_ns, ino FROM files WHERE root_id = ?", (rid,)
    ):
        seen[p] = (size, mtime, ino)
    changed = [p for p, s in disk.items() if seen.get(p) != s]
    removed = [p for p in seen if p not in disk]
    return rid, changed, removed, rebuild


def refresh(
    db: sqlite3.Connection,
    root: str,
    *,
    progress: bool = False,
    on_file: Callable[[str], None] | None = None,
    force: bool = False,
) -> RefreshInfo:
    """Bring the rows of ``root`` up to date with the files (``force``: drop every row and
    read everything again); raises IndexUnavailable when the index is locked (beyond the
    busy timeout) or damaged."""
    root = os.path.abspath(root)
    disk = disk_files(root)
    try:
        if not force:
            rid, changed, removed, rebuild = changes(db, root, disk)
            if rid is not None and not changed and not removed and not rebuild:
                info = RefreshInfo(rid, cached=len(disk))
                info.paths = list(disk)
                return info
        from ama.index.update import write

        info = write(db, root, disk, progress=progress, on_file=on_file, force=force)
        info.paths = list(disk)
        return info
    except sqlite3.Error as e:
        raise unusable(e) from None
