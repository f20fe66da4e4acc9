"""The plain-text transcript a summary request reads (compaction and rewind summaries)."""

from __future__ import annotations

from ama.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage, text_of


def message_lines(m: object, *, result_chars: int = 2_000, note_cut: bool = False) -> list[str]:
    """The lines of one user, assistant or tool-result message (none for other kinds); a
    tool result is cut at ``result_chars`` (``note_cut``: saying how much was left out)."""
    if isinstance(m, UserMessage):
        return [f"User: {text_of(m.content)}"]
    if isinstance(m, AssistantMessage):
        lines = []
        for b in m.content:
            if isinstance(b, TextContent) and b.text.strip():
                lines.append(f"Assistant: {b.text}")
            elif isinstance(b, ToolCall):
                args = " ".join(f"{k}={v!r:.200}" for k, v in b.arguments.items())
                lines.append(f"Assistant called {b.name}({args})")
        return lines
    if isinstance(m, ToolResultMessage):
        text = text_of(m.content)
        more = f" [... {len(text) - result_chars} more characters]" if note_cut and len(text) > result_chars else ""
        return [f"Result of {m.tool_name}{' (error)' if m.is_error else ''}: {text[:result_chars]}{more}"]
    return []
