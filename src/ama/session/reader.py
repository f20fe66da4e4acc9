"""Read a session file without locking or repairing it.

Reading never changes the file.  Damage is counted and reported, never silently dropped:
a line that is not JSON, a duplicate id, or an entry without an id is a *damaged line*
(skipped); a final line without its newline that does not parse is a *partial tail*
(skipped: the writer crashed mid-append).  Entries of unknown type, or with a message role
this version does not know, are kept as :class:`UnknownEntry` and never enter the context.
Files of an older format (pi v1/v2) are upgraded in memory only; files of a newer version
are read best-effort and marked read-only.
"""

from __future__ import annotations

import errno
import mmap
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, BinaryIO, TypeAlias

import msgspec

from ama.session.entries import (
    CURRENT_VERSION,
    ENTRY_TYPES,
    LEAF_MARK,
    AnyEntry,
    CustomEntry,
    LeafLine,
    Line,
    SessionHeader,
    UnknownEntry,
    is_leaf_mark,
)

#: a file's bytes as the reader takes them: read, or a read-only map of the file
Buffer: TypeAlias = "bytes | mmap.mmap"
MAP_BYTES = 32 << 20  # files from this size are mapped, not read (map_fd)
_DROP_BYTES = 8 << 20  # a mapped file's pages are given back in steps of this size

_decoder = msgspec.json.Decoder(Line)
_any_decoder = msgspec.json.Decoder()

#: what decoding one line may raise: msgspec's errors (a ``ValidationError`` is one) and
#: ``RecursionError`` for nesting deeper than the interpreter allows
DECODE_ERRORS: tuple[type[Exception], ...] = (msgspec.DecodeError, RecursionError)
_NOT_JSON: Any = object()


def decode_any(line: bytes | memoryview) -> Any:
    """``line`` as plain JSON, or :data:`_NOT_JSON` when it is not exactly one JSON value
    (trailing bytes, invalid UTF-8, too deep, an integer out of range)."""
    try:
        return _any_decoder.decode(line)
    except DECODE_ERRORS:
        return _NOT_JSON


@dataclass
class DamagedLine:
    line: int  # 1-based physical line number
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "reason": self.reason}


@dataclass
class SessionData:
    """The parsed content of one session file (or byte buffer)."""

    path: str | None
    header: SessionHeader | None
    entries: list[AnyEntry] = field(default_factory=list)
    leaf_id: str | None = None
    header_error: str | None = None
    damaged: list[DamagedLine] = field(default_factory=list)
    partial_tail: bool = False
    leaf_lines: int = 0
    size: int = 0
    #: raw bytes of each entry's line (without newline), parallel to ``entries``, when asked for
    raws: list[bytes] | None = None

    @property
    def readonly_reason(self) -> str | None:
        """Why this file must not be appended to, or None."""
        if self.header is None:
            return f"its header line is damaged ({self.header_error})"
        v = self.header.version
        if v > CURRENT_VERSION:
            return (
                f"it is session format version {v}, newer than this ama supports ({CURRENT_VERSION}); "
                "upgrade ama to write to it"
            )
        if v < CURRENT_VERSION:
            return f"it is in the older session format version {v}; fork it to continue in the current format"
        return None

    @property
    def id(self) -> str:
        return self.header.id if self.header else ""

    @property
    def problems(self) -> list[str]:
        """Human lines describing damage, empty when the file is clean."""
        out = []
        if self.header_error:
            out.append(f"header: {self.header_error}")
        for d in self.damaged:
            out.append(f"line {d.line}: {d.reason}")
        if self.partial_tail:
            out.append("last line is incomplete (an interrupted write); it is skipped")
        return out


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a session file for reading; a FIFO, socket or device raises ``OSError`` at once
    instead of blocking the reader (opened non-blocking, checked, then read normally)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_session(path: str | os.PathLike[str], *, keep_raw: bool = False) -> SessionData:
    with open_regular(path) as f:
        return parse_fd(f.fileno(), path=os.fspath(path), keep_raw=keep_raw)


def parse_fd(fd: int, *, path: str | None = None, keep_raw: bool = False) -> SessionData:
    """Parse the file open at ``fd`` (from its start, as it is now).  A large file is read
    through a map of it whose pages are given back while it is parsed: the memory it takes
    is about the entries' own, not the file's bytes on top of them."""
    with map_fd(fd) as data:
        return parse_session(data, path=path, keep_raw=keep_raw)


@contextmanager
def map_fd(fd: int) -> Iterator[Buffer]:
    """The bytes of the file open at ``fd``: a read-only map when it is large (at least
    :data:`MAP_BYTES`), else read at once.

    The map covers the size the file has now; appends after it are not seen (as with a
    read).  Session files are only ever appended to (``writer.py``): a file cut shorter
    in place by another program while it is mapped would make reading its lost pages
    fail (``SIGBUS``), which ama itself never does."""
    size = os.fstat(fd).st_size
    mm = None
    if size >= MAP_BYTES:
        try:
            mm = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # a file system that cannot map: read it
            mm = None
    if mm is None:
        yield _read_fd(fd, size)
        return
    try:
        yield mm
    finally:
        try:
            mm.close()
        except BufferError:  # a view is still held somewhere: the map goes with it
            pass


def _read_fd(fd: int, size: int) -> bytes:
    data = os.pread(fd, max(size, 1 << 16), 0)
    while True:
        more = os.pread(fd, 1 << 20, len(data))
        if not more:
            return data
        data += more


def _migrate_message(raw: dict[str, Any]) -> dict[str, Any] | None:
    """pi v2 -> v3: the ``hookMessage`` role was renamed ``custom``."""
    msg = raw.get("message")
    if isinstance(msg, dict) and msg.get("role") == "hookMessage":
        return {**raw, "message": {**msg, "role": "custom"}}
    return None


def parse_session(data: Buffer, *, path: str | None = None, keep_raw: bool = False) -> SessionData:
    """Parse a session's bytes.  The cyclic garbage collector is paused while the (acyclic)
    entries are built and the survivors are frozen afterwards: scanning tens of thousands of
    new objects otherwise costs a third of the load time."""
    out = SessionData(path=path, header=None, size=len(data))
    raws: list[bytes] | None = [] if keep_raw else None
    with gc_paused():
        entries = out.entries
        if raws is None:
            entries.extend(e for e, _ in iter_entries(data, out) if e is not None)
        else:
            append, keep = entries.append, raws.append
            for e, line in iter_entries(data, out):
                if e is not None:
                    append(e)
                    keep(bytes(line))
    out.raws = raws
    return out


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for the block; what survives it is frozen (moved
    out of the collector's generations) afterwards."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.freeze()


_BLANK = frozenset(b" \t\r\n\x0b\x0c")


def _blank(line: memoryview) -> bool:
    return not line or (line[0] in _BLANK and not bytes(line).strip())


#: the classes a well-formed entry line decodes to (the fast path of :func:`iter_entries`)
_ENTRY_CLASSES = frozenset(ENTRY_TYPES.values())


def iter_entries(data: Buffer, out: SessionData) -> Iterator[tuple[AnyEntry | None, memoryview]]:
    """Every line of a session's bytes but the blank ones, in file order, with the entry it
    gives or None (the header, a damaged line, a ``leaf`` line, a partial tail); the line is
    a view, valid until the next step.  The header, the damage, the partial tail and the
    leaf go to ``out`` (the leaf once the walk is complete).

    Lines are views into ``data``: no copy of the file.  When ``data`` is a read-only map of
    the file its pages already read are given back as the walk goes on, so that the file's
    bytes and the entries are not both resident."""
    drop = isinstance(data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED")
    size = len(data)
    tail_unterminated = bool(data) and data[-1:] != b"\n"
    last = -1 if not tail_unterminated else data.rfind(b"\n") + 1  # offset of an unterminated last line
    view = memoryview(data)
    find = data.find
    decode = _decoder.decode
    known = _ENTRY_CLASSES
    damaged = out.damaged
    ids: set[str] = set()
    add_id = ids.add
    leaf: str | None = None
    prev: str | None = None  # the id of the last entry
    header_seen = False
    version = CURRENT_VERSION
    v1_counter = 0
    pos = 0
    dropped = 0
    n = 0  # 1-based physical line number
    try:
        while pos < size:
            start = pos
            if drop and start - dropped >= _DROP_BYTES:  # the lines before this one are done
                upto = start - start % mmap.PAGESIZE
                data.madvise(mmap.MADV_DONTNEED, dropped, upto - dropped)  # type: ignore[union-attr]
                dropped = upto
            e = find(b"\n", pos)
            if e < 0:
                e = size
            line = view[start:e]
            pos = e + 1
            n += 1
            obj: Any = None
            raw: Any = _NOT_JSON
            try:
                obj = decode(line)
            except msgspec.ValidationError:
                # valid JSON of another shape -- or JSON followed by junk (``1 x``), which the
                # typed decoder reports as a shape error before it sees the trailing bytes
                raw = decode_any(line)
            except DECODE_ERRORS:
                if _blank(line):
                    continue
            else:
                cls = obj.__class__
                if cls in known and header_seen:  # the common case: a well-formed entry
                    eid = obj.id
                    if eid in ids:
                        damaged.append(DamagedLine(n, f"duplicate entry id {eid}"))
                        yield None, line
                        continue
                    add_id(eid)
                    if cls is CustomEntry and obj.custom_type == LEAF_MARK:
                        # the leaf moves to its parent (as the tree attaches it: a missing
                        # parent is replaced by the entry before it)
                        pid = obj.parent_id
                        leaf = pid if pid is None or pid in ids else prev
                    else:
                        leaf = eid
                    prev = eid
                    yield obj, line
                    continue
            if raw is _NOT_JSON and obj is None:
                if start == last:
                    out.partial_tail = True
                elif not header_seen:
                    header_seen = True
                    out.header_error = f"line {n} is not valid JSON"
                else:
                    damaged.append(DamagedLine(n, "not valid JSON"))
                yield None, line
                continue
            if not header_seen:
                header_seen = True
                if isinstance(obj, SessionHeader):
                    out.header = obj
                    version = obj.version
                    yield None, line
                    continue
                out.header_error = f"line {n} is not a session header"
                if obj is None:
                    yield None, line
                    continue
            if obj is None:
                # valid JSON that does not fit a known shape: an unknown type, an unknown
                # message role, an older format, or a shape error in a known type
                if not isinstance(raw, dict):
                    damaged.append(DamagedLine(n, "not a JSON object"))
                    yield None, line
                    continue
                if version < CURRENT_VERSION:
                    if version < 2 and "id" not in raw:
                        v1_counter += 1
                        raw = {**raw, "id": f"{v1_counter:08x}", "parentId": leaf}
                    raw = _migrate_message(raw) or raw
                    target = ENTRY_TYPES.get(raw.get("type"))  # type: ignore[arg-type]
                    if target is not None:
                        try:
                            obj = msgspec.convert(raw, target, str_keys=True)
                        except msgspec.ValidationError:
                            obj = None
                if obj is None:
                    eid = raw.get("id")
                    if raw.get("type") == "session":
                        damaged.append(DamagedLine(n, "a second session header"))
                        yield None, line
                        continue
                    if not isinstance(eid, str) or not eid:
                        damaged.append(DamagedLine(n, f"entry of type {raw.get('type')!r} has no id"))
                        yield None, line
                        continue
                    parent = raw.get("parentId")
                    obj = UnknownEntry(
                        id=eid,
                        parent_id=parent if isinstance(parent, str) else None,
                        timestamp=str(raw.get("timestamp") or ""),
                        raw=raw,
                    )
            if isinstance(obj, LeafLine):
                out.leaf_lines += 1
                if obj.target_id is None or obj.target_id in ids:
                    leaf = obj.target_id
                else:
                    damaged.append(DamagedLine(n, f"leaf line points to unknown entry {obj.target_id}"))
                yield None, line
                continue
            if isinstance(obj, SessionHeader):
                damaged.append(DamagedLine(n, "a second session header"))
                yield None, line
                continue
            if obj.id in ids:
                damaged.append(DamagedLine(n, f"duplicate entry id {obj.id}"))
                yield None, line
                continue
            ids.add(obj.id)
            if is_leaf_mark(obj):
                pid = obj.parent_id
                leaf = pid if pid is None or pid in ids else prev
            else:
                leaf = obj.id
            prev = obj.id
            yield obj, line
        if not header_seen:
            out.header_error = "the file is empty"
        out.leaf_id = leaf
    finally:
        view.release()


def read_header(path: str | os.PathLike[str]) -> SessionHeader | None:
    """The header of a session file from its first line only, or None if it has none."""
    try:
        with open_regular(path) as f:
            first = f.readline(1 << 20)
    except OSError:
        return None
    return parse_header(first)


def header_problem(first: bytes) -> str | None:
    """Why ``first`` is not a session header line (the reader's wording), or None."""
    if not first.strip():
        return "the file is empty"
    try:
        obj = _decoder.decode(first)
    except msgspec.ValidationError:
        if decode_any(first) is _NOT_JSON:
            return "line 1 is not valid JSON"
        return "line 1 is not a session header"
    except DECODE_ERRORS:
        return "line 1 is not valid JSON"
    return None if isinstance(obj, SessionHeader) else "line 1 is not a session header"


def parse_header(first: bytes) -> SessionHeader | None:
    try:
        obj = _decoder.decode(first)
    except DECODE_ERRORS:
        return None
    return obj if isinstance(obj, SessionHeader) else None
