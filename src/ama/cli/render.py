"""Terminal rendering of agent events for the interactive and line modes.

Assistant text is streamed as Markdown one block at a time: text accumulates until a block
is complete (a blank line outside a code fence, or a closed fence), then the block is
rendered (with ``rich`` on a colour terminal, as plain text otherwise) and printed.  Tool
calls show as one line with their key argument, results as one indented summary line.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from typing import Any, TextIO

KEY_ARGS = {
    "read": "path",
    "write": "path",
    "edit": "path",
    "bash": "command",
    "ls": "path",
    "find": "pattern",
    "grep": "pattern",
    "todo": "action",
    "bash_output": "job_id",
    "bash_kill": "job_id",
}


def call_summary(name: str, args: dict[str, Any], width: int = 100) -> str:
    key = KEY_ARGS.get(name)
    if key and isinstance(args.get(key), str):
        value = args[key]
    else:
        value = json.dumps(args, ensure_ascii=False, sort_keys=True)
    value = " ".join(str(value).split())
    if len(value) > width:
        value = value[: width - 1] + "…"
    return f"{name}({value})"


def result_summary(result: dict[str, Any], is_error: bool) -> str:
    texts = [b.get("text", "") for b in result.get("content", []) if b.get("type") == "text"]
    images = sum(1 for b in result.get("content", []) if b.get("type") == "image")
    text = "\n".join(texts).strip()
    lines = text.splitlines()
    first = lines[0] if lines else ("(image)" if images else "(no output)")
    if len(first) > 100:
        first = first[:99] + "…"
    more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    return f"{first}{more}"


class MarkdownStream:
    """Splits streamed Markdown into complete blocks."""

    def __init__(self) -> None:
        self.buf = ""

    def feed(self, delta: str) -> list[str]:
        self.buf += delta
        out = []
        while True:
            cut = self._complete_block()
            if cut is None:
                return out
            block, self.buf = self.buf[:cut], self.buf[cut:].lstrip("\n")
            if block.strip():
                out.append(block.rstrip("\n"))

    def flush(self) -> str:
        block, self.buf = self.buf, ""
        return block.strip("\n")

    def _complete_block(self) -> int | None:
        in_fence = False
        pos = 0
        for line in self.buf.splitlines(keepends=True):
            if not line.endswith("\n"):
                return None
            stripped = line.strip()
            pos += len(line)
            if stripped.startswith("```") or stripped.startswith("~~~"):
                in_fence = not in_fence
                if not in_fence:
                    return pos  # a closed fence ends a block
                continue
            if not in_fence and not stripped and pos > 1:
                return pos
        return None


class Renderer:
    """Prints agent events; ``color`` follows the terminal and NO_COLOR."""

    def __init__(self, out: TextIO | None = None, *, color: bool | None = None) -> None:
        self.out = out or sys.stdout
        if color is None:
            color = self.out.isatty() and not os.environ.get("NO_COLOR")
        self.color = color
        self.md = MarkdownStream()
        self.thinking = False
        self.in_text = False

    # --- output helpers ---------------------------------------------------------------

    def style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def line(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def render_markdown(self, block: str) -> str:
        if not self.color:
            return block
        from rich.console import Console
        from rich.markdown import Markdown

        buf = io.StringIO()
        width = min(shutil.get_terminal_size((100, 40)).columns, 120)
        Console(file=buf, force_terminal=True, width=width, color_system="standard").print(Markdown(block))
        return buf.getvalue().rstrip("\n")

    def _end_text(self) -> None:
        rest = self.md.flush()
        if rest:
            self.line(self.render_markdown(rest))
        if self.thinking:
            self.out.write("\n")
            self.thinking = False
        self.in_text = False

    # --- events -----------------------------------------------------------------------

    def handle(self, ev: dict[str, Any]) -> None:
        t = ev["type"]
        if t == "message_update":
            a = ev["assistantMessageEvent"]
            kind = a["type"]
            if kind == "text_delta":
                if self.thinking:
                    self.out.write("\n")
                    self.thinking = False
                self.in_text = True
                for block in self.md.feed(a["delta"]):
                    self.line(self.render_markdown(block))
                    self.line()
            elif kind == "thinking_delta":
                if not self.thinking:
                    self.out.write(self.style("thinking: ", "2;3"))
                    self.thinking = True
                self.out.write(self.style(a["delta"], "2;3"))
                self.out.flush()
        elif t == "message_end" and ev["message"].get("role") == "assistant":
            self._end_text()
            msg = ev["message"]
            if msg.get("stopReason") == "error":
                self.line(self.style(f"error: {msg.get('errorMessage', 'the request failed')}", "31"))
        elif t == "tool_execution_start":
            self._end_text()
            self.line(self.style("● ", "36") + call_summary(ev["toolName"], ev.get("args") or {}))
        elif t == "tool_execution_end":
            summary = result_summary(ev.get("result") or {}, ev.get("isError", False))
            if ev.get("denied"):
                self.line(self.style(f"  ⎿ denied: {summary}", "33"))
            elif ev.get("isError"):
                self.line(self.style(f"  ⎿ {summary}", "31"))
            else:
                self.line(self.style(f"  ⎿ {summary}", "2"))
        elif t == "auto_retry_start":
            self.line(
                self.style(
                    f"{ev.get('errorMessage')}: retrying in {ev['delayMs'] / 1000:.1f}s "
                    f"(attempt {ev['attempt'] + 1} of {ev['maxAttempts']})",
                    "33",
                )
            )
        elif t in ("limit_reached", "model_fallback"):
            from ama.agent.guard import guard_notice

            self.line(self.style(guard_notice(ev) or t, "33"))
        elif t == "hook_executed" and (ev.get("error") or ev.get("timedOut")):
            self.line(self.style(f"hook {ev['event']}: {ev.get('error') or 'timed out'}", "33"))
        elif t == "background_job":
            self.line(self.style(f"[job {ev.get('jobId')} {ev.get('phase')}] {ev.get('command', '')}", "2"))
        elif t == "notification":
            self.line(self.style(ev.get("message", ""), "33" if ev.get("level") != "error" else "31"))
        elif t == "agent_settled":
            self._end_text()

    def usage_line(self, messages: list[dict[str, Any]]) -> str:
        inp = sum((m.get("usage") or {}).get("input", 0) for m in messages)
        out = sum((m.get("usage") or {}).get("output", 0) for m in messages)
        cached = sum((m.get("usage") or {}).get("cacheRead", 0) for m in messages)
        costs = [(m.get("usage") or {}).get("cost") for m in messages]
        cost = sum(c.get("total", 0) for c in costs if isinstance(c, dict))
        text = f"tokens: {inp} in · {out} out · {cached} cached"
        if any(isinstance(c, dict) for c in costs):
            text += f" · ${cost:.4f}"
        return text
