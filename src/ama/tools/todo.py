"""``todo``: the session's task list, kept as ``ama.todo`` custom entries.

``set`` replaces the whole list, ``update`` changes one item's status and/or text by id,
``get`` returns the current list.  Every change appends a whole-list snapshot
``custom{customType: "ama.todo", data: {items}}`` through ``ctx.session`` (``get`` reads the
latest on the branch) and emits ``{"type": "todo_updated", "items": [...]}``.  The tool
changes no file or process, so it counts as read-only (allowed in plan mode).
"""

from __future__ import annotations

from typing import Any

from ama.tools.base import BuiltinTool, Tool, ToolError, ToolResult
from ama.tools.context import SessionHandle, ToolContext

CUSTOM_TYPE = "ama.todo"
STATUSES = ["pending", "in_progress", "done"]
_MARK = {"pending": "[ ]", "in_progress": "[~]", "done": "[x]"}

DESCRIPTION = """Keep a task list for multi-step work, visible to the user.
- action "set": replace the whole list with items [{id, text, status}]; status is pending, in_progress or done.
- action "update": change one item (by id) to a new status and/or text.
- action "get": show the current list.
- Use it for tasks with three or more steps. Keep exactly one item in_progress while working, and mark an item done as soon as it is finished."""

_ITEM = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "minLength": 1, "description": 'Short unique id, e.g. "1".'},
        "text": {"type": "string", "minLength": 1, "description": "What to do."},
        "status": {"type": "string", "enum": STATUSES},
    },
    "required": ["id", "text", "status"],
    "additionalProperties": False,
}

PARAMETERS = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["get", "set", "update"], "description": "get, set or update."},
        "items": {"type": "array", "items": _ITEM, "description": "set: the complete new list."},
        "id": {"type": "string", "description": "update: id of the item to change."},
        "status": {"type": "string", "enum": STATUSES, "description": "update: the item's new status."},
        "text": {"type": "string", "minLength": 1, "description": "update: the item's new text."},
    },
    "required": ["action"],
    "additionalProperties": False,
}


def _check(args: dict) -> str | None:
    action = args["action"]
    if action == "set":
        items = args.get("items")
        if items is None:
            return "'items' is required for action 'set'"
        ids = [item["id"] for item in items]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            return f"item ids must be unique; repeated: {', '.join(dupes)}"
    elif action == "update":
        if not args.get("id"):
            return "'id' is required for action 'update'"
        if args.get("status") is None and args.get("text") is None:
            return "action 'update' needs 'status' and/or 'text'"
    return None


def current_items(session: SessionHandle) -> list[dict[str, Any]]:
    latest = session.latest_custom(CUSTOM_TYPE)
    items = latest.get("items") if isinstance(latest, dict) else None
    return [dict(i) for i in items] if isinstance(items, list) else []


def render(items: list[dict[str, Any]]) -> str:
    if not items:
        return "The todo list is empty."
    done = sum(1 for i in items if i.get("status") == "done")
    lines = [f"Todo list ({done}/{len(items)} done):"]
    lines += [f"{_MARK.get(i.get('status', ''), '[?]')} {i.get('id')}. {i.get('text')}" for i in items]
    return "\n".join(lines)


def make_todo_tool() -> Tool:
    async def run(call_id: str, args: dict, ctx: ToolContext, on_update: object) -> ToolResult:
        if ctx.session is None:
            raise ToolError("The todo list needs a session, and this run has none.")
        action = args["action"]
        items = current_items(ctx.session)
        if action == "set":
            items = [{"id": i["id"], "text": i["text"], "status": i["status"]} for i in args["items"]]
        elif action == "update":
            item = next((i for i in items if i.get("id") == args["id"]), None)
            if item is None:
                known = ", ".join(str(i.get("id")) for i in items) or "none"
                raise ToolError(f"No todo item with id {args['id']!r} (ids: {known}).")
            for key in ("status", "text"):
                if args.get(key) is not None:
                    item[key] = args[key]
        if action != "get":
            ctx.session.append_custom(CUSTOM_TYPE, {"items": items})
            if ctx.emit is not None:
                ctx.emit({"type": "todo_updated", "items": items})
        return ToolResult.text(render(items), {"items": items})

    return BuiltinTool("todo", "Todo", DESCRIPTION, PARAMETERS, True, run, _check)
