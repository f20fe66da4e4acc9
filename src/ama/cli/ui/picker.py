"""Selectable lists: Up/Down (or k/j) move, Enter chooses, Esc cancels; the highlighted row
can show a detail computed on demand (the rewind list's ``N files +x −y``).  The list is
drawn below the output and erased when done; the line UI numbers the rows instead."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from ama.cli.ui.glyphs import G

Detail = Callable[[int], Awaitable[str]]


async def pick_full(
    items: list[str], *, default: int = 0, title: str = "", detail: Detail | None = None, hint: str = ""
) -> int | None:
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import Layout
    from prompt_toolkit.layout.containers import HSplit, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    state = {"i": max(0, min(default, len(items) - 1))}
    details: dict[int, str] = {}
    pending: set[int] = set()
    app: Any = None

    def want(i: int) -> None:
        if detail is None or i in details or i in pending:
            return
        pending.add(i)

        async def run() -> None:
            try:
                details[i] = await detail(i)
            except Exception as err:  # a broken checkpoint must not break the list
                details[i] = f"({err})"
            pending.discard(i)
            if app is not None:
                app.invalidate()

        asyncio.get_running_loop().create_task(run())

    def text() -> Any:
        import shutil

        out: list[tuple[str, str]] = []
        if title:
            out.append(("bold", title + "\n"))
        rows = max(3, shutil.get_terminal_size((100, 40)).lines - 4)  # a long list scrolls
        first = min(max(0, state["i"] - rows // 2), max(0, len(items) - rows))
        if first:
            out.append(("fg:ansibrightblack", f"  ↑ {first} more\n"))
        for n, item in list(enumerate(items))[first : first + rows]:
            if n == state["i"]:
                want(n)
                extra = details.get(n, G.ellipsis if detail is not None else "")
                out.append(("reverse", f"{G.pointer}{item}"))
                out.append(("fg:ansibrightblack", f"  {extra}\n" if extra else "\n"))
            else:
                out.append(("", f"  {item}\n"))
        if first + rows < len(items):
            out.append(("fg:ansibrightblack", f"  ↓ {len(items) - first - rows} more\n"))
        out.append(("fg:ansibrightblack", hint or "↑/↓ move · Enter choose · Esc cancel"))
        return out

    kb = KeyBindings()

    @kb.add("up")
    @kb.add("k")
    def _up(event: Any) -> None:
        state["i"] = max(0, state["i"] - 1)

    @kb.add("down")
    @kb.add("j")
    def _down(event: Any) -> None:
        state["i"] = min(len(items) - 1, state["i"] + 1)

    @kb.add("enter")
    @kb.add("c-j")  # Enter pressed while the terminal was still in cooked mode arrives as LF
    def _enter(event: Any) -> None:
        event.app.exit(result=state["i"])

    @kb.add("escape")
    @kb.add("c-c")
    @kb.add("q")
    def _cancel(event: Any) -> None:
        event.app.exit(result=None)

    app = Application(
        layout=Layout(HSplit([Window(FormattedTextControl(text), dont_extend_height=True)])),
        key_bindings=kb,
        full_screen=False,
        erase_when_done=True,
    )
    app.timeoutlen = 0.05  # Esc alone cancels at once
    app.ttimeoutlen = 0.05
    return await app.run_async()


async def pick_line(ui: Any, items: list[str], *, default: int = 0, title: str = "", **_: Any) -> int | None:
    """Numbered rows; a number chooses, Enter takes the default, anything else cancels."""
    if title:
        print(title)
    for n, item in enumerate(items, 1):
        print(f"  {n:>2}. {item}")
    reply = await ui.read(f"choose 1-{len(items)} (Enter: {default + 1}, anything else cancels): ")
    if reply is None:
        return None
    reply = reply.strip()
    if not reply:
        return default
    if reply.isdigit() and 1 <= int(reply) <= len(items):
        return int(reply) - 1
    return None
