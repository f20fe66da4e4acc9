"""The recent conversation shown when a session is resumed (``--resume``, ``--continue``,
``/resume``): the last turns of the active branch, user prompts in full (cut at a few
lines), assistant text as Markdown, each tool call collapsed to one line with its result's
first line; older turns are counted, not shown."""

from __future__ import annotations

from typing import Any

from ama.cli.render import Renderer, call_summary
from ama.cli.ui.glyphs import G
from ama.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage, text_of

#: how many of the last user turns are shown
TURNS = 5
PROMPT_LINES = 6


def _turns(branch: list[Any]) -> list[list[Any]]:
    """Messages of the branch grouped in turns, each starting at a new user prompt."""
    turns: list[list[Any]] = []
    for e in branch:
        m = getattr(e, "message", None) if e.type == "message" else None
        if m is None:
            continue
        if isinstance(m, UserMessage) and (not isinstance(m.origin, str) or m.origin in ("", "plan", "task")):
            turns.append([m])
        elif turns:
            turns[-1].append(m)
    return turns


def show_recent(branch: list[Any], r: Renderer, turns: int = TURNS) -> int:
    """Print the last ``turns`` turns; the number of turns shown."""
    groups = _turns(branch)
    if not groups:
        return 0
    shown = groups[-turns:]
    if len(groups) > len(shown):
        r.line(r.style(f"… {len(groups) - len(shown)} earlier turns (/tree shows them all)", "2"))
    for group in shown:
        results = {m.tool_call_id: m for m in group if isinstance(m, ToolResultMessage)}
        for m in group:
            if isinstance(m, UserMessage):
                lines = text_of(m.content).strip().splitlines() or [""]
                more = f" … (+{len(lines) - PROMPT_LINES} lines)" if len(lines) > PROMPT_LINES else ""
                r.line(r.style("> ", "1") + "\n  ".join(lines[:PROMPT_LINES]) + more)
            elif isinstance(m, AssistantMessage):
                for b in m.content:
                    if isinstance(b, TextContent) and b.text.strip():
                        r.line(r.render_markdown(b.text.strip()))
                    elif isinstance(b, ToolCall):
                        res = results.get(b.id)
                        first = text_of(res.content).strip().splitlines()[:1] if res is not None else []
                        tail = f" {G.result}{first[0][:80]}" if first else ""
                        r.line(r.style(G.call, "36") + call_summary(b.name, b.arguments, 60) + r.style(tail, "2"))
    r.line(r.style("─" * 20 + " resumed " + "─" * 20, "2"))
    return len(shown)
