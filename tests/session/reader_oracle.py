"""The session reader as it was written before its fast path (a line split, then every line
through the same steps), kept as the reference the reader's answers are compared with."""

from __future__ import annotations

from typing import Any

import msgspec

from ama.session.entries import (
    CURRENT_VERSION,
    ENTRY_TYPES,
    LeafLine,
    Line,
    SessionHeader,
    UnknownEntry,
    is_leaf_mark,
)
from ama.session.reader import DamagedLine, SessionData

_typed = msgspec.json.Decoder(Line)
_plain = msgspec.json.Decoder()
_ERRORS = (msgspec.DecodeError, RecursionError)
_NOT_JSON: Any = object()


def _any(line: bytes) -> Any:
    try:
        return _plain.decode(line)
    except _ERRORS:
        return _NOT_JSON


def _migrate(raw: dict[str, Any]) -> dict[str, Any] | None:
    msg = raw.get("message")
    if isinstance(msg, dict) and msg.get("role") == "hookMessage":
        return {**raw, "message": {**msg, "role": "custom"}}
    return None


def reference_parse(data: bytes) -> SessionData:
    out = SessionData(path=None, header=None, size=len(data))
    ids: set[str] = set()
    leaf: str | None = None
    header_seen = False
    version = CURRENT_VERSION
    v1_counter = 0
    pieces = data.split(b"\n")
    for n, line in enumerate(pieces):
        last = n == len(pieces) - 1
        if not line.strip(b" \t\r\n\x0b\x0c"):
            continue
        obj: Any = None
        raw: Any = _NOT_JSON
        try:
            obj = _typed.decode(line)
        except msgspec.ValidationError:
            raw = _any(line)
        except _ERRORS:
            pass
        if raw is _NOT_JSON and obj is None:
            if last:
                out.partial_tail = True
            elif not header_seen:
                header_seen = True
                out.header_error = f"line {n + 1} is not valid JSON"
            else:
                out.damaged.append(DamagedLine(n + 1, "not valid JSON"))
            continue
        if not header_seen:
            header_seen = True
            if isinstance(obj, SessionHeader):
                out.header = obj
                version = obj.version
                continue
            out.header_error = f"line {n + 1} is not a session header"
            if obj is None:
                continue
        if obj is None:
            if not isinstance(raw, dict):
                out.damaged.append(DamagedLine(n + 1, "not a JSON object"))
                continue
            if version < CURRENT_VERSION:
                if version < 2 and "id" not in raw:
                    v1_counter += 1
                    raw = {**raw, "id": f"{v1_counter:08x}", "parentId": leaf}
                raw = _migrate(raw) or raw
                cls = ENTRY_TYPES.get(raw.get("type"))  # type: ignore[arg-type]
                if cls is not None:
                    try:
                        obj = msgspec.convert(raw, cls, str_keys=True)
                    except msgspec.ValidationError:
                        obj = None
            if obj is None:
                eid = raw.get("id")
                if raw.get("type") == "session":
                    out.damaged.append(DamagedLine(n + 1, "a second session header"))
                    continue
                if not isinstance(eid, str) or not eid:
                    out.damaged.append(DamagedLine(n + 1, f"entry of type {raw.get('type')!r} has no id"))
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
                out.damaged.append(DamagedLine(n + 1, f"leaf line points to unknown entry {obj.target_id}"))
            continue
        if isinstance(obj, SessionHeader):
            out.damaged.append(DamagedLine(n + 1, "a second session header"))
            continue
        if obj.id in ids:
            out.damaged.append(DamagedLine(n + 1, f"duplicate entry id {obj.id}"))
            continue
        ids.add(obj.id)
        if is_leaf_mark(obj):
            pid = obj.parent_id
            leaf = pid if pid is None or pid in ids else (out.entries[-1].id if out.entries else None)
        else:
            leaf = obj.id
        out.entries.append(obj)
    if not header_seen:
        out.header_error = "the file is empty"
    out.leaf_id = leaf
    return out
