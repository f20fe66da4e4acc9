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
import marshal
import os
import sqlite3
import stat
from collections.abc import Callable

try:
    from _blake2 import blake2b  # what hashlib uses, without hashlib's OpenSSL import (~5 ms)
except ImportError:  # pragma: no cover
    from hashlib import blake2b

from ama.index.db import IndexUnavailable, no_wait, unusable
from ama.index.rows import INDEX_FORMAT
from ama.index.timeutil import tz_key
from ama.session.layout import iter_session_files


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

    def __repr__(self) -> str:
        return f"RefreshInfo(root_id={self.root_id}, scanned={self.scanned}, cached={self.cached}, removed={self.removed})"


#: a directory (with its trailing "/") and names of session files in it: a run of the walk
#: (sorted), or the whole directory in the order it was read (sorted when paths are asked for)
Segment = tuple[str, list[str]]


class DiskState:
    """The session files of a root in the catalog's walk order (``iter_session_files``),
    each with ``(size, mtime_ns, inode)`` (of the file a link points to; of the link itself
    when it dangles).  Kept as runs of names per directory and one flat list of numbers;
    paths are made when asked."""

    __slots__ = ("_segments", "_values", "_paths")

    def __init__(self, segments: list[Segment], values: list[int]) -> None:
        self._segments = segments
        self._values = values  # size, mtime_ns, inode of each file
        self._paths: list[str] | None = None

    def __len__(self) -> int:
        return len(self._values) // 3

    @property
    def paths(self) -> list[str]:
        if self._paths is None:
            out: list[str] = []
            group: list[str] = []
            prefix = None
            for d, names in self._segments:  # a directory's runs sorted together
                if d != prefix:
                    out += [prefix + n for n in sorted(group)] if prefix is not None else []
                    prefix, group = d, []
                group += names
            if prefix is not None:
                out += [prefix + n for n in sorted(group)]
            self._paths = out
        return self._paths

    def as_dict(self) -> dict[str, tuple[int, int, int]]:
        """``path -> (size, mtime_ns, inode)`` (in no particular order)."""
        v = self._values
        stored = (d + n for d, names in self._segments for n in names)  # the order of the values
        return {p: (v[3 * k], v[3 * k + 1], v[3 * k + 2]) for k, p in enumerate(stored)}

    def digest(self) -> str:
        """A digest of everything a refresh compares (the paths, their sizes, mtimes and
        inodes, the index format and the time zone): equal digests, nothing to read again.
        BLAKE2b, 128 bits, over the files in the order the directories were read (unsorted:
        a directory read in another order only costs a comparison of the rows)."""
        h = blake2b(digest_size=16)
        h.update(f"{INDEX_FORMAT}\0{tz_key()}\0{len(self)}\0\0".encode("utf-8", "surrogateescape"))
        text = []
        for d, names in self._segments:  # unambiguous: names are never empty, nothing holds a NUL
            text.append(d)
            text.append("\0")
            text.append("\0".join(names))
            text.append("\0\0")
        h.update("".join(text).encode())  # UnicodeEncodeError: a name that is not UTF-8
        h.update(marshal.dumps(self._values, 2))  # version 2: no back-references, the same bytes every time
        return h.hexdigest()


_BY_FD = os.stat in os.supports_dir_fd and os.open in os.supports_dir_fd and os.listdir in os.supports_fd
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
_FMT, _REG = 0o170000, 0o100000  # stat.S_IFMT's mask, a regular file
_SPECIAL = (stat.S_IFIFO, stat.S_IFSOCK, stat.S_IFCHR, stat.S_IFBLK)

#: below this many files the stats are not worth a second process
FORK_MIN_FILES = 3000


def scan_disk(root: str, *, max_depth: int = 3) -> DiskState:
    """Walk ``root`` as :func:`~ama.session.layout.iter_session_files` does (the same
    paths in the same order: names sorted in each directory, dot-names skipped, directories
    entered up to ``max_depth`` without following links, FIFOs, sockets and devices left
    out) and stat each session file by its name relative to its directory; with many files
    and a free core, half of them in a forked child."""
    if not _BY_FD:  # pragma: no cover - Windows
        segments: list[Segment] = []
        values: list[int] = []
        for p in iter_session_files(root, max_depth=max_depth):
            try:
                st = os.stat(p)
            except OSError:
                try:
                    st = os.lstat(p)  # a dangling or looping link: listed as unreadable
                except OSError:
                    continue
            d, _, name = p.rpartition(os.sep)
            segments.append((d + os.sep, [name]))
            values += (st.st_size, st.st_mtime_ns, st.st_ino)
        return DiskState(segments, values)
    listed = _list(root, max_depth)
    total = sum(len(names) for _d, names in listed)
    if _may_fork(total):
        from ama.index import fanout

        halves = _halves(listed, total)
        # the child stats the first half while the parent stats the second
        (v2, dropped2), (v1, dropped1) = fanout.run(lambda g: _stat_part(halves[g[0]]), [[1], [0]])
        first, second = halves
        return DiskState(_merge(first, dropped1) + _merge(second, dropped2), v1 + v2)
    values, dropped = _stat_part(listed)
    return DiskState(_merge(listed, dropped), values)


def _may_fork(files: int) -> bool:
    """Whether to stat half of ``files`` in a second process: POSIX, no other thread in
    this process (a forked child gets only the calling thread), and either
    ``AMA_SCAN_WORKERS`` of 2 or more (tests, tuning; ``1``: never) or at least
    ``FORK_MIN_FILES`` files and a core to spare: more than one usable core, and a load
    average that leaves one idle (on a busy machine the child only waits for a core and
    costs ~10% more CPU: measured at a load of 7 on 2 cores, 10,000 files took 10 ms longer
    with the fork; on an idle one, ~5-10 ms less)."""
    import sys

    if not hasattr(os, "fork") or files < 2:
        return False
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False
    want = os.environ.get("AMA_SCAN_WORKERS", "").strip()
    if want.isdigit():
        return int(want) > 1
    if files < FORK_MIN_FILES:
        return False
    from ama.index.fanout import usable_cpus

    cpus = usable_cpus()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    return cpus > 1 and load <= cpus - 1


def _list(root: str, max_depth: int) -> list[Segment]:
    """The walk without the stats: runs of candidate names per directory, in walk order."""
    out: list[Segment] = []
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError:
        return out
    try:
        _list_dir(out, root, fd, 0, max_depth)
    finally:
        os.close(fd)
    return out


def _list_dir(out: list[Segment], d: str, fd: int, depth: int, max_depth: int) -> None:
    try:
        names = os.listdir(fd)
    except OSError:
        return
    prefix = d if d.endswith("/") else d + "/"
    # a workspace directory holds session files only: checked in C, not name by name (a
    # name never holds a NUL: each ".jsonl\0" is the end of one name, each "\0." a start);
    # left unsorted (``DiskState.paths`` sorts it)
    joined = "\0" + "\0".join(names) + "\0"
    if joined.count(".jsonl\0") == len(names) and "\0." not in joined:
        if names:
            out.append((prefix, names))
        return
    names.sort()
    run: list[str] = []
    for name in names:
        if name.startswith("."):
            continue
        if name.endswith(".jsonl"):
            run.append(name)
            continue
        if depth >= max_depth:
            continue
        try:
            if not stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                continue
            sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            continue
        if run:
            out.append((prefix, run))
            run = []
        try:
            _list_dir(out, prefix + name, sub, depth + 1, max_depth)
        finally:
            os.close(sub)
    if run:
        out.append((prefix, run))


def _stat_part(segments: list[Segment]) -> tuple[list[int], list[int] | None]:
    """Size, mtime and inode of each file that is kept, flat, and the positions of the names
    dropped (None: none) -- plain data, as it may come back from a forked child.  A name is
    dropped when it is a FIFO, socket or device (through links) or has gone; a link that
    leads nowhere is kept with its own stat."""
    values: list[int] = []
    add = values.append
    dropped: list[int] = []
    stat_at = os.stat
    k = 0
    for d, names in segments:
        try:
            fd = os.open(d, _DIR_FLAGS)
        except OSError:
            dropped.extend(range(k, k + len(names)))
            k += len(names)
            continue
        try:
            for name in names:
                try:
                    st = stat_at(name, dir_fd=fd)
                except OSError:
                    try:
                        st = stat_at(name, dir_fd=fd, follow_symlinks=False)
                    except OSError:
                        dropped.append(k)
                        k += 1
                        continue
                else:
                    mode = st.st_mode & _FMT
                    if mode != _REG and mode in _SPECIAL:
                        dropped.append(k)
                        k += 1
                        continue
                add(st.st_size)
                add(st.st_mtime_ns)
                add(st.st_ino)
                k += 1
        finally:
            os.close(fd)
    return values, dropped or None


def _merge(segments: list[Segment], dropped: list[int] | None) -> list[Segment]:
    """``segments`` without the names ``_stat_part`` dropped."""
    if not dropped:
        return segments
    drop = set(dropped)
    out: list[Segment] = []
    k = 0
    for d, names in segments:
        run = [n for j, n in enumerate(names, k) if j not in drop]
        k += len(names)
        if run:
            out.append((d, run))
    return out


def _halves(segments: list[Segment], total: int) -> tuple[list[Segment], list[Segment]]:
    """The segments cut in two runs of about ``total / 2`` names each, order kept."""
    half = total // 2
    first: list[Segment] = []
    acc = 0
    for i, (d, names) in enumerate(segments):
        if acc + len(names) >= half:
            cut = half - acc
            if cut:
                first.append((d, names[:cut]))
            rest = [(d, names[cut:])] if cut < len(names) else []
            return first, rest + segments[i + 1 :]
        first.append((d, names))
        acc += len(names)
    return first, []


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
