"""One session file -> a :class:`SessionSummary` (what the catalog lists), read cheaply.

Two paths, same result on well-formed files:

* fast: when every line after the header has ``type`` as its first key (ama and pi always
  write so), counts come from line-start byte patterns (a newline can only start a line,
  never sit inside a JSON string) and only the few lines that matter are parsed (the first
  user message, the latest name, archive and task markers);
* line by line: every line is decoded into a light shape that leaves message content
  undecoded (``msgspec.Raw``).

The same function feeds the scan path and the SQLite index, so both list the same.
A *damaged* line here is one that does not end in ``}`` (a cut write) or does not parse.
"""

from __future__ import annotations

import os

import msgspec

from ama.messages import UNSET, Unset
from ama.session.entries import iso_to_ms
from ama.session.meta import derive
from ama.session.reader import DECODE_ERRORS, header_problem, parse_header
from ama.session.summary_data import SessionSummary

ARCHIVE_TYPE = "ama.archive"
TASK_TYPE = "ama.task"
PREVIEW_CHARS = 200


class _LightMessage(msgspec.Struct):
    role: str = ""
    content: msgspec.Raw = msgspec.Raw(b"null")
    origin: str | None = None


class _LightEntry(msgspec.Struct, rename="camel"):
    type: str = ""
    id: str | None = None
    timestamp: str = ""
    message: _LightMessage | None = None
    custom_type: str | None = None
    data: msgspec.Raw = msgspec.Raw(b"null")
    name: str | None | Unset = UNSET


_light = msgspec.json.Decoder(_LightEntry)
_any = msgspec.json.Decoder()

_MSG_PREFIX = b'{"type":"message","id":"'
_CUSTOM_PREFIX = b'{"type":"custom","id":"'
_TS = b'"timestamp":"'
_USER_ROLE = b'"message":{"role":"user"'
_ARCHIVE_MARK = b'"customType":"ama.archive"'
_TASK_MARK = b'"customType":"ama.task"'
_INFO_LINE = b'\n{"type":"session_info"'


def _preview(raw: msgspec.Raw) -> str:
    try:
        content = _any.decode(raw)
    except DECODE_ERRORS:
        return ""
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = " ".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    else:
        text = ""
    return " ".join(text.split())[:PREVIEW_CHARS]


def _timestamp(line: bytes) -> str:
    """The entry timestamp of a line in ama/pi key order (the first "timestamp" key)."""
    i = line.find(_TS, 0, 120)
    if i < 0:
        return ""
    j = line.find(b'"', i + len(_TS))
    return line[i + len(_TS) : j].decode(errors="replace") if j > 0 else ""


def _line_at(data: bytes, start: int) -> bytes:
    end = data.find(b"\n", start)
    return data[start:] if end < 0 else data[start:end]


def _custom_data(line: bytes) -> dict | None:
    try:
        d = _any.decode(_light.decode(line).data)
    except DECODE_ERRORS:
        return None
    return d if isinstance(d, dict) else None


def _apply_task(s: SessionSummary, d: dict | None) -> None:
    if d is not None and "status" not in d:
        s.subagent = True
        if isinstance(d.get("parentSession"), str) and s.parent_session is None:
            s.parent_session = d["parentSession"]


def summarize_bytes(data: bytes, path: str, *, size: int | None = None, mtime_ns: int = 0) -> SessionSummary:
    nl = data.find(b"\n")
    first = data if nl < 0 else data[:nl]
    header = parse_header(first)
    s = SessionSummary(
        path=path,
        id=header.id if header else "",
        cwd=header.cwd if header else "",
        version=header.version if header else 0,
        created=header.timestamp if header else "",
        name=None,
        parent_session=header.parent_session if header and isinstance(header.parent_session, str) else None,
        first_message="",
        last_message_time="",
        last_message_ms=0,
        first_message_time="",
        message_count=0,
        user_message_count=0,
        entry_count=0,
        archived_own=False,
        subagent=False,
        damaged=0,
        header_error=None if header else header_problem(first),
        size=len(data) if size is None else size,
        mtime_ns=mtime_ns,
    )
    if header is None or not _fast(data, first, s):
        _line_by_line(data, s, has_header=header is not None)
    s.last_message_time = s.last_message_time or s.created
    s.last_message_ms = iso_to_ms(s.last_message_time)
    meta = derive(data)
    s.error_count, s.pending_interaction, s.task_status = meta.error_count, meta.pending_interaction, meta.task_status
    return s


def _fast(data: bytes, first: bytes, s: SessionSummary) -> bool:
    n_lines = data.count(b"\n")
    tail = not data.endswith(b"\n")
    typed = data.count(b'\n{"type":"')
    if typed != n_lines - (0 if tail else 1):
        return False  # some line is not type-first (another writer, or blank lines)
    closed = data.count(b"}\n") - (1 if first.endswith(b"}") else 0)
    terminated = n_lines - 1  # newline-terminated lines after the header
    s.damaged = terminated - closed + (1 if tail and not data.endswith(b"}") else 0)
    s.entry_count = typed - data.count(b'\n{"type":"leaf"') - s.damaged
    s.message_count = data.count(b"\n" + _MSG_PREFIX)
    if s.message_count:
        s.first_message_time = _timestamp(_line_at(data, data.find(b"\n" + _MSG_PREFIX) + 1))
        s.last_message_time = _timestamp(_line_at(data, data.rfind(b"\n" + _MSG_PREFIX) + 1))
    # user messages are few: check each role marker sits on a message line
    pos = data.find(_USER_ROLE)
    while pos >= 0:
        start = data.rfind(b"\n", 0, pos) + 1
        if pos - start < 200 and data.startswith(_MSG_PREFIX, start):
            s.user_message_count += 1
            if not s.first_message:
                try:
                    e = _light.decode(_line_at(data, start))
                except DECODE_ERRORS:
                    e = None
                if e is not None and e.message is not None:
                    s.first_message = _preview(e.message.content)
        pos = data.find(_USER_ROLE, pos + 1)
    # the name: the latest session_info line that sets one
    pos = data.rfind(_INFO_LINE)
    while pos >= 0:
        try:
            e = _light.decode(_line_at(data, pos + 1))
        except DECODE_ERRORS:
            e = None
        if e is not None and e.name is not UNSET:
            s.name = e.name or None  # type: ignore[assignment]
            break
        pos = data.rfind(_INFO_LINE, 0, pos)
    # the own archive flag: the latest ama.archive custom entry
    pos = data.rfind(_ARCHIVE_MARK)
    while pos >= 0:
        start = data.rfind(b"\n", 0, pos) + 1
        if data.startswith(_CUSTOM_PREFIX, start):
            d = _custom_data(_line_at(data, start))
            if d is not None:
                s.archived_own = bool(d.get("archived"))
                break
        pos = data.rfind(_ARCHIVE_MARK, 0, pos)
    # a sub-agent session starts with an ama.task entry that has no status
    nl = data.find(b"\n")
    if nl >= 0 and data.startswith(_CUSTOM_PREFIX, nl + 1):
        line = _line_at(data, nl + 1)
        if _TASK_MARK in line:
            _apply_task(s, _custom_data(line))
    return True


def _line_by_line(data: bytes, s: SessionSummary, *, has_header: bool) -> None:
    lines = data.split(b"\n")
    for line in lines[1:] if has_header else lines:
        if not line.strip():
            continue
        try:
            e = _light.decode(line)
        except DECODE_ERRORS:
            s.damaged += 1  # a damaged line, or the partial tail of an interrupted write
            continue
        t = e.type
        if t in ("leaf", "session"):
            continue
        s.entry_count += 1
        if t == "message" and e.message is not None:
            s.message_count += 1
            if e.timestamp:
                s.last_message_time = e.timestamp
                s.first_message_time = s.first_message_time or e.timestamp
            if e.message.role == "user":
                s.user_message_count += 1
                if not s.first_message:
                    s.first_message = _preview(e.message.content)
        elif t == "session_info" and e.name is not UNSET:
            s.name = e.name or None  # type: ignore[assignment]
        elif t == "custom" and e.custom_type in (ARCHIVE_TYPE, TASK_TYPE):
            try:
                d = _any.decode(e.data)
            except DECODE_ERRORS:
                continue
            if not isinstance(d, dict):
                continue
            if e.custom_type == ARCHIVE_TYPE:
                s.archived_own = bool(d.get("archived"))
            elif s.entry_count == 1:
                _apply_task(s, d)


def unreadable_summary(path: str, err: OSError) -> SessionSummary:
    """The catalog row of a file that cannot be read (``EISDIR``, ``ELOOP``, ``EACCES``...)."""
    try:
        st = os.lstat(path)
        size, mtime_ns = st.st_size, st.st_mtime_ns
    except OSError:
        size = mtime_ns = 0
    s = summarize_bytes(b"", path, size=size, mtime_ns=mtime_ns)
    s.header_error = None
    s.unreadable = err.strerror or str(err)
    return s


def summarize_file(path: str) -> SessionSummary:
    from ama.session.reader import open_regular

    with open_regular(path) as f:
        st = os.fstat(f.fileno())
        data = f.read()
    return summarize_bytes(data, path, size=st.st_size, mtime_ns=st.st_mtime_ns)
