"""A stored conversation -> the ACP updates that replay it for ``session/load`` (pure)."""

from __future__ import annotations

from typing import Any

from ama.rpc.acp_map import (
    Update,
    chunk,
    plan_entries,
    result_content,
    result_text,
    tool_kind,
    tool_locations,
    tool_title,
)


def history_updates(messages: list[dict[str, Any]], cwd: str, todo: Any = None) -> list[Update]:
    """A session's context (``plain`` messages) as the updates that replay it."""
    results = {m.get("toolCallId"): m for m in messages if m.get("role") == "toolResult"}
    out: list[Update] = []
    for m in messages:
        role = m.get("role")
        if role == "user":
            content = m.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            for b in blocks:
                if b.get("type") == "text" and b.get("text"):
                    out.append(
                        {
                            "sessionUpdate": "user_message_chunk",
                            "content": {"type": "text", "text": b["text"]},
                        }
                    )
                elif b.get("type") == "image":
                    out.append({"sessionUpdate": "user_message_chunk",
                                "content": {"type": "image", "data": b["data"], "mimeType": b["mimeType"]}})  # fmt: skip
        elif role == "assistant":
            for b in m.get("content") or []:
                if b.get("type") == "text" and b.get("text"):
                    out.append(chunk("agent_message_chunk", b["text"]))
                elif b.get("type") == "thinking" and b.get("thinking"):
                    out.append(chunk("agent_thought_chunk", b["thinking"]))
                elif b.get("type") == "toolCall":
                    out.append(_replayed_call(b, results.get(b.get("id")), cwd))
        elif role in ("compactionSummary", "branchSummary") and m.get("summary"):
            out.append(
                chunk("agent_thought_chunk", f"Summary of the earlier conversation:\n\n{m['summary']}")
            )
    entries = plan_entries((todo or {}).get("items") if isinstance(todo, dict) else None)
    if entries:
        out.append({"sessionUpdate": "plan", "entries": entries})
    return out


def _replayed_call(block: dict[str, Any], result: dict[str, Any] | None, cwd: str) -> Update:
    name = str(block.get("name", ""))
    raw = block.get("arguments")
    args: dict[str, Any] = raw if isinstance(raw, dict) else {}
    failed = result is None or bool(result.get("isError"))
    upd: Update = {"sessionUpdate": "tool_call", "toolCallId": block.get("id", ""), "title": tool_title(name, args, cwd),
                   "kind": tool_kind(name), "status": "failed" if failed else "completed", "rawInput": args}  # fmt: skip
    details = result.get("details") if result else None
    text = result_text({"content": result.get("content")}) if result else None
    locations = tool_locations(name, args, cwd, details, text)
    if locations:
        upd["locations"] = locations
    if result is not None:
        upd["content"] = result_content(
            name, args, {"content": result.get("content"), "details": details}, cwd, failed
        )
    return upd
