"""Pure mappings between ACP messages (as JSON dicts) and the host seam: session updates to
progress payloads, a permission request to the host's request with ``context.origin``, and
the host's answer back to an ACP option (docs/external-agents.md)."""

from __future__ import annotations

import json
from typing import Any

SUMMARY_CHARS = 200
_INPUT_KEYS = ("command", "cmd", "file_path", "path", "pattern", "url", "query")


def input_summary(raw: Any) -> str | None:
    """A one-line gist of a tool call's raw input (its command, path, ...), at most 200 chars."""
    if raw is None or raw == {}:
        return None
    text: str | None = None
    if isinstance(raw, dict):
        for k in _INPUT_KEYS:
            v = raw.get(k)
            if isinstance(v, str) and v:
                text = v
                break
            if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
                text = " ".join(v)
                break
    if text is None:
        text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, sort_keys=True)
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


def _locations(u: dict[str, Any]) -> list[dict[str, Any]] | None:
    locs = [
        {k: loc[k] for k in ("path", "line") if k in loc}
        for loc in u.get("locations") or []
        if isinstance(loc, dict) and "path" in loc
    ]
    return locs or None


def _content_text(u: dict[str, Any]) -> str | None:
    parts = []
    for c in u.get("content") or []:
        inner = c.get("content") if isinstance(c, dict) else None
        if isinstance(inner, dict) and inner.get("type") == "text":
            parts.append(inner.get("text", ""))
    return "".join(parts) or None


def tool_call_view(u: dict[str, Any]) -> dict[str, Any]:
    """``{title, kind, locations?, inputSummary?}`` of an ACP tool call (update)."""
    view: dict[str, Any] = {"title": u.get("title") or u.get("toolCallId", ""), "kind": u.get("kind") or "other"}
    locs = _locations(u)
    if locs:
        view["locations"] = locs
    summary = input_summary(u.get("rawInput"))
    if summary:
        view["inputSummary"] = summary
    return view


def update_payload(u: dict[str, Any]) -> dict[str, Any] | None:
    """The host progress payload of one ``session/update`` (None: nothing to show)."""
    kind = u.get("sessionUpdate")
    if kind in ("agent_message_chunk", "agent_thought_chunk"):
        content = u.get("content") or {}
        if content.get("type") != "text" or not content.get("text"):
            return None
        return {"kind": "text" if kind == "agent_message_chunk" else "thinking", "text": content["text"]}
    if kind == "tool_call":
        view = tool_call_view(u)
        out = {"kind": "tool_call", "toolCallId": u.get("toolCallId", ""), "title": view["title"]}
        out["toolKind"] = view["kind"]
        out["status"] = u.get("status") or "pending"
        out.update({k: view[k] for k in ("locations", "inputSummary") if k in view})
        return out
    if kind == "tool_call_update":
        out = {"kind": "tool_update", "toolCallId": u.get("toolCallId", "")}
        for k in ("status", "title"):
            if u.get(k):
                out[k] = u[k]
        text = _content_text(u)
        if text:
            out["output"] = text if len(text) <= 2000 else text[:1999] + "…"
        return out
    if kind == "plan":
        entries = [
            {"content": e.get("content", ""), "status": e.get("status", "pending")}
            for e in u.get("entries") or []
            if isinstance(e, dict)
        ]
        return {"kind": "plan", "entries": entries}
    return None


def permission_request(
    agent: str, task_id: str, session_id: str, tool_call: dict[str, Any], options: list[dict[str, Any]]
) -> dict[str, Any]:
    """The host request for an external agent's ``session/request_permission``."""
    opts = [{"optionId": o["optionId"], "name": o.get("name", o["optionId"]), "kind": o.get("kind", "")} for o in options]
    raw = tool_call.get("rawInput")
    return {
        "toolName": f"agent:{agent}",
        "input": raw if isinstance(raw, dict) else ({} if raw is None else {"input": raw}),
        "context": {
            "taskId": task_id,
            "origin": {
                "agent": agent,
                "sessionId": session_id,
                "toolCall": tool_call_view(tool_call),
                "options": opts,
            },
        },
    }


_ALIASES = {
    "allow": ("allow_once", "allow_always"),
    "allow_once": ("allow_once", "allow_always"),
    "allow_session": ("allow_always", "allow_once"),
    "allow_always": ("allow_always", "allow_once"),
    "deny": ("reject_once", "reject_always"),
    "reject": ("reject_once", "reject_always"),
    "reject_once": ("reject_once", "reject_always"),
}


def chosen_option(answer: str, options: list[dict[str, Any]]) -> str | None:
    """The ACP option id for the host's answer: the option itself, or one of the matching kind
    for a generic decision (``allow``, ``allow_session``, ``deny``); an empty answer picks a
    reject option. None: answer with the ``cancelled`` outcome."""
    ids = [o["optionId"] for o in options]
    if answer in ids:
        return answer
    for kind in _ALIASES.get(answer or "deny", ()):
        for o in options:
            if o.get("kind") == kind:
                return str(o["optionId"])
    return None
