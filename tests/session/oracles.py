"""References the fast paths are compared with: the session reader as it was written before
its fast path (a line split, then every line through the same steps), and the projection
as it was written before its passes were merged."""

from __future__ import annotations

from typing import Any

import msgspec

from ama.messages import AssistantMessage, ContextMessage, SystemMessage, UserMessage, text_of
from ama.session.entries import (
    CURRENT_VERSION,
    ENTRY_TYPES,
    AnyEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomMessageEntry,
    LeafLine,
    Line,
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
    ThinkingLevelChangeEntry,
    UnknownEntry,
    is_leaf_mark,
)
from ama.session.projection import (
    REWIND_NOTE,
    ModelRef,
    ProjectedContext,
    _pair_tool_calls,
    _to_message,
    _with_replacement,
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


# --- the projection ----------------------------------------------------------------------


def _is_system(e: AnyEntry) -> bool:
    return isinstance(e, MessageEntry) and isinstance(e.message, SystemMessage)


def _drop_superseded_notes(entries: list[AnyEntry]) -> list[AnyEntry]:
    drop: set[int] = set()
    last_note = -1
    for i, e in enumerate(entries):
        if isinstance(e, CustomMessageEntry) and e.custom_type == REWIND_NOTE:
            if last_note >= 0:
                drop.add(last_note)
            last_note = i
        elif isinstance(e, MessageEntry) and isinstance(e.message, UserMessage):
            last_note = -1
    return [e for i, e in enumerate(entries) if i not in drop] if drop else entries


def reference_project(branch: list[AnyEntry]) -> ProjectedContext:
    out = ProjectedContext()
    edits: dict[str, str | None] = {}
    compaction_at = -1
    for i, e in enumerate(branch):
        if isinstance(e, ContextEditEntry):
            edits[e.target_id] = e.replacement
        elif isinstance(e, CompactionEntry):
            compaction_at = i
        elif isinstance(e, ModelChangeEntry):
            out.model = ModelRef(e.provider, e.model_id, e.channel if isinstance(e.channel, str) else None)
        elif isinstance(e, ThinkingLevelChangeEntry):
            out.thinking_level = e.thinking_level
        elif isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage):
            am = e.message
            if am.provider and am.model and (out.model is None or out.model.ref != f"{am.provider}/{am.model}"):
                out.model = ModelRef(am.provider, am.model)

    def mapped(e: AnyEntry) -> ContextMessage | None:
        if e.id in edits:
            replacement = edits[e.id]
            if replacement is None:
                return None
            m = _to_message(e)
            return None if m is None else _with_replacement(m, replacement)
        return _to_message(e)

    messages: list[ContextMessage] = []
    ids: list[tuple[str, ...]] = []
    systems: list[tuple[str, ContextMessage]] = []
    for e in branch:
        if _is_system(e):
            m = mapped(e)
            if m is not None:
                systems.append((e.id, m))
    if systems:
        if len(systems) == 1:
            messages.append(systems[0][1])
        else:
            text = "\n\n".join(text_of(m.content) for _, m in systems)  # type: ignore[union-attr]
            messages.append(SystemMessage(content=text, timestamp=systems[-1][1].timestamp))
        ids.append(tuple(i for i, _ in systems))
    if compaction_at >= 0:
        comp = branch[compaction_at]
        assert isinstance(comp, CompactionEntry)
        summary = mapped(comp)
        if summary is not None:
            messages.append(summary)
            ids.append((comp.id,))
        kept_from = compaction_at
        for j in range(compaction_at):
            if branch[j].id == comp.first_kept_entry_id:
                kept_from = j
                break
        kept = [e for e in branch[kept_from:compaction_at] if not isinstance(e, CompactionEntry)]
        window = kept + branch[compaction_at + 1 :]
    else:
        window = branch
    selected = _drop_superseded_notes([e for e in window if not _is_system(e)])
    for e in selected:
        m = mapped(e)
        if m is not None:
            messages.append(m)
            ids.append((e.id,))
    out.messages, out.entry_ids = _pair_tool_calls(messages, ids)
    return out
