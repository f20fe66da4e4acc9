"""``ama`` interactive: read a prompt, run it, render the events, repeat.

Two front ends share everything else: the full one (prompt_toolkit: history, multi-line
with Alt-Enter, bracketed paste; Esc or Ctrl-C interrupts a run) and ``--line`` for plain
terminals (one line per prompt; Ctrl-C interrupts).  Ctrl-C twice quits.  Approval prompts
pause the run and ask ``[y]es / [a]lways (this session) / [n]o``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from ama.cli.render import Renderer, call_summary
from ama.errors import AmaError
from ama.permissions import Answer

QUIT_WINDOW_S = 2.0


class LineUI:
    """Plain stdin/stdout front end."""

    full = False

    def __init__(self) -> None:
        self._reader: asyncio.StreamReader | None = None

    async def read(self, prompt: str, default: str = "") -> str | None:
        if default:
            print(f"(draft: {default})")
        if self._reader is None:
            loop = asyncio.get_running_loop()
            self._reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(self._reader), sys.stdin)
        sys.stdout.write(prompt)
        sys.stdout.flush()
        line = await self._reader.readline()
        if not line:
            return None
        return line.decode(errors="replace").rstrip("\n")

    @contextlib.contextmanager
    def watch(self, on_interrupt: Callable[[bool], None]) -> Iterator[None]:
        yield  # Ctrl-C arrives as SIGINT: the session-wide handler interrupts the run

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        yield


def slash_completions(text: str, names: list[str]) -> list[str]:
    """The command names (without ``/``) that complete ``text`` typed at the prompt: only
    while the first word, starting with ``/``, is being typed."""
    if not text.startswith("/") or any(c.isspace() for c in text):
        return []
    return [n for n in names if n.startswith(text[1:])]


def _SlashCompleter(names: Callable[[], list[str]]) -> Any:
    from prompt_toolkit.completion import Completer, Completion

    class SlashCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Any:
            text = document.text_before_cursor
            for n in slash_completions(text, names()):
                yield Completion("/" + n, start_position=-len(text))

    return SlashCompleter()


class FullUI:
    """prompt_toolkit front end."""

    full = True

    def __init__(self, history_path: str, slash_names: Callable[[], list[str]] | None = None) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.key_binding import KeyBindings

        kb = KeyBindings()

        @kb.add("escape", "enter")
        @kb.add("c-j")
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        @kb.add("escape", "escape")
        def _double_escape(event: Any) -> None:
            """Idle double-Esc: empty input opens the rewind list; otherwise clears the input
            (kept in the history, so Up brings it back)."""
            buf = event.current_buffer
            if buf.text.strip():
                buf.append_to_history()
                buf.reset()
            else:
                event.app.exit(result="/rewind")

        os.makedirs(os.path.dirname(history_path), exist_ok=True)
        completer = _SlashCompleter(slash_names) if slash_names is not None else None
        self.session: Any = PromptSession(history=FileHistory(history_path), key_bindings=kb, completer=completer)
        self._watching: Any = None
        #: Ctrl-B during a run (set by cli/tasks_view.py: running tasks to the background)
        self.on_ctrl_b: Callable[[], None] | None = None

    async def read(self, prompt: str, default: str = "") -> str | None:
        try:
            return await self.session.prompt_async(prompt, default=default)
        except EOFError:
            return None

    @contextlib.contextmanager
    def watch(self, on_interrupt: Callable[[bool], None]) -> Iterator[None]:
        """During a run: raw keyboard input, Esc or Ctrl-C interrupts (the flag: Ctrl-C)."""
        from prompt_toolkit.input import create_input
        from prompt_toolkit.keys import Keys

        inp = create_input()

        def on_keys() -> None:
            keys = [k.key for k in inp.read_keys() + inp.flush_keys()]
            if Keys.ControlC in keys:
                on_interrupt(True)
            elif Keys.Escape in keys:
                on_interrupt(False)
            elif Keys.ControlB in keys and self.on_ctrl_b is not None:  # cli/tasks_view.py
                self.on_ctrl_b()

        self._watching = (inp, on_keys)
        with inp.raw_mode(), inp.attach(on_keys):
            try:
                yield
            finally:
                self._watching = None

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Leave raw mode while asking the user something in the middle of a run."""
        watching = self._watching
        if watching is None:
            yield
            return
        inp, on_keys = watching
        with inp.detach(), inp.cooked_mode():
            yield


class UiBroker:
    """Approval prompts in the terminal."""

    def __init__(self, ui: Any, renderer: Renderer) -> None:
        self.ui = ui
        self.renderer = renderer

    async def ask(self, req: dict[str, Any]) -> Answer:
        r = self.renderer
        r.line(r.style("? ", "33") + f"allow {call_summary(req['toolName'], req.get('input') or {}, 200)}")
        if req.get("message"):
            r.line(r.style(f"  {req['message']}", "2"))
        with self.ui.paused():
            while True:
                reply = await self.ui.read("  [y]es / [a]lways this session / [n]o (or type a reason): ")
                if reply is None:
                    return Answer("deny")
                text = reply.strip()
                low = text.lower()
                if low in ("y", "yes"):
                    return Answer("allow_once")
                if low in ("a", "always"):
                    return Answer("allow_session")
                if low in ("n", "no"):
                    return Answer("deny")
                if text:
                    return Answer("deny", text)


def help_text(extra: list[str] | None = None) -> str:
    from ama.agent.commands import help_lines

    return "\n".join([
        "Commands:",
        *help_lines(),
        *(extra or []),
        "Esc or Ctrl-C interrupts a running reply; Esc Esc when idle opens /rewind (or clears the input).",
        "Alt-Enter inserts a newline.",
    ])


class Interactive:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.renderer = Renderer()
        tty = sys.stdin.isatty() and sys.stdout.isatty()
        if args.line or not tty:
            self.ui: Any = LineUI()
        else:
            from ama.config.paths import data_dir

            self.ui = FullUI(os.path.join(str(data_dir()), "history.txt"), self._slash_names)
        self.agent: Any = None
        self.assistants: list[dict] = []
        self.last_interrupt = 0.0
        self.quit = False
        self.draft = ""  # text to refill the input with (after a rewind)
        self.main_task: asyncio.Task | None = None

    def _slash_names(self) -> list[str]:
        from ama.agent.commands import all_names

        return all_names() + (self.agent.prompts.names() if self.agent is not None else [])

    # --- agent lifecycle --------------------------------------------------------------

    def _build(self, session: str) -> None:
        from ama.agent.compose import build_agent
        from ama.agent.options import agent_options

        opts = agent_options(self.args, broker=UiBroker(self.ui, self.renderer))
        opts.session = session
        agent, warnings = build_agent(opts)
        for w in warnings:
            self.renderer.line(self.renderer.style(f"warning: {w}", "33"))
        agent.subscribe(self.renderer.handle)
        agent.subscribe(self._collect)
        from ama.cli.plan_cmd import attach

        attach(self, agent)
        from ama.cli import tasks_view

        tasks_view.attach(self, agent)  # [task:<agent>] lines (cli/tasks_view.py)
        self.agent = agent

    def _collect(self, ev: dict) -> None:
        if ev["type"] == "message_end" and ev["message"].get("role") == "assistant":
            self.assistants.append(ev["message"])

    async def _switch(self, session: str) -> None:
        old = self.agent
        self._build(session)
        if old is not None:
            await old.close()
        self.assistants = []
        self._banner()

    def _banner(self) -> None:
        from ama import __version__
        from ama.config.paths import sessions_dir
        from ama.session.shortid import short_session_id

        a = self.agent
        r = self.renderer
        where = a.session.path or "in memory"
        sid = short_session_id(sessions_dir(self.args.session_dir), a.session.id) if a.session.path else a.session.id[:8]
        r.line(r.style(f"ama {__version__} · {a.model.ref} · session {sid} ({where})", "2"))
        r.line(r.style("/help for commands · Esc interrupts · Ctrl-C twice quits", "2"))

    async def _pick_session(self) -> str:
        from ama.config.paths import sessions_dir
        from ama.session.catalog import list_page, scan
        from ama.session.shortid import short_session_ids

        root = str(sessions_dir(self.args.session_dir))
        page = list_page(scan(root), cwd=os.getcwd(), limit=20)
        if not page.sessions:
            self.renderer.line("No sessions in this directory; starting a new one.")
            return "new"
        short = short_session_ids(root, [s.id for s in page.sessions])
        for i, s in enumerate(page.sessions, 1):
            self.renderer.line(f"  {i:>2}. {short[s.id]}  {s.last_message_time[:16]}  {(s.name or s.first_message)[:70]}")
        while True:
            reply = await self.ui.read("Resume which? (number, Enter for the first) ")
            if reply is None:
                return "new"
            reply = reply.strip() or "1"
            if reply.isdigit() and 1 <= int(reply) <= len(page.sessions):
                return page.sessions[int(reply) - 1].path

    # --- running ----------------------------------------------------------------------

    def _interrupt(self, ctrl_c: bool) -> None:
        """Esc or Ctrl-C during a run aborts it; a second Ctrl-C soon after also quits."""
        if ctrl_c:
            now = time.monotonic()
            if now - self.last_interrupt < QUIT_WINDOW_S:
                self.quit = True
            self.last_interrupt = now
        self.agent.abort()

    def _on_key_interrupt(self, ctrl_c: bool) -> None:
        self._interrupt(ctrl_c)
        self.renderer.line(self.renderer.style("interrupting…", "33"))

    def _on_sigint(self) -> None:
        """Ctrl-C outside the full-screen input (line mode, or between prompts): abort a
        run; when idle, the second press within two seconds quits."""
        if self.agent is not None and self.agent.busy:
            self._interrupt(True)
            self.renderer.line(self.renderer.style("interrupting…", "33"))
            return
        now = time.monotonic()
        if now - self.last_interrupt < QUIT_WINDOW_S and self.main_task is not None:
            self.quit = True
            self.main_task.cancel()
            return
        self.last_interrupt = now
        self.renderer.line(self.renderer.style("(press Ctrl-C again to quit)", "2"))
        self.renderer.line(self.renderer.style("interrupting…", "33"))

    async def run_prompt(self, text: str, images: list | None = None) -> None:
        start = len(self.assistants)
        try:
            task = self.agent.start(text, images or None)
        except AmaError as err:
            self.renderer.line(self.renderer.style(f"error: {err.message}", "31"))
            return
        with self.ui.watch(self._on_key_interrupt):
            try:
                result = await task
            except AmaError as err:
                self.renderer.line(self.renderer.style(f"error: {err.message}", "31"))
                return
        r = self.renderer
        if result.record.status == "CANCELLED":
            r.line(r.style("interrupted", "33"))
            await self._restore_on_cancel(text)
        elif result.record.status == "FAILED":
            r.line(r.style(f"failed: {result.record.error_message or result.record.terminal_reason}", "31"))
        r.line(r.style(r.usage_line(self.assistants[start:]), "2"))
        from ama.cli import plan_panel

        await plan_panel.offer(self)  # a plan proposed in this run: the panel's answers

    async def _restore_on_cancel(self, text: str) -> None:
        """Interrupted before any reply text or tool call: withdraw the turn and refill the
        input with the prompt (``ui.restoreOnCancel``, default on)."""
        from ama.messages import AssistantMessage, TextContent, ToolCall

        a = self.agent
        if a.config is not None and not a.config.get("ui.restoreOnCancel"):
            return
        points = a.rewind_points()
        if not points or points[-1]["text"] != text:
            return
        branch = a.session.branch()
        start = next(i for i, e in enumerate(branch) if e.id == points[-1]["entryId"])
        for e in branch[start + 1 :]:
            m = e.message if e.type == "message" else None
            if isinstance(m, AssistantMessage) and any(
                isinstance(b, ToolCall) or (isinstance(b, TextContent) and b.text.strip()) for b in m.content
            ):
                return
        await a.rewind(points[-1]["entryId"], "conversation")
        self.draft = text
        self.renderer.line(self.renderer.style("(nothing was answered yet: the prompt is back in the input)", "2"))

    async def command(self, line: str) -> None:
        from ama.cli import slash

        await slash.run(self, line)

    async def loop(self) -> int:
        self.main_task = asyncio.current_task()
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self._on_sigint)
        try:
            return await self._loop()
        except asyncio.CancelledError:
            if self.quit:
                return 0
            raise

    async def _loop(self) -> int:
        choice = self.args.resume
        session = "memory" if self.args.no_session else ("continue" if self.args.continue_ else (choice or "new"))
        if choice == "":
            session = await self._pick_session()
        self._build(session)
        self._banner()
        first = " ".join(self.args.prompt).strip()
        images: list = []
        if self.args.from_:
            from ama.cli.agent import resolve_from

            reused = resolve_from(self.args)
            if reused is not None:
                base, images = reused
                first = f"{base}\n\n{first}" if first else base
                if images:
                    self.renderer.line(self.renderer.style("note: images of the reused message are not sent here", "33"))
                    images = []
        try:
            if first:
                self.renderer.line(f"> {first}")
                await self.run_prompt(first)
            while not self.quit:
                try:
                    draft, self.draft = self.draft, ""
                    text = await self.ui.read("> ", draft)
                except KeyboardInterrupt:
                    now = time.monotonic()
                    if now - self.last_interrupt < QUIT_WINDOW_S:
                        break
                    self.last_interrupt = now
                    self.renderer.line(self.renderer.style("(press Ctrl-C again to quit)", "2"))
                    continue
                if text is None:
                    break
                text = text.strip()
                if not text:
                    continue
                if text.startswith("/"):
                    await self.command(text)
                    continue
                await self.run_prompt(text)
        finally:
            if self.agent is not None:
                await asyncio.shield(self.agent.close())
        return 0


def interactive_main(args: argparse.Namespace) -> int:
    return asyncio.run(Interactive(args).loop())
