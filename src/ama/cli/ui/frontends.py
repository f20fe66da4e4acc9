"""The two front ends of the interactive UI: ``LineUI`` (plain stdin/stdout lines) and
``FullUI`` (prompt_toolkit: completion, history, key bindings, pickers; raw keyboard input
during a run routed to interrupts, approvals and typed-ahead text).  docs/tui.md."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from ama.cli.render import Renderer


class LineUI:
    """Plain stdin/stdout front end."""

    full = False

    def __init__(self) -> None:
        self._reader: asyncio.StreamReader | None = None
        self._line: asyncio.Future[bytes] | None = None  # a readline kept across an ended read
        self._woken: asyncio.Future[None] | None = None

    async def read(self, prompt: str, default: str = "") -> str | None:
        if default:
            print(f"(draft: {default})")
        if self._reader is None:
            loop = asyncio.get_running_loop()
            self._reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(self._reader), sys.stdin)
        sys.stdout.write(prompt)
        sys.stdout.flush()
        if self._line is None:
            self._line = asyncio.ensure_future(self._reader.readline())
        self._woken = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait({self._line, self._woken}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._woken = None
        if not self._line.done():  # end_read: the line is read next time
            sys.stdout.write("\n")
            return ""
        line, self._line = self._line.result(), None
        if not line:
            return None
        return line.decode(errors="replace").rstrip("\n")

    async def ask_line(self, prompt: str) -> str | None:
        return await self.read(prompt)

    def end_read(self) -> str | None:
        """End a ``read`` in progress (it returns ""; None: no read is waiting).  The line
        being typed stays in the terminal (cooked mode) and is read by the next ``read``."""
        if self._woken is None or self._woken.done():
            return None
        self._woken.set_result(None)
        return ""

    async def pick(self, items: list[str], **kw: Any) -> int | None:
        from ama.cli.ui.picker import pick_line

        return await pick_line(self, items, **kw)

    @contextlib.contextmanager
    def watch(self, on_interrupt: Callable[[bool], None]) -> Iterator[None]:
        yield  # Ctrl-C arrives as SIGINT: the session-wide handler interrupts the run

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        yield


#: the double-Esc window (seed 004 §4): a second Esc within it rewinds / clears the input
DOUBLE_ESC_S = 0.8
#: what terminals send for Shift-Enter (CSI u and xterm modifyOtherKeys): a newline, read as
#: a key no terminal sends (Ctrl-J cannot be it: an Enter typed in cooked mode arrives as LF)
SHIFT_ENTER = ("\x1b[13;2u", "\x1b[27;2;13~")
NEWLINE_KEY = "f24"


class FullUI:
    """prompt_toolkit front end."""

    full = True

    def __init__(
        self,
        history_path: str,
        commands: Callable[[], list[tuple[str, str]]],
        cwd: Callable[[], str],
    ) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.input import ansi_escape_sequences
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.keys import Keys

        from ama.cli.ui.completion import FileIndex, Pastes, make_completer

        for seq in SHIFT_ENTER:
            ansi_escape_sequences.ANSI_SEQUENCES[seq] = NEWLINE_KEY
        self.pastes = Pastes()
        self.toolbar: Callable[[], str] = lambda: ""
        self.on_shift_tab: Callable[[], None] = lambda: None
        self.hint = ""
        self._hint_until = 0.0
        self._last_esc = 0.0
        kb = KeyBindings()

        @kb.add("escape", "enter")
        @kb.add(NEWLINE_KEY)
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        @kb.add("enter")
        @kb.add("c-j")  # an Enter typed while the terminal was in cooked mode arrives as LF
        def _enter(event: Any) -> None:
            """``\\`` at the end of the line + Enter: a newline instead of sending."""
            buf = event.current_buffer
            if buf.document.text_before_cursor.endswith("\\"):
                buf.delete_before_cursor(1)
                buf.insert_text("\n")
                return
            buf.validate_and_handle()

        @kb.add("escape")
        def _escape(event: Any) -> None:
            """Idle double-Esc (within DOUBLE_ESC_S): empty input opens the rewind list;
            otherwise clears the input (kept in the history, so Up brings it back).  The
            first press says what the second would do."""
            buf = event.current_buffer
            now = time.monotonic()
            if now - self._last_esc <= DOUBLE_ESC_S:
                self._last_esc = 0.0
                self.hint = ""
                if buf.text.strip():
                    buf.append_to_history()
                    buf.reset()
                else:
                    event.app.exit(result="/rewind")
                return
            self._last_esc = now
            self._show_hint(event.app, "press Esc again to clear the input" if buf.text.strip() else "press Esc again to rewind")

        @kb.add(Keys.BracketedPaste)
        def _paste(event: Any) -> None:
            event.current_buffer.insert_text(self.pastes.insert(event.data))

        @kb.add("c-t")
        def _thinking(event: Any) -> None:
            r = self.renderer
            if r is not None:
                r.thinking_full = not r.thinking_full
                self._show_hint(event.app, "thinking: shown in full" if r.thinking_full else "thinking: collapsed to 3 lines")

        @kb.add("s-tab")
        def _mode(event: Any) -> None:
            self.on_shift_tab()
            event.app.invalidate()

        os.makedirs(os.path.dirname(history_path), exist_ok=True)
        self.files = FileIndex(cwd)
        self.session: Any = PromptSession(
            history=FileHistory(history_path),
            key_bindings=kb,
            completer=make_completer(commands, self.files),
            complete_while_typing=True,
            bottom_toolbar=self._toolbar,
        )
        self.session.app.timeoutlen = 0.05  # Esc alone is a key here, not only a prefix
        self._watching: Any = None
        self._choice: asyncio.Future[str] | None = None
        self._choice_at = 0.0
        self.typeahead = ""
        self.submit_draft = False  # Enter was pressed after typing ahead during a run
        self.renderer: Renderer | None = None
        #: Ctrl-B during a run (set by cli/tasks_view.py: running tasks to the background)
        self.on_ctrl_b: Callable[[], None] | None = None

    def _show_hint(self, app: Any, text: str) -> None:
        self.hint = text
        self._hint_until = time.monotonic() + DOUBLE_ESC_S
        app.invalidate()

        def expire() -> None:
            if time.monotonic() >= self._hint_until:
                self.hint = ""
                app.invalidate()

        asyncio.get_running_loop().call_later(DOUBLE_ESC_S + 0.01, expire)

    def _toolbar(self) -> Any:
        if self.hint:
            return " " + self.hint
        return " " + self.toolbar() + " · shift-tab: mode · /help"

    async def read(self, prompt: str, default: str = "") -> str | None:
        r = self.renderer
        if r is not None:
            r.prompt_active = not self.watching
        try:
            text = await self.session.prompt_async(prompt, default=default)
        except EOFError:
            return None
        finally:
            self.session.app.erase_when_done = False  # set by end_read
            if r is not None:
                r.prompt_active = False
        return self.pastes.expand(text)

    def end_read(self) -> str | None:
        """End a ``read`` in progress (it returns ""), erasing its input line; returns the
        text that was typed, to be offered again as the draft (None: no read is waiting)."""
        app = self.session.app
        if not app.is_running:
            return None
        if app.is_done:  # it is returning what was entered
            return ""
        text = app.current_buffer.text
        app.erase_when_done = True
        app.exit(result="")
        return text

    def refresh(self) -> None:
        """Draw the input and its footer again (e.g. a running task's line changed)."""
        app = self.session.app
        if app.is_running:
            app.invalidate()

    async def pick(self, items: list[str], **kw: Any) -> int | None:
        from ama.cli.ui.picker import pick_full

        return await pick_full(items, **kw)

    async def ask_line(self, prompt: str) -> str | None:
        """A plain line (no completion, no toolbar, no history) for pickers and reasons."""
        from prompt_toolkit import PromptSession

        try:
            return await PromptSession().prompt_async(prompt)
        except EOFError:
            return None

    @contextlib.contextmanager
    def watch(self, on_interrupt: Callable[[bool], None]) -> Iterator[None]:
        """During a run: raw keyboard input.  Esc or Ctrl-C interrupts (the flag: Ctrl-C),
        an approval waiting for a key takes y / n / a, other keys are typed ahead into the
        draft of the next input (shown under the spinner)."""
        from prompt_toolkit.input import create_input

        inp = create_input()

        def on_keys() -> None:
            for kp in inp.read_keys() + inp.flush_keys():
                self._key(kp, on_interrupt)

        self._watching = (inp, on_keys)
        self.typeahead = ""
        self.submit_draft = False
        with inp.raw_mode(), inp.attach(on_keys):
            try:
                yield
            finally:
                self._watching = None
                if self._choice is not None and not self._choice.done():
                    self._choice.set_result("esc")

    @property
    def watching(self) -> bool:
        return self._watching is not None

    def _key(self, kp: Any, on_interrupt: Callable[[bool], None]) -> None:
        from prompt_toolkit.keys import Keys

        choice = self._choice if self._choice is not None and not self._choice.done() else None
        if kp.key == Keys.ControlC:
            on_interrupt(True)
            return
        if kp.key == Keys.ControlB and self.on_ctrl_b is not None:  # cli/tasks_view.py
            self.on_ctrl_b()
            return
        if kp.key == Keys.Escape:
            if choice is not None:
                choice.set_result("esc")
            on_interrupt(False)
            return
        data = kp.data if isinstance(kp.data, str) else ""
        if choice is not None and time.monotonic() >= self._choice_at and data.lower() in ("y", "n", "a"):
            choice.set_result(data.lower())
            return
        if kp.key in (Keys.ControlM, Keys.ControlJ) and self.typeahead.strip():
            self.submit_draft = True  # sent as the next prompt as soon as this run ends
        elif kp.key in (Keys.Backspace, Keys.ControlH):
            self.typeahead = self.typeahead[:-1]
        elif kp.key == Keys.ControlU:
            self.typeahead = ""
        elif kp.key == Keys.BracketedPaste or (len(data) == 1 and data.isprintable()):
            self.typeahead += data
        else:
            return
        if self.renderer is not None:
            self.renderer.typeahead = self.typeahead + ("  (queued: sent when this reply ends)" if self.submit_draft else "")
            self.renderer.redraw(force=True)

    def key_choice(self, grace: float) -> asyncio.Future[str]:
        """The next y / n / a (or "esc") pressed at least ``grace`` seconds from now."""
        fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._choice = fut
        self._choice_at = time.monotonic() + grace

        def done(_: Any) -> None:
            if self._choice is fut:
                self._choice = None

        fut.add_done_callback(done)
        return fut

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
