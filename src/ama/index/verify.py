"""Read back one search document of an entry line with the standard library's ``json``.

The index knows which documents an entry has (the extraction made them); to match and show
one, the line is read again.  ``json`` is already loaded by every command, msgspec costs
~20 ms to import: :func:`doc_part` gives the document's text the way
``lines.message_docs`` / ``lines.user_doc`` do, or None when it cannot be sure (then the
caller uses msgspec).  A tool call's arguments must be the exact stored JSON: the compact
re-encoding is used only when it is found verbatim after ``"arguments":`` in the line.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:
    from typing import Any

ROLE_USER, ROLE_ASSISTANT, ROLE_TOOL = 0, 1, 2


def _texts(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    out = []
    for b in content:
        if not isinstance(b, dict):
            return None
        if b.get("type") == "text" and isinstance(b.get("text"), str):
            out.append(b["text"])
    return "\n".join(out)


def doc_part(line: bytes, part: int) -> tuple[int, str, str, str] | None:
    """``(role, text, entry id, timestamp)`` of document ``part`` of an entry line."""
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    if not isinstance(obj, dict) or obj.get("type") != "message" or not isinstance(obj.get("message"), dict):
        return None
    eid = obj.get("id")
    ts = obj.get("timestamp")
    eid = eid if isinstance(eid, str) else ""
    ts = ts if isinstance(ts, str) else ""
    m = obj["message"]
    role = m.get("role")
    content = m.get("content")
    if part == 1:
        if role != "assistant" or not isinstance(content, list):
            return None
        calls = []
        for b in content:
            if not isinstance(b, dict):
                return None
            if b.get("type") == "toolCall" and isinstance(b.get("name"), str):
                if "arguments" not in b:
                    raw = "{}"
                else:
                    raw = json.dumps(b["arguments"], ensure_ascii=False, separators=(",", ":"))
                    if ('"arguments":' + raw).encode("utf-8", "surrogatepass") not in line:
                        return None
                calls.append(f"{b['name']} {raw}")
        return (ROLE_TOOL, "\n".join(calls), eid, ts)
    if role == "user":
        text = _texts(content)
        return None if text is None else (ROLE_USER, text, eid, ts)
    if role == "assistant":
        text = _texts(content)
        return None if text is None else (ROLE_ASSISTANT, text, eid, ts)
    if role == "toolResult":
        text = _texts(content)
        return None if text is None else (ROLE_TOOL, text, eid, ts)
    if role == "bashExecution":
        parts = [p for p in (m.get("command"), m.get("output")) if isinstance(p, str) and p]
        return (ROLE_TOOL, "\n".join(parts), eid, ts)
    return None
