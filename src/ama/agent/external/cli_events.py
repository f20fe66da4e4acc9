"""Pure readers of the JSON event streams of ``claude -p --output-format stream-json
--verbose`` and ``codex exec --json``: each :meth:`feed` takes one decoded line and returns
the host progress payloads it means, while the reader keeps the session id, the answer,
the usage and the outcome (docs/external-agents.md, "Claude Code" and "Codex")."""

from __future__ import annotations

from typing import Any

from ama.agent.external.acp_events import input_summary
from ama.agent.external.base import Usage

OUTPUT_CHARS = 2000

_CLAUDE_KINDS = {
    "Bash": "execute",
    "BashOutput": "execute",
    "Read": "read",
    "NotebookRead": "read",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Write": "edit",
    "NotebookEdit": "edit",
    "Grep": "search",
    "Glob": "search",
    "LS": "search",
    "WebFetch": "fetch",
    "WebSearch": "fetch",
    "TodoWrite": "think",
    "Task": "think",
}


def _clip(text: str) -> str:
    return text if len(text) <= OUTPUT_CHARS else text[: OUTPUT_CHARS - 1] + "…"


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0


class Stream:
    """What every reader keeps."""

    def __init__(self) -> None:
        self.session_id: str | None = None
        self.answer: str | None = None
        self.usage: Usage | None = None
        self.status: str | None = None  # "completed" | "failed", once the stream said so
        self.error: str | None = None

    def feed(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        raise NotImplementedError


class ClaudeStream(Stream):
    """``claude -p --output-format stream-json --verbose``: ``system``/``init``, ``assistant``
    and ``user`` messages in the Anthropic shape, one closing ``result``."""

    def __init__(self) -> None:
        super().__init__()
        self._texts: list[str] = []

    def feed(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        kind = event.get("type")
        if isinstance(event.get("session_id"), str):
            self.session_id = event["session_id"]
        if kind == "assistant" and event.get("parent_tool_use_id") is None:
            return self._assistant(event.get("message") or {})
        if kind == "user" and event.get("parent_tool_use_id") is None:
            return self._tool_results(event.get("message") or {})
        if kind == "result":
            self._result(event)
        return []

    def _assistant(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            t = block.get("type")
            if t == "text" and block.get("text"):
                self._texts.append(block["text"])
                out.append({"kind": "text", "text": block["text"]})
            elif t == "thinking" and block.get("thinking"):
                out.append({"kind": "thinking", "text": block["thinking"]})
            elif t == "tool_use":
                name = str(block.get("name", ""))
                call: dict[str, Any] = {
                    "kind": "tool_call",
                    "toolCallId": str(block.get("id", "")),
                    "title": name,
                    "toolKind": _CLAUDE_KINDS.get(name, "other"),
                    "status": "in_progress",
                }
                summary = input_summary(block.get("input"))
                if summary:
                    call["inputSummary"] = summary
                out.append(call)
        return out

    def _tool_results(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        content = message.get("content")
        out: list[dict[str, Any]] = []
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            upd: dict[str, Any] = {
                "kind": "tool_update",
                "toolCallId": str(block.get("tool_use_id", "")),
                "status": "failed" if block.get("is_error") else "completed",
            }
            body = block.get("content")
            if isinstance(body, list):
                body = "".join(b.get("text", "") for b in body if isinstance(b, dict))
            if isinstance(body, str) and body:
                upd["output"] = _clip(body)
            out.append(upd)
        return out

    def _result(self, event: dict[str, Any]) -> None:
        u: dict[str, Any] = event["usage"] if isinstance(event.get("usage"), dict) else {}
        cost = event.get("total_cost_usd", event.get("cost_usd"))
        self.usage = Usage(
            input=_int(u.get("input_tokens")),
            output=_int(u.get("output_tokens")),
            cache_read=_int(u.get("cache_read_input_tokens")),
            cache_write=_int(u.get("cache_creation_input_tokens")),
            cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
            known=bool(u),
        )
        text = event.get("result")
        self.answer = text if isinstance(text, str) else "\n\n".join(self._texts)
        sub = str(event.get("subtype", ""))
        if event.get("is_error") or sub.startswith("error"):
            self.status = "failed"
            detail = {"error_max_turns": "stopped at its turn limit", "error_during_execution": "failed during execution"}
            what = detail.get(sub) or ("failed" if sub in ("", "success") else sub)
            self.error = f"claude {what}" + (f": {text}" if isinstance(text, str) and text else "")
        else:
            self.status = "completed"


class CodexStream(Stream):
    """``codex exec --json``: ``thread.started``, ``turn.*``, ``item.*`` (agent_message,
    reasoning, command_execution, file_change, mcp_tool_call, web_search, todo_list), ``error``."""

    def __init__(self) -> None:
        super().__init__()
        self._started: set[str] = set()

    def feed(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        kind = event.get("type")
        if kind == "thread.started" and isinstance(event.get("thread_id"), str):
            self.session_id = event["thread_id"]
        elif kind in ("item.started", "item.updated", "item.completed"):
            item = event.get("item")
            if isinstance(item, dict):
                return self._item(item, done=kind == "item.completed")
        elif kind == "turn.completed":
            u: dict[str, Any] = event["usage"] if isinstance(event.get("usage"), dict) else {}
            inp, cached = _int(u.get("input_tokens")), _int(u.get("cached_input_tokens"))
            turn = Usage(input=max(0, inp - cached), output=_int(u.get("output_tokens")), cache_read=cached, known=bool(u))
            if self.usage is None:
                self.usage = turn
            else:
                self.usage.add(turn)
            if self.status is None:
                self.status = "completed"
        elif kind == "turn.failed":
            err: dict[str, Any] = event["error"] if isinstance(event.get("error"), dict) else {}
            self.status = "failed"
            self.error = f"codex turn failed: {err.get('message') or 'no message'}"
        elif kind == "error" and isinstance(event.get("message"), str):
            self.error = self.error or f"codex: {event['message']}"
        return []

    def _item(self, item: dict[str, Any], *, done: bool) -> list[dict[str, Any]]:
        t = item.get("type")
        iid = str(item.get("id", ""))
        if t == "agent_message":
            if done and isinstance(item.get("text"), str):
                self.answer = item["text"]
                return [{"kind": "text", "text": item["text"]}]
            return []
        if t == "reasoning":
            return [{"kind": "thinking", "text": item["text"]}] if done and item.get("text") else []
        if t == "todo_list":
            entries = [
                {"content": str(e.get("text", "")), "status": "completed" if e.get("completed") else "pending"}
                for e in item.get("items") or []
                if isinstance(e, dict)
            ]
            return [{"kind": "plan", "entries": entries}]
        view = _codex_tool(item)
        if view is None:
            return []
        out: list[dict[str, Any]] = []
        if iid not in self._started:
            self._started.add(iid)
            out.append({"kind": "tool_call", "toolCallId": iid, **view, "status": "in_progress"})
        if done:
            failed = item.get("status") == "failed" or _int(item.get("exit_code")) != 0
            upd: dict[str, Any] = {"kind": "tool_update", "toolCallId": iid, "status": "failed" if failed else "completed"}
            output = item.get("aggregated_output")
            if isinstance(output, str) and output:
                upd["output"] = _clip(output)
            out.append(upd)
        return out


def _codex_tool(item: dict[str, Any]) -> dict[str, Any] | None:
    t = item.get("type")
    if t == "command_execution":
        cmd = str(item.get("command", ""))
        return {"title": cmd, "toolKind": "execute", "inputSummary": input_summary(cmd) or ""}
    if t == "file_change":
        paths = [str(c.get("path", "")) for c in item.get("changes") or [] if isinstance(c, dict)]
        return {
            "title": "edit " + ", ".join(paths),
            "toolKind": "edit",
            "locations": [{"path": p} for p in paths],
        }
    if t == "mcp_tool_call":
        return {"title": f"{item.get('server', '')}.{item.get('tool', '')}", "toolKind": "other"}
    if t == "web_search":
        return {"title": f"search {item.get('query', '')}", "toolKind": "fetch"}
    return None
