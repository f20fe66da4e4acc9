"""ama events and messages -> Agent Client Protocol payloads (pure: plain camelCase dicts).

Nothing here imports the ``acp`` package: the dicts are the wire shapes of ACP's
``session/update`` variants, validated into the package's models by ``acp_session.py``.

- ``EventMapper.on_event(ev)``: one agent event -> the updates to send (text and thought
  chunks, ``tool_call`` / ``tool_call_update``, ``plan``, ``current_mode_update``).
- tool calls: ``tool_kind``, ``tool_title``, ``tool_locations``, ``result_content``.
- ``acp_history.py`` replays a session for ``session/load``; ``acp_prompt.py`` maps prompts
  in and stop reasons out.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from ama.permission_modes import LABELS, PERMISSION_MODES

Update = dict[str, Any]

KINDS = {
    "read": "read",
    "write": "edit",
    "edit": "edit",
    "bash": "execute",
    "bash_output": "execute",
    "bash_kill": "execute",
    "ls": "search",
    "find": "search",
    "grep": "search",
}
#: tools whose ``path`` argument names the file (or directory) they touch
PATH_TOOLS = ("read", "write", "edit", "ls", "find", "grep")
#: tools whose text output is shown in a code fence
FENCED = ("read", "bash", "bash_output")
TODO_STATUS = {"pending": "pending", "in_progress": "in_progress", "done": "completed"}
MAX_TITLE = 120

PERMISSION_OPTIONS: list[dict[str, str]] = [
    {"optionId": "allow_once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "allow_always", "name": "Allow for this session", "kind": "allow_always"},
    {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
]
#: ACP option id -> ama ``Answer`` kind
ANSWERS = {"allow_once": "allow_once", "allow_always": "allow_session", "reject_once": "deny"}

#: ama permission modes offered as ACP session modes (ama.permission_modes: one order, one text)
MODES: list[dict[str, str]] = [
    {"id": m, "name": LABELS[m][0], "description": LABELS[m][1]} for m in PERMISSION_MODES
]


# --- tools ---------------------------------------------------------------------------


def tool_kind(name: str) -> str:
    if name in KINDS:
        return KINDS[name]
    low = name.lower()
    if "fetch" in low or low.startswith("web") or "http" in low or "url" in low:
        return "fetch"
    if "search" in low or "grep" in low or "find" in low:
        return "search"
    return "other"


def abs_path(path: str, cwd: str) -> str:
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def shown_path(path: str, cwd: str) -> str:
    full = abs_path(path, cwd)
    rel = os.path.relpath(full, cwd)
    return full if rel == ".." or rel.startswith(".." + os.sep) else rel


def _short(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    more = line != text.strip()
    if len(line) > MAX_TITLE:
        line, more = line[: MAX_TITLE - 1], True
    return line + ("…" if more else "")


def tool_title(name: str, args: dict[str, Any], cwd: str) -> str:
    path = args.get("path") if isinstance(args.get("path"), str) and args.get("path") else None
    where = shown_path(path, cwd) if path else None
    if name == "read":
        title = f"Read {where}"
        offset, limit = args.get("offset"), args.get("limit")
        if isinstance(offset, int) and offset > 1 or isinstance(limit, int):
            start = offset if isinstance(offset, int) and offset > 1 else 1
            title += (
                f" (from line {start})"
                if not isinstance(limit, int)
                else f" (lines {start}-{start + limit - 1})"
            )
        return title
    if name in ("write", "edit"):
        return f"{name.capitalize()} {where}"
    if name == "bash":
        cmd = _short(str(args.get("command", "")))
        return f"`{cmd}`" if "`" not in cmd else cmd
    if name == "ls":
        return f"List {where or '.'}"
    if name in ("find", "grep"):
        title = f"{name.capitalize()} {_short(str(args.get('pattern', '')))}"
        return f"{title} in {where}" if where else title
    if name == "todo":
        return "Read the todo list" if args.get("action") == "get" else "Update the todo list"
    shown = next((v for v in args.values() if isinstance(v, str) and v), "")
    return f"{name} {_short(shown)}".strip()


def tool_locations(
    name: str, args: dict[str, Any], cwd: str, details: Any = None, text: str | None = None
) -> list[dict[str, Any]]:
    """Where a call looks or writes, for an editor to follow: the file and line of a read
    (its first line), an edit or write (the first changed line, once known), grep's matches
    (once it ran: each matching file, with its first matching line in content mode)."""
    d = details if isinstance(details, dict) else {}
    if name == "grep" and text is not None:
        matches = grep_locations(text, d.get("mode"), cwd)
        if matches:
            return matches
    path = args.get("path")
    if name not in PATH_TOOLS or not isinstance(path, str) or not path:
        return []
    loc: dict[str, Any] = {"path": abs_path(path, cwd)}
    offset = args.get("offset")
    if name == "read":
        start = d.get("startLine")
        loc["line"] = start if isinstance(start, int) else offset if isinstance(offset, int) and offset > 1 else 1
    elif name == "edit" and isinstance(d.get("firstChangedLine"), int):
        loc["line"] = d["firstChangedLine"]
    elif name == "write" and d:
        loc["line"] = first_new_line(d.get("diff")) or 1
    return [loc]


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@", re.MULTILINE)
_GREP_LINE = re.compile(r"^(.+?):(\d+):")
MAX_LOCATIONS = 50


def first_new_line(diff: Any) -> int | None:
    """The first line of the new text that a unified diff's first hunk shows."""
    m = _HUNK.search(diff) if isinstance(diff, str) else None
    return max(1, int(m.group(1))) if m else None


def grep_locations(text: str, mode: Any, cwd: str) -> list[dict[str, Any]]:
    """grep's output -> one location per file (``path:line:text`` lines in content mode,
    a path per line in files_with_matches mode; count mode names files as ``path:count``)."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for line in text.split("\n"):
        if not line or line == "--" or line.startswith("[") or line.startswith("No matches"):
            continue
        loc: dict[str, Any]
        if mode == "content":
            m = _GREP_LINE.match(line)
            if m is None:
                continue
            loc = {"path": abs_path(m.group(1), cwd), "line": int(m.group(2))}
        elif mode == "count":
            loc = {"path": abs_path(line.rsplit(":", 1)[0], cwd)}
        else:
            loc = {"path": abs_path(line, cwd)}
        if loc["path"] in seen:
            continue
        seen.add(loc["path"])
        out.append(loc)
        if len(out) == MAX_LOCATIONS:
            break
    return out


def fenced(text: str) -> str:
    """``text`` in a Markdown code fence longer than any backtick run inside it."""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text.rstrip(chr(10))}\n{fence}"


def text_content(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def diff_hunks(diff: str) -> list[tuple[str, str]]:
    """A unified diff -> (old text, new text) per hunk, context lines included."""
    hunks: list[tuple[list[str], list[str]]] = []
    last: list[list[str]] = []
    for line in diff.splitlines(keepends=True):
        if line.startswith("@@"):
            hunks.append(([], []))
            continue
        if not hunks:
            continue  # the ---/+++ header
        old, new = hunks[-1]
        if line.startswith("\\"):  # "\ No newline at end of file" for the line before
            for side in last:
                if side:
                    side[-1] = side[-1].rstrip("\n")
            continue
        if line.startswith("... [diff cut"):
            break
        body = line[1:]
        if line.startswith(" "):
            old.append(body)
            new.append(body)
            last = [old, new]
        elif line.startswith("-"):
            old.append(body)
            last = [old]
        elif line.startswith("+"):
            new.append(body)
            last = [new]
    return [("".join(o), "".join(n)) for o, n in hunks]


def preview_content(name: str, args: dict[str, Any], cwd: str) -> list[dict[str, Any]]:
    """What a call is about to do, shown while it waits (an edit's replacement as a diff)."""
    if name == "edit" and isinstance(args.get("path"), str) and isinstance(args.get("old_string"), str):
        new = args.get("new_string")
        return [{"type": "diff", "path": abs_path(args["path"], cwd), "oldText": args["old_string"],
                 "newText": new if isinstance(new, str) else ""}]  # fmt: skip
    return []


def request_diffs(preview: Any, args: dict[str, Any]) -> list[dict[str, Any]]:
    """A ``permission_request.preview`` of an edit or write -> ACP diff content, one per hunk
    (a new file: its whole content, no old text)."""
    if not isinstance(preview, dict) or preview.get("kind") != "diff" or not isinstance(preview.get("path"), str):
        return []
    if preview.get("created") and isinstance(args.get("content"), str):
        return [{"type": "diff", "path": preview["path"], "oldText": None, "newText": args["content"]}]
    diff = preview.get("diff")
    hunks = diff_hunks(diff) if isinstance(diff, str) else []
    return [{"type": "diff", "path": preview["path"], "oldText": o, "newText": n} for o, n in hunks]


def result_content(
    name: str, args: dict[str, Any], result: dict[str, Any], cwd: str, is_error: bool
) -> list[dict]:
    """A tool result -> ACP tool call content: diffs for edit/write, else text (and images)."""
    blocks = result.get("content") or []
    text = "\n".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
    details = result.get("details")
    out: list[dict[str, Any]] = []
    if not is_error and name in ("edit", "write") and isinstance(details, dict):
        raw = details.get("path") or args.get("path")
        path = abs_path(raw, cwd) if isinstance(raw, str) and raw else ""
        diff = details.get("diff")
        if path and isinstance(diff, str) and diff:
            out += [{"type": "diff", "path": path, "oldText": o, "newText": n} for o, n in diff_hunks(diff)]
        elif path and name == "write" and details.get("created") and isinstance(args.get("content"), str):
            out.append({"type": "diff", "path": path, "oldText": None, "newText": args["content"]})
    if not out and text:
        out.append(text_content(fenced(text) if name in FENCED and not is_error else text))
    for b in blocks:
        if isinstance(b, dict) and b.get("type") == "image":
            out.append({"type": "content", "content": {"type": "image", "data": b.get("data", ""),
                                                       "mimeType": b.get("mimeType", "")}})  # fmt: skip
    return out


def plan_entries(items: Any) -> list[dict[str, str]]:
    out = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            status = TODO_STATUS.get(str(item.get("status")), "pending")
            out.append({"content": str(item.get("text", "")), "priority": "medium", "status": status})
    return out


# --- live events ---------------------------------------------------------------------


@dataclass
class Call:
    name: str
    args: dict[str, Any]
    title: str
    kind: str
    locations: list[dict[str, Any]]
    preview: list[dict[str, Any]]
    running: bool = False


@dataclass
class EventMapper:
    """Turns one session's agent events into ACP updates; remembers its tool calls."""

    cwd: str
    calls: dict[str, Call] = field(default_factory=dict)
    #: the call being executed (tools run one at a time): the one a permission ask is about
    current: str | None = None

    def on_event(self, ev: dict[str, Any]) -> list[Update]:
        kind = ev.get("type")
        if kind == "message_update":
            d = ev.get("assistantMessageEvent") or {}
            if d.get("type") == "text_delta" and d.get("delta"):
                return [chunk("agent_message_chunk", d["delta"])]
            if d.get("type") == "thinking_delta" and d.get("delta"):
                return [chunk("agent_thought_chunk", d["delta"])]
            return []
        if kind == "message_start":
            msg = ev.get("message") or {}
            if msg.get("role") == "user" and msg.get("origin"):  # steering, follow-up, Stop hook
                return [chunk("user_message_chunk", _user_text(msg.get("content")))]
            return []
        if kind == "tool_execution_start":
            return [self._start(ev["toolCallId"], ev.get("toolName", ""), ev.get("args") or {})]
        if kind == "permission_resolved":
            call = self.calls.get(self.current or "")
            if call is not None and ev.get("decision") in ("allow", "allow_session"):
                call.running = True
                return [
                    {"sessionUpdate": "tool_call_update", "toolCallId": self.current, "status": "in_progress"}
                ]
            return []
        if kind == "tool_execution_update":
            call = self.calls.get(ev.get("toolCallId", ""))
            if call is None:
                return []
            upd: Update = {"sessionUpdate": "tool_call_update", "toolCallId": ev["toolCallId"]}
            if not call.running:
                call.running = True
                upd["status"] = "in_progress"
            partial = ev.get("partial")
            if isinstance(partial, str) and partial:
                upd["content"] = [text_content(fenced(partial))]
            return [upd]
        if kind == "tool_execution_end":
            return [self._end(ev)]
        if kind == "todo_updated":
            return [{"sessionUpdate": "plan", "entries": plan_entries(ev.get("items"))}]
        if kind == "plan_proposed":  # the proposed steps, all pending until approved (docs/plan.md)
            steps = [{"text": st.get("text", ""), "status": "pending"} for st in ev.get("steps") or [] if isinstance(st, dict)]
            return [{"sessionUpdate": "plan", "entries": plan_entries(steps)}]
        if kind == "permission_mode_changed":
            return [{"sessionUpdate": "current_mode_update", "currentModeId": ev.get("mode")}]
        return []

    def _start(self, call_id: str, name: str, args: dict[str, Any]) -> Update:
        call = Call(name, args, tool_title(name, args, self.cwd), tool_kind(name),
                    tool_locations(name, args, self.cwd), preview_content(name, args, self.cwd))  # fmt: skip
        self.calls[call_id] = call
        self.current = call_id
        upd: Update = {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": call.title, "kind": call.kind,
                       "status": "pending", "rawInput": args}  # fmt: skip
        if call.locations:
            upd["locations"] = call.locations
        if call.preview:
            upd["content"] = call.preview
        return upd

    def _end(self, ev: dict[str, Any]) -> Update:
        call_id = ev["toolCallId"]
        call = self.calls.pop(call_id, None)
        if self.current == call_id:
            self.current = None
        name = call.name if call else ev.get("toolName", "")
        args = call.args if call else {}
        result = ev.get("result") or {}
        failed = bool(ev.get("isError"))
        upd: Update = {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                       "status": "failed" if failed else "completed",
                       "content": result_content(name, args, result, self.cwd, failed)}  # fmt: skip
        locations = tool_locations(name, args, self.cwd, result.get("details"), result_text(result))
        if locations and (call is None or locations != call.locations):
            upd["locations"] = locations
        return upd

    def permission_tool_call(self, request: dict[str, Any]) -> Update:
        """The ``toolCall`` of a ``session/request_permission`` for an ama ask."""
        call_id = self.current or str(request.get("requestId"))
        call = self.calls.get(call_id)
        name = call.name if call else str(request.get("toolName", ""))
        args = call.args if call else (request.get("input") or {})
        content = [text_content(str(request["message"]))] if request.get("message") else []
        shown = request_diffs(request.get("preview"), args) or (call.preview if call else preview_content(name, args, self.cwd))
        upd: Update = {"toolCallId": call_id, "title": call.title if call else tool_title(name, args, self.cwd),
                       "kind": tool_kind(name), "status": "pending", "rawInput": args,
                       "content": content + shown}  # fmt: skip
        locations = call.locations if call else tool_locations(name, args, self.cwd)
        if locations:
            upd["locations"] = locations
        return upd


def result_text(result: dict[str, Any]) -> str:
    blocks = result.get("content") or []
    return "\n".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")


def chunk(kind: str, text: str) -> Update:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def _user_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    )
