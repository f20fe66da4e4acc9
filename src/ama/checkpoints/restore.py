"""Put files back as a checkpoint recorded them (docs/rewind-plan.md §3.2).

Both modes (``tools`` records and the shadow git repository) describe what they want as
:class:`Target`s; :func:`apply` takes each through the same steps, in this order:

1. the record says the file was not backed up -> ``skipped`` (``too_large`` / ``not_regular``)
2. the file already is as wanted (content and mode) -> nothing, not counted
3. conflict: the current content is neither what ama last wrote nor what the latest
   checkpoint recorded -> ``conflicts``, left alone unless ``overwrite``.  A file that is
   missing now is never a conflict: recreating it loses nothing.
4. safety: a symlink, a non-regular file, a file with other hard links, or a parent
   directory whose real path is not the one recorded -> ``skipped``
5. wanted absent -> delete (regular files only)
6. otherwise write: the parent directory is opened by its recorded real path without
   following links and must be the directory the path names; the file is opened with
   ``O_NOFOLLOW`` relative to it and written only when ``fstat`` and ``lstat`` agree on
   device and inode; truncated, written, mode restored.  Missing parents are created (and
   checked again).  A missing or damaged backup -> ``skipped: backup_missing``.

With ``dry_run`` only steps 1-4 run, plus loading the wanted content for the line counts.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat as st_mod
from collections.abc import Callable
from dataclasses import dataclass

from ama.checkpoints.linediff import count_changes, count_lines
from ama.checkpoints.records import CodeRestoreResult

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_DIR_FD = os.open in os.supports_dir_fd and os.unlink in os.supports_dir_fd and os.stat in os.supports_dir_fd
#: current files above this are hashed in chunks and not line-counted
DIFF_LIMIT = 8 << 20


@dataclass
class Target:
    """The wanted state of one file."""

    key: str
    path: str
    exists: bool
    #: sha256 of the wanted content when known (``tools`` records)
    sha256: str | None = None
    #: the wanted content; returns None when the backup is missing or damaged
    load: Callable[[], bytes | None] | None = None
    #: all permission bits to set (``tools``), or only the executable bits (``shadow``)
    mode: int | None = None
    exec_bit: bool | None = None
    real_parent_dir: str | None = None
    #: step 1: the record says this file was not backed up
    skipped: str | None = None
    #: the wanted content is larger than this -> too_large
    max_bytes: int | None = None
    #: conflict detection: is this sha256 of the current content one ama knows?
    known: Callable[[str], bool] | None = None


@dataclass
class Done:
    """A file restore changed (or would change): for ``lastWritten`` and ``readFiles``."""

    target: Target
    sha256: str | None  # of the content written; None when deleted


class _Unsafe(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class _Current:
    st: os.stat_result | None
    sha256: str | None = None
    data: bytes | None = None  # None when absent, not regular, or above DIFF_LIMIT


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def read_current(path: str) -> _Current:
    st = _lstat(path)
    if st is None or not st_mod.S_ISREG(st.st_mode):
        return _Current(st)
    h = hashlib.sha256()
    chunks: list[bytes] = []
    keep = st.st_size <= DIFF_LIMIT
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    try:
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
            if keep:
                chunks.append(chunk)
    finally:
        os.close(fd)
    return _Current(st, h.hexdigest(), b"".join(chunks) if keep else None)


def _same(t: Target, cur: _Current, wanted: bytes | None) -> tuple[bool, bool]:
    """``(content_same, mode_same)`` of a regular current file and the target."""
    assert cur.st is not None
    if t.sha256 is not None:
        content = cur.sha256 == t.sha256
    else:
        content = wanted is not None and cur.data is not None and cur.data == wanted
    mode = st_mod.S_IMODE(cur.st.st_mode)
    if t.mode is not None:
        mode_same = mode == t.mode
    elif t.exec_bit is not None:
        mode_same = bool(mode & 0o100) == t.exec_bit
    else:
        mode_same = True
    return content, mode_same


def differs(t: Target) -> bool:
    """Whether the file on disk is not as ``t`` wants (step 2 only; unreadable = differs)."""
    try:
        cur = read_current(t.path)
    except OSError:
        return True
    if cur.st is None:
        return t.exists
    if not t.exists or not st_mod.S_ISREG(cur.st.st_mode):
        return True
    wanted = None if t.sha256 is not None or t.load is None else t.load()
    content, mode = _same(t, cur, wanted)
    return not (content and mode)


def apply(targets: list[Target], *, dry_run: bool, overwrite: bool) -> tuple[CodeRestoreResult, list[Done]]:
    res = CodeRestoreResult(dry_run=dry_run)
    done: list[Done] = []
    for t in sorted(targets, key=lambda t: t.key):
        try:
            d = _one(t, res, dry_run=dry_run, overwrite=overwrite)
        except _Unsafe as u:
            res.skipped.append({"path": t.key, "reason": u.reason})
            continue
        except OSError as e:
            res.failed.append({"path": t.key, "message": f"{e.strerror or e}"})
            continue
        if d is not None:
            done.append(d)
    return res, done


def _one(t: Target, res: CodeRestoreResult, *, dry_run: bool, overwrite: bool) -> Done | None:
    # 1. not backed up
    if t.skipped:
        raise _Unsafe(t.skipped)
    cur = read_current(t.path)
    st = cur.st
    regular = st is not None and st_mod.S_ISREG(st.st_mode)
    wanted: bytes | None = None
    mode_only = False
    # 2. already as wanted
    if st is None and not t.exists:
        return None
    if regular and t.exists:
        if t.sha256 is None and t.load is not None:
            wanted = t.load()
        content, mode = _same(t, cur, wanted)
        if content and mode:
            return None
        mode_only = content
    # 3. conflict
    known = t.known is None or cur.sha256 is None or t.known(cur.sha256)
    if regular and not mode_only and not known and not overwrite:
        res.conflicts.append(t.key)
        return None
    # 4. safety
    if st is not None:
        if st_mod.S_ISLNK(st.st_mode):
            raise _Unsafe("symlink")
        if not regular:
            raise _Unsafe("not_regular")
        if st.st_nlink > 1:
            raise _Unsafe("hardlink")
    if t.real_parent_dir is not None and os.path.realpath(os.path.dirname(t.path)) != t.real_parent_dir:
        raise _Unsafe("parent_moved")
    # 5. delete
    if not t.exists:
        res.deletions += count_lines(cur.data) if cur.data is not None else 0
        if not dry_run:
            _delete(t)
        res.deleted.append(t.key)
        return Done(t, None)
    # 6. write
    if mode_only:
        if not dry_run:
            _write(t, None, create=False)
        res.restored.append(t.key)
        return Done(t, cur.sha256)
    if wanted is None:
        wanted = t.load() if t.load is not None else None
        if wanted is None:
            raise _Unsafe("backup_missing")
    if t.max_bytes is not None and len(wanted) > t.max_bytes:
        raise _Unsafe("too_large")
    if cur.data is not None or st is None:
        ins, dels = count_changes(cur.data or b"", wanted)
        res.insertions += ins
        res.deletions += dels
    if not dry_run:
        _write(t, wanted, create=st is None)
    res.restored.append(t.key)
    return Done(t, t.sha256 or hashlib.sha256(wanted).hexdigest())


# --- the careful file operations ------------------------------------------------------


def _open_parent(t: Target) -> int | None:
    """An fd of the parent directory, opened by its recorded real path without following a
    link there, and checked to be the directory ``t.path`` names (None without dir_fd)."""
    if not _DIR_FD:
        return None
    parent = os.path.dirname(t.path)
    real = t.real_parent_dir or os.path.realpath(parent)
    try:
        dfd = os.open(real, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except (FileNotFoundError, NotADirectoryError) as e:
        raise _Unsafe("parent_moved") from e
    except OSError as e:
        if e.errno == errno.ELOOP:  # the recorded directory is now a link
            raise _Unsafe("parent_moved") from e
        raise
    try:
        a, b = os.fstat(dfd), os.stat(parent)
    except OSError:
        os.close(dfd)
        raise _Unsafe("parent_moved") from None
    if (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino):
        os.close(dfd)
        raise _Unsafe("parent_moved")
    return dfd


def _check_lstat(lst: os.stat_result) -> None:
    if st_mod.S_ISLNK(lst.st_mode):
        raise _Unsafe("symlink")
    if not st_mod.S_ISREG(lst.st_mode):
        raise _Unsafe("not_regular")
    if lst.st_nlink > 1:
        raise _Unsafe("hardlink")


def _delete(t: Target) -> None:
    dfd = _open_parent(t)
    name = os.path.basename(t.path)
    try:
        if dfd is None:
            _check_lstat(os.lstat(t.path))
            os.unlink(t.path)
            return
        _check_lstat(os.stat(name, dir_fd=dfd, follow_symlinks=False))
        os.unlink(name, dir_fd=dfd)
    finally:
        if dfd is not None:
            os.close(dfd)


def _write(t: Target, data: bytes | None, *, create: bool) -> None:
    parent = os.path.dirname(t.path)
    if create and not os.path.isdir(parent):
        os.makedirs(parent, exist_ok=True)
        if t.real_parent_dir is not None and os.path.realpath(parent) != t.real_parent_dir:
            raise _Unsafe("parent_moved")
    dfd = _open_parent(t)
    name = os.path.basename(t.path) if dfd is not None else t.path
    kw = {"dir_fd": dfd} if dfd is not None else {}
    try:
        if create:
            perm = 0o777 if t.exec_bit else 0o666
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
        else:
            perm = 0
            flags = (os.O_WRONLY if data is not None else os.O_RDONLY) | _NOFOLLOW | _NONBLOCK | _CLOEXEC
        try:
            fd = os.open(name, flags, perm, **kw)
        except OSError as e:
            if e.errno == errno.ELOOP:  # a symlink appeared at the name
                raise _Unsafe("symlink") from e
            raise
        try:
            fst = os.fstat(fd)
            lst = os.stat(name, follow_symlinks=False, **kw)
            if (fst.st_dev, fst.st_ino) != (lst.st_dev, lst.st_ino):
                raise _Unsafe("symlink")
            _check_lstat(fst)
            if data is not None:
                os.ftruncate(fd, 0)
                view = memoryview(data)
                while view:
                    n = os.write(fd, view)
                    view = view[n:]
            if t.mode is not None:
                os.fchmod(fd, t.mode)
            elif t.exec_bit is not None and not create:
                cur = st_mod.S_IMODE(fst.st_mode)
                new = cur | ((cur & 0o444) >> 2) if t.exec_bit else cur & ~0o111
                if new != cur:
                    os.fchmod(fd, new)
        finally:
            os.close(fd)
    finally:
        if dfd is not None:
            os.close(dfd)
