"""The session files of a root as they are on disk: the walk, the stats, and a walk
started early.

:func:`scan_disk` walks a root as :func:`~ama.session.layout.iter_session_files` does and
stats every session file (:class:`DiskState`); the indexer compares that with what the
index saw (``indexer.refresh``).

A command that will read the index calls :func:`early` as soon as it knows its sessions
directory (``ama.cli.early``, before argparse, the command, SQLite and the index load: ~25
ms); for a directory that counted ``FORK_MIN_FILES`` files or more at its last refresh
(:data:`LARGE_ROOTS`), on a machine with a core idle, a forked child walks the root and
stats the files, in walk order, meanwhile.  When the
command's refresh asks for the same root, the parent takes the child's listing (through a
shared anonymous map) and stats files from the last one backwards until it meets the child:
each side publishes its position in the map (the child how many it has done, the parent the
lowest it has taken), and each stops where the other is, so a file may be stat'ed twice at
the meeting point but never not at all.  The result is what :func:`scan_disk` gives.  With
no child (one core, a busy machine, another thread, ``AMA_SCAN_WORKERS=1``, no ``fork``) or
a child that fails, :func:`scan_disk` walks as before.
"""

from __future__ import annotations

import marshal
import os
import stat

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:
    import mmap
    from collections.abc import Generator

try:
    from _blake2 import blake2b  # what hashlib uses, without hashlib's OpenSSL import (~5 ms)
except ImportError:  # pragma: no cover
    from hashlib import blake2b

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
        from ama.index.rows import INDEX_FORMAT
        from ama.index.timeutil import tz_key

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
    and a free core, half of them in a forked child; when :func:`early` started the walk
    of this root, its result (the same)."""
    root_key = os.path.abspath(root)
    early = Early.pending
    if early is not None and early.root == root_key and early.max_depth == max_depth:
        found = early.take()
        if found is not None:
            return found
    if not _BY_FD:  # pragma: no cover - Windows
        from ama.session.layout import iter_session_files

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


def _may_fork(files: int | None) -> bool:
    """Whether to stat half of ``files`` (None: a number not known yet) in a second process:
    POSIX, no other thread in this process (a forked child gets only the calling thread),
    and either ``AMA_SCAN_WORKERS`` of 2 or more (tests, tuning; ``1``: never) or at least
    ``FORK_MIN_FILES`` files and a core to spare: more than one usable core, and one of them
    idle now (:func:`_runnable`; on a busy machine the child only waits for a core and costs
    ~10% more CPU: measured at a load of 7 on 2 cores, 10,000 files took 10 ms longer with
    the fork; on an idle one, ~5-10 ms less)."""
    import sys

    if not hasattr(os, "fork") or (files is not None and files < 2):
        return False
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False
    from ama.index.fanout import usable_cpus, workers_env

    want = workers_env()
    if want is not None:
        return want > 1
    if files is not None and files < FORK_MIN_FILES:
        return False

    cpus = usable_cpus()
    return cpus > 1 and _runnable() <= cpus - 1


def _runnable() -> float:
    """How busy the machine is now, compared with ``cores - 1``: on Linux the tasks running
    or ready to run, this process included (the fourth field of ``/proc/loadavg``: unlike the
    load average, it does not count a command's own earlier moments, or commands run one
    after another); elsewhere the one-minute load average."""
    try:
        fd = os.open("/proc/loadavg", os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            data = os.read(fd, 256)
        finally:
            os.close(fd)
        return int(data.split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


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
    dropped (None: none) -- plain data, as it may come back from a forked child."""
    values: list[int] = []
    add = values.extend
    dropped: list[int] = []
    for k, st in enumerate(_stats(segments)):
        if st is None:
            dropped.append(k)
        else:
            add(st)
    return values, dropped or None


def _stats(segments: list[Segment], *, backwards: bool = False) -> Generator[tuple[int, int, int] | None, None, None]:
    """:func:`_stat_at` of each name of ``segments``, in walk order or from the last one,
    each directory opened once (None for every name of one that cannot be opened).  A name
    is stat'ed only when its value is asked for: a caller may stop between two."""
    for d, names in reversed(segments) if backwards else segments:
        try:
            fd = os.open(d, _DIR_FLAGS)
        except OSError:
            fd = -1
        try:
            for name in reversed(names) if backwards else names:
                yield None if fd < 0 else _stat_at(name, fd)
        finally:
            if fd >= 0:
                os.close(fd)


def _stat_at(name: str, fd: int, stat_at=os.stat) -> tuple[int, int, int] | None:
    """``(size, mtime_ns, inode)`` of a name in the directory open at ``fd``, or None when
    it is dropped: a FIFO, socket or device (through links), or gone.  A link that leads
    nowhere is kept with its own stat."""
    try:
        st = stat_at(name, dir_fd=fd)
    except OSError:
        try:
            st = stat_at(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            return None
    else:
        mode = st.st_mode & _FMT
        if mode != _REG and mode in _SPECIAL:
            return None
    return st.st_size, st.st_mtime_ns, st.st_ino


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


# --- the walk started early ------------------------------------------------------------------

#: bytes reserved for the shared map; memory is taken only as it is written (the listing, and
#: 24 bytes a file: ~60 bytes a file in all).  A walk that does not fit is done by the parent.
MAP_BYTES = 256 << 20
_HEAD = 64  # bytes before the listing: the slots below, 8 bytes each
_DONE, _LOW, _N, _LEN = 0, 1, 2, 3  # files the child has stat'ed (a prefix of the walk),
# the lowest one the parent has taken, files, bytes of the listing
_GONE = -1  # the size recorded for a dropped name


class Early:
    """A walk of ``root`` started in a forked child (:func:`early`); ``with`` it, so that a
    child whose walk was not asked for is stopped and reaped."""

    #: the walk started in this process and not taken yet
    pending: Early | None = None

    __slots__ = ("root", "max_depth", "pid", "fd", "map", "q", "u")

    def __init__(self, root: str, max_depth: int) -> None:
        self.root = root
        self.max_depth = max_depth
        self.pid = 0  # 0: no child (nothing to take)
        self.fd = -1
        self.map: mmap.mmap | None = None
        self.q: memoryview | None = None  # the map as signed 64-bit slots
        self.u: memoryview | None = None  # the same as unsigned ones (inodes)

    def __enter__(self) -> Early:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> None:
        import mmap
        import sys

        try:
            self.map = mmap.mmap(-1, MAP_BYTES)
        except (OSError, ValueError):  # no room for the reservation: walk when asked
            return
        self.q = memoryview(self.map).cast("q")
        self.u = memoryview(self.map).cast("Q")
        self.q[_LOW] = 1 << 62
        sys.stdout.flush()
        sys.stderr.flush()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: walk, stat, leave without the parent's clean-ups
            try:
                os.close(r)
                _walk_forward(self.root, self.max_depth, w, self.q, self.u)
            finally:
                os._exit(0)
        os.close(w)
        self.pid, self.fd = pid, r
        Early.pending = self

    def take(self) -> DiskState | None:
        """The walk (what :func:`scan_disk` gives), finished here; None when the child
        failed (the caller walks itself)."""
        if Early.pending is self:
            Early.pending = None
        try:
            return self._take() if self.pid else None
        except (OSError, ValueError, EOFError, TypeError):  # a damaged listing: walk again
            return None
        finally:
            self.close()

    def _take(self) -> DiskState | None:
        q, u, m = self.q, self.u, self.map
        assert q is not None and u is not None and m is not None
        if os.read(self.fd, 1) != b"L":
            return None
        n, size = q[_N], q[_LEN]
        listed: list[Segment] = marshal.loads(m[_HEAD : _HEAD + size])
        base = _base(size)
        # from the last file backwards, until the child's prefix reaches the next one
        tail: list[tuple[int, int, int] | None] = []
        j = n
        stats = _stats(listed, backwards=True)
        try:
            while j - 1 >= q[_DONE]:
                j -= 1
                q[_LOW] = j
                tail.append(next(stats))
        finally:
            stats.close()
        if os.read(self.fd, 1) != b"D":
            return None
        k = q[_DONE]  # the child's prefix, final: k >= j
        if k < j:  # pragma: no cover - impossible (each side stops where the other is)
            return None
        values = q[base : base + 3 * k].tolist()
        dropped: list[int] = []
        if k and min(values[2::3]) < 0:  # an inode at or beyond 2**63 (read signed)
            values[2::3] = u[base + 2 : base + 3 * k : 3].tolist()
        if k and min(values[0::3]) < 0:  # names the child dropped
            dropped = [i for i in range(k) if values[3 * i] == _GONE]
            gone = set(dropped)
            values = [v for i in range(k) if i not in gone for v in values[3 * i : 3 * i + 3]]
        for t in range(n - k - 1, -1, -1):  # index n - 1 - t, ascending
            st = tail[t]
            if st is None:
                dropped.append(n - 1 - t)
            else:
                values += st
        return DiskState(_merge(listed, dropped or None), values)

    def close(self) -> None:
        """Stop and reap the child (if it is still walking), release the map."""
        if Early.pending is self:
            Early.pending = None
        if self.pid:
            try:
                os.kill(self.pid, 9)  # SIGKILL: it holds nothing but the map
            except OSError:
                pass
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = 0
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        for view in (self.q, self.u):
            if view is not None:
                view.release()
        self.q = self.u = None
        if self.map is not None:
            self.map.close()
            self.map = None


def _base(listing_bytes: int) -> int:
    """The slot of the first file's values: after the listing, 8-byte aligned."""
    return (_HEAD + listing_bytes + 7) // 8


def _walk_forward(root: str, max_depth: int, w: int, q: memoryview, u: memoryview) -> None:
    """The child: publish the listing ("L" on the pipe), stat the files in walk order until
    the parent's part begins, say "D".  Anything else ("X", or nothing) makes the parent walk
    itself."""
    try:
        listed = _list(root, max_depth)
        blob = marshal.dumps(listed)
        n = sum(len(names) for _d, names in listed)
        base = _base(len(blob))
        if base + 3 * n > len(q):
            os.write(w, b"X")
            return
        q.obj[_HEAD : _HEAD + len(blob)] = blob  # type: ignore[index]
        q[_N], q[_LEN] = n, len(blob)
        os.write(w, b"L")
        i = 0
        stats = _stats(listed)
        try:
            while i < n and i < q[_LOW]:
                st = next(stats)
                j = base + 3 * i
                if st is None:
                    q[j] = _GONE
                else:
                    q[j], q[j + 1], u[j + 2] = st
                i += 1
                q[_DONE] = i
        finally:
            stats.close()
        os.write(w, b"D")
    except BaseException:  # (an mtime beyond 64 bits, an interrupt...): the parent walks
        os.write(w, b"X")


def early(root: str, *, data_dir: str, max_depth: int = 3) -> Early:
    """Start walking ``root`` (as :func:`scan_disk` will be asked to) in a forked child when
    that may pay: the root counted at least ``FORK_MIN_FILES`` files at its last refresh
    (:func:`large_roots` of ``data_dir``, the index's directory) and a core is spare (POSIX,
    no other thread, no walk pending: as for the forked half of :func:`scan_disk`), or
    ``AMA_SCAN_WORKERS`` is 2 or more.  Use as ``with early(...): ...``; without a child the
    object does nothing."""
    from ama.index.fanout import workers_env

    e = Early(os.path.abspath(root), max_depth)
    wanted = (workers_env() or 0) > 1 or e.root in large_roots(data_dir)
    if wanted and Early.pending is None and _BY_FD and _may_fork(None):
        e._start()
    return e


#: ``<data dir>/index.large-roots``: the roots (absolute paths, each ended by a NUL) whose
#: last refresh counted at least ``FORK_MIN_FILES`` session files -- the roots :func:`early`
#: walks early.  A hint only: missing or damaged, no root is walked early.
LARGE_ROOTS = "index.large-roots"


def large_roots(data_dir: str) -> list[str]:
    """The roots :data:`LARGE_ROOTS` names ([] when it cannot be read)."""
    try:
        fd = os.open(os.path.join(data_dir, LARGE_ROOTS), os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return []
    try:
        data = os.read(fd, 1 << 20)
    except OSError:
        return []
    finally:
        os.close(fd)
    return [os.fsdecode(p) for p in data.split(b"\0")[:-1]]


def note_size(data_dir: str, root: str, files: int) -> None:
    """Record in :data:`LARGE_ROOTS` whether ``root`` is large (``files`` at a refresh): the
    file is rewritten (a new file put in its place) only when that changes.  Failures are
    ignored: it is a hint."""
    roots = large_roots(data_dir)
    large = files >= FORK_MIN_FILES
    if (root in roots) == large:
        return
    roots = [r for r in roots if r != root] + ([root] if large else [])
    path = os.path.join(data_dir, LARGE_ROOTS)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            os.write(fd, b"".join(os.fsencode(r) + b"\0" for r in roots))
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
