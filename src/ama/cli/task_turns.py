"""Background tasks' notification turns in the interactive modes (docs/agents.md, docs/tui.md).

When a background task ends, its ``<task-notification>`` must start a turn of the parent.
Outside the interactive modes the ``TaskManager`` starts that turn itself once the session is
idle; here the front end takes it instead (``TaskManager.on_notification``), so that it runs
like any prompt: with the spinner and the live region, and Esc interrupts it.  If the input
is waiting, its read is ended and what was typed is kept as the draft (``NoteArrived``).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any


class NoteArrived(Exception):
    """The read was ended because a notification turn is due; ``draft`` is what was typed."""

    def __init__(self, draft: str) -> None:
        super().__init__("task notification")
        self.draft = draft


class TaskTurns:
    def __init__(self) -> None:
        self.pending: list[tuple[Any, str]] = []
        self.wake = asyncio.Event()

    def attach(self, agent: Any) -> None:
        """Take the notification turns of ``agent``'s tasks."""
        tasks = getattr(agent, "tasks", None)
        if tasks is None:
            return

        def take(text: str) -> bool:
            self.pending.append((agent, text))
            self.wake.set()
            return True

        tasks.on_notification = take

    def take(self, agent: Any) -> str | None:
        """The next notification of ``agent`` (those of a session left behind are dropped)."""
        while self.pending:
            owner, text = self.pending.pop(0)
            if owner is agent:
                return text
        self.wake.clear()
        return None

    async def read(self, ui: Any, prompt: str, draft: str) -> str | None:
        """``ui.read`` that ends early, raising ``NoteArrived``, when a notification arrives."""
        if self.pending:
            raise NoteArrived(draft)
        self.wake.clear()
        kept: list[str] = []

        async def watch() -> None:
            await self.wake.wait()
            while (text := ui.end_read()) is None:  # the input is not up yet
                await asyncio.sleep(0.02)
            kept.append(text)

        watcher = asyncio.ensure_future(watch())
        try:
            line = await ui.read(prompt, draft)
        finally:
            watcher.cancel()
        if kept and not line:
            raise NoteArrived(kept[0])
        return line


_ATTR = re.compile(r'(task-id|agent|status)="([^"]*)"')


def banner(text: str) -> str:
    """The line shown before a notification turn."""
    head = text.split("\n", 1)[0]
    attrs = dict(_ATTR.findall(head))
    return f"[task:{attrs.get('agent', '?')}] {attrs.get('task-id', '?')} ended {attrs.get('status', '?')}: reporting to the model"


__all__ = ["NoteArrived", "TaskTurns", "banner"]
