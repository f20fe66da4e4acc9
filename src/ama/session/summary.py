"""One session file -> a :class:`SessionSummary` (what the catalog lists), read cheaply.

Lines are decoded into a light shape that leaves message content undecoded
(``msgspec.Raw``), so a file full of large tool results is scanned at parsing speed.
The same function feeds the scan path and the SQLite index, so both list the same.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Any

import msgspec

from ama.messages import UNSET, Unset
from ama.session.entries import iso_to_ms
from ama.session.reader import header_problem, parse_header

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


@dataclass
class SessionSummary:
    path: str
    id: str
    cwd: str
    version: int
    created: str  # header timestamp (ISO)
    name: str | None
    parent_session: str | None  # header parentSession or the task's parentSession
    first_message: str  # preview of the first user message
    last_message_time: str  # ISO timestamp of the last message entry (header's if none)
    last_message_ms: int
    first_message_time: str
    message_count: int
    user_message_count: int
    entry_count: int
    archived_own: bool  # the session's own archive flag (latest ama.archive entry)
    subagent: bool  # a `task` sub-agent session
    damaged: int  # damaged lines (incl. a partial tail)
    header_error: str | None
    size: int
    mtime_ns: int
    # filled by the catalog from the lineage:
    archived: bool = False

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        return {_camel(k): v for k, v in d.items()}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def _preview(raw: msgspec.Raw) -> str:
    try:
        content = _any.decode(raw)
    except msgspec.DecodeError:
        return ""
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = " ".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    else:
        text = ""
    text = " ".join(text.split())
    return text[:PREVIEW_CHARS]


def summarize_bytes(data: bytes, path: str, *, size: int | None = None, mtime_ns: int = 0) -> SessionSummary:
    lines = data.split(b"\n")
    first = lines[0] if lines else b""
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
    last_ts = ""
    for line in lines[1:] if header else lines:
        if not line:
            continue
        try:
            e = _light.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            s.damaged += 1  # a damaged line, or the partial tail of an interrupted write
            continue
        t = e.type
        if t == "leaf" or t == "session":
            continue
        s.entry_count += 1
        if t == "message" and e.message is not None:
            s.message_count += 1
            if e.timestamp:
                last_ts = e.timestamp
                if not s.first_message_time:
                    s.first_message_time = e.timestamp
            if e.message.role == "user":
                s.user_message_count += 1
                if not s.first_message:
                    s.first_message = _preview(e.message.content)
        elif t == "session_info" and e.name is not UNSET:
            s.name = e.name or None  # type: ignore[assignment]
        elif t == "custom" and e.custom_type in (ARCHIVE_TYPE, TASK_TYPE):
            try:
                d = _any.decode(e.data)
            except msgspec.DecodeError:
                d = None
            if not isinstance(d, dict):
                continue
            if e.custom_type == ARCHIVE_TYPE:
                s.archived_own = bool(d.get("archived"))
            elif "status" not in d and s.entry_count == 1:
                s.subagent = True
                if isinstance(d.get("parentSession"), str) and s.parent_session is None:
                    s.parent_session = d["parentSession"]
    s.last_message_time = last_ts or s.created
    s.last_message_ms = iso_to_ms(s.last_message_time)
    return s


def summarize_file(path: str) -> SessionSummary:
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        data = f.read()
    return summarize_bytes(data, path, size=st.st_size, mtime_ns=st.st_mtime_ns)
