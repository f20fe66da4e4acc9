"""Line-level decoding shared by the index and the scans: entry classification and the
searchable text of an entry.

Three light shapes decode a line without building what is not needed (msgspec skips the
rest): :class:`DLine` (classification fields plus the message text), :class:`CLine`
(classification fields plus the message role) and ``_C0`` (classification fields only,
for lines whose ``message`` is not even an object).  Decoding falls from one to the
next on a shape error, so every path classifies a line the same way.

Searchable text (docs/search.md): user text, assistant text, tool calls as
``name args-json`` (the arguments exactly as stored), tool results and pi's
``bashExecution`` (command and output).  Not thinking, system or custom messages.
Each entry gives at most two *documents*: part 0 (its text) and part 1 (an assistant
message's tool calls).
"""

from __future__ import annotations

from typing import Any

import msgspec

from ama.messages import UserMessage, text_of
from ama.session.entries import ENTRY_TYPES, Line, MessageEntry
from ama.session.reader import DECODE_ERRORS, decode_any

UNSET = msgspec.UNSET

ROLE_USER, ROLE_ASSISTANT, ROLE_TOOL = 0, 1, 2
ROLE_NAMES = ("user", "assistant", "tool")


class _DBlock(msgspec.Struct):
    type: Any = None
    text: Any = None
    name: Any = None
    arguments: msgspec.Raw = msgspec.Raw()  # empty when absent


class _DMsg(msgspec.Struct, rename="camel"):
    role: Any = None
    content: str | list[_DBlock] | None = None
    command: Any = None
    output: Any = None
    stop_reason: Any = None
    error_message: Any = None


class DLine(msgspec.Struct, rename="camel"):
    type: Any = None
    id: Any = UNSET
    parent_id: Any = None
    timestamp: Any = UNSET
    target_id: Any = UNSET
    message: _DMsg | None = None


class _Role(msgspec.Struct):
    role: Any = None


class CLine(msgspec.Struct, rename="camel"):
    type: Any = None
    id: Any = UNSET
    parent_id: Any = None
    timestamp: Any = UNSET
    target_id: Any = UNSET
    message: _Role | None = None


class _C0(msgspec.Struct, rename="camel"):
    type: Any = None
    id: Any = UNSET
    parent_id: Any = None
    timestamp: Any = UNSET
    target_id: Any = UNSET


_dline = msgspec.json.Decoder(DLine)
_cline = msgspec.json.Decoder(CLine)
_c0line = msgspec.json.Decoder(_C0)
_typed = msgspec.json.Decoder(Line)
_any = msgspec.json.Decoder()

DecodeError = msgspec.DecodeError
ValidationError = msgspec.ValidationError

NOT_OBJECT = object()  # classify(): the line is JSON but not an object


def decode(line: bytes, *, with_text: bool) -> Any:
    """A line's light shape (DLine / CLine / _C0), or NOT_OBJECT; raises DecodeError
    when the line is not JSON at all (also for nesting deeper than Python allows)."""
    try:
        return _decode(line, with_text=with_text)
    except RecursionError:
        raise DecodeError("nested too deeply") from None


def _decode(line: bytes, *, with_text: bool) -> Any:
    if with_text:
        try:
            return _dline.decode(line)
        except ValidationError:
            pass
    try:
        return _cline.decode(line)
    except ValidationError:
        pass
    try:
        return _c0line.decode(line)
    except ValidationError:
        return NOT_OBJECT


def role_of(obj: Any) -> Any:
    m = getattr(obj, "message", None)
    return m.role if m is not None else None


def typed_entry_ok(line: bytes) -> bool:
    """Whether the reader would decode the line as a known entry (used for the rare
    entry whose id is the empty string)."""
    try:
        obj = _typed.decode(line)
    except DECODE_ERRORS:
        return False
    return type(obj).__name__ not in ("SessionHeader", "LeafLine")


def leaf_line_ok(obj: Any) -> bool:
    """Whether a ``type: leaf`` line is a valid leaf line (else it is read as an entry)."""
    t = obj.target_id
    ts = obj.timestamp
    return (t is None or isinstance(t, str)) and t is not UNSET and (ts is UNSET or isinstance(ts, str))


def user_message(line: bytes, version: int) -> UserMessage | None:
    """The user message of a line exactly as the session reader reads it, or None."""
    try:
        obj: Any = _typed.decode(line)
    except ValidationError:  # (a subclass of DecodeError: catch it first)
        if version >= 3:
            return None
        raw = decode_any(line)  # JSON with trailing junk is not JSON here either
        if not isinstance(raw, dict) or raw.get("type") != "message":
            return None
        if version < 2 and "id" not in raw:
            raw = {**raw, "id": "00000000", "parentId": None}
        try:
            obj = msgspec.convert(raw, ENTRY_TYPES["message"], str_keys=True)
        except ValidationError:
            return None
    except DECODE_ERRORS:
        return None
    if isinstance(obj, MessageEntry) and isinstance(obj.message, UserMessage):
        return obj.message
    return None


def user_doc(msg: UserMessage) -> str:
    return text_of(msg.content)


def _text_blocks(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not content:
        return ""
    return "\n".join(b.text for b in content if b.type == "text" and isinstance(b.text, str))


def message_docs(msg: _DMsg) -> list[tuple[int, int, str]]:
    """``(part, role, text)`` documents of a non-user message (light-decoded)."""
    role = msg.role
    out: list[tuple[int, int, str]] = []
    if role == "assistant":
        text = _text_blocks(msg.content)
        if text:
            out.append((0, ROLE_ASSISTANT, text))
        if isinstance(msg.content, list):
            calls = [
                f"{b.name} {bytes(b.arguments).decode('utf-8', 'replace') or '{}'}"
                for b in msg.content
                if b.type == "toolCall" and isinstance(b.name, str)
            ]
            if calls:
                out.append((1, ROLE_TOOL, "\n".join(calls)))
    elif role == "toolResult":
        text = _text_blocks(msg.content)
        if text:
            out.append((0, ROLE_TOOL, text))
    elif role == "bashExecution":
        parts = [p for p in (msg.command, msg.output) if isinstance(p, str) and p]
        if parts:
            out.append((0, ROLE_TOOL, "\n".join(parts)))
    return out


def entry_docs(obj: Any, line: bytes, version: int) -> list[tuple[int, int, str]]:
    """The documents of an entry given its light shape (``decode(line, with_text=True)``)."""
    if obj.type != "message":
        return []
    if role_of(obj) == "user":
        m = user_message(line, version)
        if m is None:
            return []
        text = user_doc(m)
        return [(0, ROLE_USER, text)] if text else []
    if isinstance(obj, DLine) and obj.message is not None:
        return message_docs(obj.message)
    return []


def docs_of_line(line: bytes, version: int) -> list[tuple[int, int, str]]:
    """Every document of one entry line (what the index stores for it), decoded afresh."""
    try:
        obj = decode(line, with_text=True)
    except DecodeError:
        return []
    if obj is NOT_OBJECT:
        return []
    return entry_docs(obj, line, version)
