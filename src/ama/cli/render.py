"""Terminal rendering of agent events for the interactive and line modes.

Assistant text is streamed as Markdown: text accumulates until a block is complete (a
blank line outside a code fence, or a closed fence), then the block is rendered (with
``rich`` on a colour terminal, as plain text otherwise) and printed once; on a colour
terminal the unfinished block is shown as it grows in the live region below the output.  Tool
calls show as one line with their key argument, results as one indented summary line.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
import time
from typing import Any, TextIO

from ama.cli.ui.glyphs import G

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
    """Prints agent events; ``color`` follows the terminal and NO_COLOR.

    On a colour terminal (``live``) the unfinished Markdown block, the thinking being
    streamed, the spinner line and the text typed ahead are drawn in a live region
    (``cli/ui/live.py``) redrawn in place; every finished block goes above it once.  Without
    colour (NO_COLOR, a pipe) complete blocks are printed as plain lines, nothing redrawn.
    """

    def __init__(self, out: TextIO | None = None, *, color: bool | None = None, live: bool | None = None) -> None:
        from ama.cli.ui.live import LiveRegion

        self.out = out or sys.stdout
        if color is None:
            color = self.out.isatty() and not os.environ.get("NO_COLOR")
        self.color = color
        self.live: LiveRegion | None = LiveRegion(self.out) if (color if live is None else live) else None
        self.md = MarkdownStream()
        self.thinking = False
        self.thinking_buf = ""
        self.in_text = False
        self.status: Any = None  # ui.status.Status while a run is drawn
        self.typeahead = ""  # keys typed during a run (they become the next input's draft)
        self.suspended = False
        self.thinking_full = False  # Ctrl-T: finished thinking kept in full, not collapsed
        self.prompt_active = False  # the full UI's input is on screen (set by FullUI.read)
        #: more rows under the spinner line (the running tasks: cli/tasks_view.py)
        self.extra_lines: Any = None
        self._ticker: Any = None
        self._partial_src = ""
        self._partial_lines: list[str] = []
        self._last_draw = 0.0

    # --- output helpers ---------------------------------------------------------------

    def style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def line(self, text: str = "") -> None:
        if self.live is not None and (self.live.rows or self.status is not None) and not self.suspended:
            self.live.draw(self._live_lines(), above=text + "\n")
            return
        if self.prompt_active:  # e.g. a background job ended while the input is shown
            from prompt_toolkit.application import run_in_terminal

            def write() -> None:
                self.out.write(text + "\n")
                self.out.flush()

            run_in_terminal(write)  # above the input, which is drawn again below
            return
        self.out.write(text + "\n")
        self.out.flush()

    def width(self) -> int:
        return min(shutil.get_terminal_size((100, 40)).columns, 120)

    def render_markdown(self, block: str, width: int | None = None) -> str:
        if not self.color:
            return block
        from rich.console import Console
        from rich.markdown import Markdown

        buf = io.StringIO()
        Console(file=buf, force_terminal=True, width=width or self.width(), color_system="standard").print(Markdown(block))
        return buf.getvalue().rstrip("\n")

    # --- the live region --------------------------------------------------------------

    def start_status(self) -> None:
        """A run began: draw the spinner (and keep it ticking) on a live terminal."""
        from ama.cli.ui.status import Status

        self.status = Status(ascii=not self.color)
        self.typeahead = ""
        if self.live is None:
            return
        import asyncio

        async def tick() -> None:
            while True:
                await asyncio.sleep(0.1)
                self.redraw(force=True)

        self._ticker = asyncio.get_running_loop().create_task(tick())
        self.redraw(force=True)

    def stop_status(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        self.status = None
        if self.live is not None:
            self.live.clear()

    def suspend(self) -> None:
        """Erase the live region and stop redrawing it (an approval prompt is shown)."""
        self.suspended = True
        if self.live is not None:
            self.live.clear()

    def resume(self) -> None:
        self.suspended = False
        self.redraw(force=True)

    def redraw(self, force: bool = False) -> None:
        if self.live is None or self.suspended or self.status is None:
            return
        now = time.monotonic()
        if not force and now - self._last_draw < 0.05:
            return
        self._last_draw = now
        self.live.draw(self._live_lines())

    def _live_lines(self) -> list[str]:
        lines: list[str] = []
        if self.thinking and self.thinking_buf.strip():
            tail = self.thinking_buf.strip().splitlines()[-3:]
            lines += [self.style(G.thinking + t if i == 0 else "  " + t, "2;3") for i, t in enumerate(tail)]
        partial = self.md.buf
        if partial.strip():
            if partial != self._partial_src:
                self._partial_src = partial
                self._partial_lines = self.render_markdown(partial, self.width() - 1).splitlines()
            lines += self._partial_lines
        if self.status is not None:
            lines.append(self.style(self.status.line(), "36"))
            if self.extra_lines is not None:
                lines += [self.style(t, "2;36") for t in self.extra_lines()]
        if self.typeahead:
            lines.append(self.style("> ", "2") + self.typeahead.replace("\n", "⏎"))
        return lines

    def _print_block(self, block: str) -> None:
        self._partial_src = ""
        self.line(self.render_markdown(block) + "\n")

    def _end_thinking(self) -> None:
        if not self.thinking:
            return
        self.thinking = False
        text, self.thinking_buf = self.thinking_buf.strip(), ""
        if self.live is None:
            self.out.write("\n")
            return
        if text:
            lines = text.splitlines()
            shown = lines if self.thinking_full else lines[:3]
            more = f" {G.ellipsis} (+{len(lines) - 3} lines, Ctrl-T shows them)" if len(lines) > len(shown) else ""
            body = "\n".join((G.thinking if i == 0 else "  ") + t for i, t in enumerate(shown)) + more
            self.line(self.style(body, "2;3"))

    def _end_text(self) -> None:
        self._end_thinking()
        rest = self.md.flush()
        self._partial_src = ""
        if rest:
            self.line(self.render_markdown(rest))
        self.in_text = False

    # --- events -----------------------------------------------------------------------

    def handle(self, ev: dict[str, Any]) -> None:
        t = ev["type"]
        if t == "message_update":
            a = ev["assistantMessageEvent"]
            kind = a["type"]
            if kind == "text_delta":
                self._end_thinking()
                self.in_text = True
                if self.status is not None:
                    self.status.chars += len(a["delta"])
                for block in self.md.feed(a["delta"]):
                    if self.live is None:
                        self.line(self.render_markdown(block))
                        self.line()
                    else:
                        self._print_block(block)
                self.redraw()
            elif kind == "thinking_delta":
                if self.status is not None:
                    self.status.chars += len(a["delta"])
                if self.live is not None:
                    self.thinking = True
                    self.thinking_buf += a["delta"]
                    self.redraw()
                    return
                if not self.thinking:
                    self.out.write(self.style("thinking: ", "2;3"))
                    self.thinking = True
                self.out.write(self.style(a["delta"], "2;3"))
                self.out.flush()
        elif t == "message_end" and ev["message"].get("role") == "assistant":
            self._end_text()
            msg = ev["message"]
            if self.status is not None:
                self.status.tokens += (msg.get("usage") or {}).get("output", 0)
                self.status.chars = 0
            if msg.get("stopReason") == "error":
                self.line(self.style(f"error: {msg.get('errorMessage', 'the request failed')}", "31"))
        elif t == "tool_execution_start":
            self._end_text()
            self.line(self.style(G.call, "36") + call_summary(ev["toolName"], ev.get("args") or {}))
        elif t == "tool_execution_end":
            result = ev.get("result") or {}
            summary = result_summary(result, ev.get("isError", False))
            if ev.get("denied"):
                self.line(self.style(f"  {G.result}denied: {summary}", "33"))
            elif ev.get("isError"):
                self.line(self.style(f"  {G.result}{summary}", "31"))
            else:
                self.line(self.style(f"  {G.result}{summary}", "2"))
                diff = (result.get("details") or {}).get("diff")
                if ev.get("toolName") in ("edit", "write") and isinstance(diff, str) and diff:
                    from ama.cli.ui.diffview import compact_diff

                    for row in compact_diff(diff, self.style):
                        self.line(row)
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
        elif t == "compaction_start" and ev.get("trigger") != "manual":  # /compact says it itself
            why = "the context is near its limit" if ev.get("trigger") == "threshold" else "the request was too long"
            self.line(self.style(f"compacting: {why}…", "2"))
        elif t == "compaction_end":
            from ama.agent.context_status import compaction_notice

            if ev.get("aborted"):
                self.line(self.style("compaction cancelled; the conversation is unchanged", "33"))
            elif isinstance(ev.get("result"), dict):
                self.line(self.style(compaction_notice(ev["result"]), "2"))
            elif ev.get("error"):
                self.line(self.style(f"compaction failed: {ev['error']}", "31"))
        elif t == "context_pressure":
            left = ev.get("estimatedTurnsLeft")
            turns = f", about {left} turns left" if isinstance(left, int) else ""
            self.line(self.style(f"context {ev.get('percent')}% full{turns}; /compact [focus] summarizes the older part", "33"))
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
