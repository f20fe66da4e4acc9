"""Builders for sessions used across the session tests."""

from __future__ import annotations

from pathlib import Path

from ama.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, Usage, UserMessage
from ama.session.store import Session


def user(text: str, **kw) -> UserMessage:
    return UserMessage(content=text, timestamp=1_700_000_000_000, **kw)


def assistant(text: str = "", calls: list[tuple[str, str]] = (), stop: str | None = None, **kw) -> AssistantMessage:
    content: list = [TextContent(text=text)] if text else []
    content += [ToolCall(id=cid, name=name, arguments={"path": "a.txt"}) for cid, name in calls]
    return AssistantMessage(
        content=content,
        api="anthropic-messages",
        provider=kw.pop("provider", "anthropic"),
        model=kw.pop("model", "claude-sonnet-4-5"),
        usage=Usage(input=10, output=5, total_tokens=15),
        stop_reason=stop or ("toolUse" if calls else "stop"),
        timestamp=1_700_000_000_500,
        **kw,
    )


def result(call_id: str, text: str = "ok", name: str = "read") -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name=name, content=[TextContent(text=text)])


def simple_session(sessions_dir: Path, cwd: str = "/work/proj", turns: int = 2) -> Session:
    """A session with ``turns`` user turns, each with one tool call and a reply."""
    s = Session.create(cwd, sessions_dir)
    for i in range(turns):
        s.append_message(user(f"question {i + 1}"))
        s.append_message(assistant(f"looking {i + 1}", [(f"call{i}", "read")]))
        s.append_message(result(f"call{i}", f"content {i + 1}"))
        s.append_message(assistant(f"answer {i + 1}"))
    return s
