"""Keep the index current with the session files of one sessions directory (a *root*).

:func:`refresh` stats every ``*.jsonl`` file (as the catalog finds them, by name relative
to its open directory) and compares size, mtime and inode with what the index saw.  When
the digest of the whole walk equals the one recorded at the last check that found the rows
current (``roots.verified``, cleared by any write to the root's rows), the rows are not read
at all; otherwise they are compared one by one:

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

import contextlib
import os
import sqlite3
from collections.abc import Callable

from ama.index.db import IndexUnavailable, no_wait, unusable
from ama.index.disk import DiskState, note_size, scan_disk
from ama.index.rows import INDEX_FORMAT
from ama.index.timeutil import tz_key

__all__ = ["Checked", "DiskState", "RefreshInfo", "changes", "disk_files", "meta", "refresh", "root_id", "scan_disk"]


class RefreshInfo:
    __slots__ = ("root_id", "scanned", "cached", "removed", "_disk")

    def __init__(self, root_id: int, scanned: int = 0, cached: int = 0, removed: int = 0) -> None:
        self.root_id = root_id
        self.scanned = scanned  # files read (wholly or from their last offset)
        self.cached = cached  # files answered from the index without reading
        self.removed = removed
        self._disk: DiskState | None = None

    @property
    def paths(self) -> list[str]:
        """The session files, in the catalog's walk order."""
        return [] if self._disk is None else self._disk.paths

    @property
    def files(self) -> int:
        """How many session files there are: ``len(paths)`` without making the paths (for
        10,000 files, ~3 ms of an indexed ``sessions list``)."""
        return 0 if self._disk is None else len(self._disk)

    def __repr__(self) -> str:
        return f"RefreshInfo(root_id={self.root_id}, scanned={self.scanned}, cached={self.cached}, removed={self.removed})"


def disk_files(root: str) -> dict[str, tuple[int, int, int]]:
    """``path -> (size, mtime_ns, inode)`` of the session files under ``root``."""
    return scan_disk(root).as_dict()


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
    busy timeout) or damaged.

    When the files are as they were at the last check that found the rows current (the
    digest of the walk, ``roots.verified``), the rows are not read at all; any write to a
    root's file rows clears that mark (triggers, ``db.py``)."""
    root = os.path.abspath(root)
    disk = scan_disk(root)
    _note_size(db, root, len(disk))
    try:
        digest = disk.digest()
    except UnicodeEncodeError:  # SQLite text is UTF-8: the index cannot hold such a path
        odd = next((p for p in [root, *disk.paths] if not _utf8(p)), root)
        raise IndexUnavailable(
            f"the index cannot hold the session file {odd!r}: its name is not valid UTF-8"
        ) from None
    try:
        if not force:
            row = db.execute("SELECT id, verified FROM roots WHERE path = ?", (root,)).fetchone()
            if row is not None and row[1] == digest:
                return _current(row[0], disk)
        files = disk.as_dict()
        checked = None
        if not force:
            checked = _check(db, root, files, digest)
            if checked.current:
                assert checked.rid is not None
                return _current(checked.rid, disk)
        from ama.index.update import write

        info = write(db, root, files, progress=progress, on_file=on_file, force=force, checked=checked)
        info._disk = disk
        return info
    except sqlite3.Error as e:
        raise unusable(e) from None


def _note_size(db: sqlite3.Connection, root: str, files: int) -> None:
    """Keep the hint of large roots (``disk.note_size``) beside the index's file."""
    try:
        row = db.execute("PRAGMA database_list").fetchone()  # main first
    except sqlite3.Error:
        return
    if row is not None and row[2]:
        note_size(os.path.dirname(row[2]), root, files)


def _utf8(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _current(rid: int, disk: DiskState) -> RefreshInfo:
    info = RefreshInfo(rid, cached=len(disk))
    info._disk = disk
    return info


class Checked:
    """What :func:`changes` found, and the index's generation when it looked: a writer
    that finds the same generation may take these instead of looking again (every write
    of rows moves the generation, ``update.write``).  (A plain class: ``typing`` is not
    loaded on this path.)"""

    __slots__ = ("generation", "rid", "changed", "removed", "rebuild")

    def __init__(
        self, generation: str | None, rid: int | None, changed: list[str], removed: list[str], rebuild: bool
    ) -> None:
        self.generation = generation
        self.rid = rid
        self.changed = changed
        self.removed = removed
        self.rebuild = rebuild

    @property
    def current(self) -> bool:
        """The root's rows are as the files are."""
        return self.rid is not None and not self.changed and not self.removed and not self.rebuild


def _check(db: sqlite3.Connection, root: str, disk: dict[str, tuple[int, int, int]], digest: str) -> Checked:
    """:func:`changes`, and when there are none, ``digest`` recorded as the root's verified
    state -- in the same transaction as the rows were read, so that the mark is never set
    on rows another process changed meanwhile (SQLite refuses to upgrade a read snapshot
    that is no longer the latest).  The mark is skipped when the index cannot be written
    at once (locked, read-only)."""
    db.execute("BEGIN")
    try:
        checked = Checked(meta(db, "generation"), *changes(db, root, disk))
        if checked.current:
            with no_wait(db), contextlib.suppress(sqlite3.OperationalError):
                db.execute("UPDATE roots SET verified = ? WHERE id = ?", (digest, checked.rid))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return checked
