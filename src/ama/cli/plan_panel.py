"""The plan panel of the interactive UI: a proposed plan in a box, and the answers to it.

A proposal is printed as a panel (``render``: the title and version, the plan's Markdown, its
file).  In the full-screen UI, when the run that proposed it settles, ``offer`` asks for the
answer on a ``plan>`` line:

    a [MODE]  approve and implement, keeping the context
    c [MODE]  compact, then implement
    f [MODE]  approve into a fresh session with the plan
    r [TEXT]  revise: the feedback (asked for when not given) starts the revision turn
    x         reject (stay in plan mode)
    Enter     decide later (/plan shows it again); a /command runs as usual

``MODE`` is the permission mode to execute in (default: the one before plan mode).  The answers
go through ``/plan`` (``cli/plan_cmd.py``), so the line UI and scripts keep using ``/plan``
directly.  While the plan executes, the todo list is printed on every change (``plan_cmd.attach``).
docs/plan.md describes it.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

#: what may be typed at ``plan>`` -> the ``/plan`` verb
CHOICES = {
    "a": "approve", "approve": "approve",
    "c": "compact", "compact": "compact",
    "f": "fresh", "fresh": "fresh",
    "r": "revise", "revise": "revise",
    "x": "reject", "reject": "reject",
}  # fmt: skip
MENU = "[a]pprove · [c]ompact, then implement · [f]resh session · [r]evise · [x] reject · Enter: later"


class PanelState:
    """Per UI: a plan was proposed since the last offer."""

    def __init__(self) -> None:
        self.due = False


def state(app: Any) -> PanelState:
    st = getattr(app, "plan_panel_state", None)
    if st is None:
        st = PanelState()
        app.plan_panel_state = st
    return st


def render(app: Any, title: str, version: int, markdown: str, path: str | None) -> None:
    r = app.renderer
    width = max(40, min(shutil.get_terminal_size((100, 40)).columns, 120) - 1)
    head = f"╭── plan: {title} (v{version}) "
    r.line(r.style(head + "─" * max(0, width - len(head)), "36"))
    bar = r.style("│ ", "36")
    for ln in _markdown(r, markdown, width - 2).splitlines() or [""]:
        r.line(bar + ln)
    if path:
        rel = os.path.relpath(path)
        r.line(bar + r.style(f"saved as {path if rel.startswith('..') else rel}", "2"))
    r.line(r.style("╰" + "─" * (width - 1), "36"))


def _markdown(r: Any, text: str, width: int) -> str:
    """``text`` rendered for the terminal, ``width`` columns wide (the box's inside)."""
    if not getattr(r, "color", False):
        return text.rstrip("\n")
    import io

    from rich.console import Console
    from rich.markdown import Markdown

    buf = io.StringIO()
    Console(file=buf, force_terminal=True, width=width, color_system="standard").print(Markdown(text))
    return buf.getvalue().rstrip("\n")


def on_proposed(app: Any) -> None:
    state(app).due = True


async def offer(app: Any) -> None:
    """After a run: while a plan proposed in it waits (full-screen UI only), ask for the answer."""
    st = state(app)
    if not getattr(app.ui, "full", False):
        st.due = False  # the line UI answers with /plan (scripts pipe those)
        return
    r = app.renderer
    while st.due and not app.quit:
        st.due = False
        plan = app.agent.plans.pending()
        if plan is None:
            return
        mode = app.agent.plans.pre_plan_mode()
        r.line(r.style(MENU, "36"))
        r.line(r.style(f"  add a mode to execute in, e.g. 'a auto-edit' (default: {mode})", "2"))
        reply = await app.ui.read("plan> ")
        reply = (reply or "").strip()
        if not reply:
            r.line(r.style("the plan waits: /plan shows it, /plan approve answers it", "2"))
            return
        if reply.startswith("/"):
            await app.command(reply)
            return
        word, _, rest = reply.partition(" ")
        verb = CHOICES.get(word.lower())
        if verb is None:
            r.line(r.style(f"unknown answer {word!r}; type a, c, f, r or x (or Enter to decide later)", "31"))
            st.due = True
            continue
        if verb == "reject" and rest.strip():
            r.line(r.style("reject takes no argument; to ask for changes use r FEEDBACK", "31"))
            st.due = True
            continue
        await app.command(f"/plan {verb} {rest.strip()}".rstrip())
        again = app.agent.plans.pending()
        if again is not None and (again.id, again.version) == (plan.id, plan.version):
            st.due = True  # not answered (a bad mode, or revise without feedback): ask again
