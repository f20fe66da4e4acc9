"""``ama`` interactive: read a prompt, run it, render the events, repeat (docs/tui.md).

Two front ends share everything else: the full one (prompt_toolkit: completion, history,
multi-line input, pickers; a live region with the streaming text and the spinner; approvals
by single key) and ``--line`` for plain terminals and pipes (one line per prompt).  This
module coordinates; the parts live in ``cli/ui/`` (live region, status, approvals,
completion, pickers, the rewind panel, resume history, the added slash commands).
Esc or Ctrl-C interrupts a run; Ctrl-C twice quits.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
from typing import Any

from ama.cli.render import Renderer
from ama.cli.task_turns import NoteArrived, TaskTurns, banner
from ama.cli.ui.approvals import UiBroker
from ama.cli.ui.frontends import FullUI, LineUI
from ama.errors import AmaError
from ama.permission_modes import CYCLE, next_mode

QUIT_WINDOW_S = 2.0


KEY_BINDINGS = [
    ("Enter", "send the prompt"),
    ("Alt-Enter, Shift-Enter, \\ Enter", "a newline in the prompt"),
    ("Tab", "complete /commands and @file mentions (an @file is attached to the prompt)"),
    ("Up / Down, Ctrl-R", "prompt history; Ctrl-R searches it"),
    ("Shift-Tab", "cycle the permission mode (" + ", ".join(CYCLE) + ")"),
    ("Ctrl-T", "show the model's thinking in full, or collapsed to 3 lines (the default)"),
    ("Esc (while working)", "interrupt the reply (Ctrl-C too)"),
    ("typing + Enter (while working)", "queue the text: it is sent when the reply ends"),
    ("Esc Esc (idle)", "empty input: open the rewind panel; otherwise clear the input (Up brings it back)"),
    ("y / n / a / Esc", "answer an approval: yes, no (+ reason), always this session, deny and interrupt"),
    ("!COMMAND", "run a shell command here; the model sees its output with the next prompt"),
    ("Ctrl-D, Ctrl-C twice", "quit"),
]


def help_text(extra: list[str] | None = None) -> str:
    from ama.agent.commands import help_lines

    return "\n".join([
        "Commands:",
        *help_lines(),
        *(extra or []),
        "Keys:",
        *(f"  {k:<40} {what}" for k, what in KEY_BINDINGS),
    ])


class Interactive:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        tty = sys.stdin.isatty() and sys.stdout.isatty()
        self.renderer = Renderer(live=False if args.line or not tty else None)  # --line: plain lines
        if args.line or not tty:
            self.ui: Any = LineUI()
        else:
            from ama.config.paths import data_dir

            self.ui = FullUI(os.path.join(str(data_dir()), "history.txt"), self._commands, self._cwd)
            self.ui.renderer = self.renderer
            self.ui.toolbar = self._footer
            self.ui.on_shift_tab = self._cycle_mode
        self.agent: Any = None
        self.assistants: list[dict] = []
        self.last_interrupt = 0.0
        self.compacting = False  # /compact is running (cli/ui/commands.py)
        self.quit = False
        self.draft = ""  # text to refill the input with (after a rewind)
        self.main_task: asyncio.Task | None = None
        self._context_percent: float | None = None
        self._cost: float | None = None
        self._started_mode = "default"
        self.task_turns = TaskTurns()  # background tasks' notification turns (cli/task_turns.py)

    def _commands(self) -> list[tuple[str, str]]:
        """(name, description) of every slash command, templates and skills included."""
        if self.agent is not None:
            return [(c["name"], c["description"]) for c in self.agent.prompts.commands()]
        from ama.agent.commands import COMMANDS

        return [(n, c.description) for c in COMMANDS for n in c.names]

    def _cwd(self) -> str:
        return self.agent.cwd if self.agent is not None else os.getcwd()

    def _footer(self) -> str:
        from ama.cli.ui.status import footer

        if self.agent is None:
            return ""
        from ama.cli.tasks_view import running_lines

        rows = running_lines(self.agent)  # one row per running task, above the footer
        return "\n ".join([*rows, footer(self.agent, self._context_percent, self._cost)])

    def _refresh_footer(self) -> None:
        from ama.cli.ui.status import context_percent, session_cost

        self._context_percent = context_percent(self.agent)
        self._cost = session_cost(self.agent)

    def _cycle_mode(self) -> None:
        a = self.agent
        if a is None or a.busy:
            return
        try:
            a.set_permission_mode(next_mode(a.permissions.mode, self._started_mode))
        except AmaError:
            return

    # --- agent lifecycle --------------------------------------------------------------

    def _build(self, session: str) -> None:
        from ama.agent.compose import build_agent
        from ama.agent.options import agent_options

        broker = UiBroker(self.ui, self.renderer)
        opts = agent_options(self.args, broker=broker)
        opts.session = session
        agent, warnings = build_agent(opts)
        for w in warnings:
            self.renderer.line(self.renderer.style(f"warning: {w}", "33"))
        agent.subscribe(self.renderer.handle)
        agent.subscribe(self._collect)
        from ama.cli.plan_cmd import attach

        attach(self, agent)
        from ama.cli import tasks_view

        tasks_view.attach(self, agent)  # [task:<agent>] lines, Ctrl-B (cli/tasks_view.py)
        self.task_turns.attach(agent)
        broker.agent = agent
        self.agent = agent
        self._started_mode = agent.permissions.mode

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
        from ama.cli.ui.history import show_recent

        show_recent(a.session.branch(), r)

    async def _pick_session(self) -> str | None:
        """The session file to resume, "new" when there is none, None when cancelled."""
        from ama.config.paths import sessions_dir
        from ama.session.catalog import list_page, scan
        from ama.session.shortid import short_session_ids

        root = str(sessions_dir(self.args.session_dir))
        page = list_page(scan(root), cwd=os.getcwd(), limit=20)
        if not page.sessions:
            self.renderer.line("No sessions in this directory; starting a new one.")
            return "new"
        short = short_session_ids(root, [s.id for s in page.sessions])
        if self.ui.full:
            from ama.cli.util import local_time

            items = [
                f"{short[s.id]:<9} {local_time(s.last_message_time, seconds=False)}  {(s.name or s.first_message)[:70]}"
                for s in page.sessions
            ]
            i = await self.ui.pick(items, default=0, title="Resume which session?")
            return page.sessions[i].path if i is not None else None
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
        if self.agent is not None and (self.agent.busy or self.compacting):
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

    async def submit(self, text: str) -> None:
        """A prompt typed at the input: ``@path`` mentions of project files are attached."""
        from ama.cli.ui.completion import attach_mentions

        full, attached = attach_mentions(text, self.agent.cwd)
        if attached:
            self.renderer.line(self.renderer.style("attached: " + ", ".join(attached), "2"))
        await self.run_prompt(full)

    async def run_prompt(self, text: str, images: list | None = None, origin: str | None = None) -> None:
        start = len(self.assistants)
        try:
            task = self.agent.start(text, images or None, origin=origin)
        except AmaError as err:
            self.renderer.line(self.renderer.style(f"error: {err.message}", "31"))
            return
        self.renderer.start_status()
        try:
            with self.ui.watch(self._on_key_interrupt):
                if self.draft and self.ui.full:  # a draft kept from the input: go on typing it
                    self.ui.typeahead, self.draft = self.draft, ""
                    self.renderer.typeahead = self.ui.typeahead
                try:
                    result = await task
                except AmaError as err:
                    self.renderer.line(self.renderer.style(f"error: {err.message}", "31"))
                    return
        finally:
            self.renderer.stop_status()
            typed = getattr(self.ui, "typeahead", "")
            if typed and not self.draft:
                self.draft = typed
            elif self.ui.full:
                self.ui.submit_draft = False  # the draft is a restored prompt, not what was typed
        r = self.renderer
        if result.record.status == "CANCELLED":
            r.line(r.style("interrupted", "33"))
            if origin is None:
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
            session = await self._pick_session() or "new"
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
                queued = getattr(self.ui, "submit_draft", False) and self.draft.strip()
                note = None if queued else self.task_turns.take(self.agent)  # a queued prompt goes first
                if note is not None:  # a background task ended: its turn runs like a prompt
                    await self.agent.wait_idle()
                    self.renderer.line(self.renderer.style(banner(note), "2;36"))
                    await self.run_prompt(note, origin="task")
                    continue
                try:
                    draft, self.draft = self.draft, ""
                    self._refresh_footer()
                    if getattr(self.ui, "submit_draft", False) and draft.strip():
                        self.ui.submit_draft = False  # typed ahead and Enter pressed during the last run
                        self.renderer.line(f"> {draft}")
                        text = draft
                    else:
                        text = await self.task_turns.read(self.ui, "> ", draft)
                except NoteArrived as arrived:  # what was typed waits as the draft
                    self.draft = arrived.draft
                    continue
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
                if text.startswith("!"):
                    from ama.cli.ui.commands import run_shell

                    await run_shell(self, text[1:])
                    continue
                await self.submit(text)
        finally:
            if self.agent is not None:
                await asyncio.shield(self.agent.close())
        return 0


def interactive_main(args: argparse.Namespace) -> int:
    return asyncio.run(Interactive(args).loop())
