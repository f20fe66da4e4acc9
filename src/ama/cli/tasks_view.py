"""Task sub-agents in the interactive modes: live ``[task:<agent>]`` lines and ``/tasks``.

``attach(app, agent)`` prints each task's start, its tool calls, its end (status, turns, cost)
and labels a sub-agent's approval request with ``[task:<agent>]``.  While tasks run, one row
each (``running_lines``: description, turns, cost, last action) is shown under the spinner
during a run and above the footer at the input, redrawn at every ``subagent_*`` event.  ``/tasks`` lists the
session's tasks (status, last action, turns, cost); ``/tasks ID`` (a prefix is enough) shows
that task's session read-only; ``/tasks stop ID`` stops a running one.  docs/agents.md.
"""

from __future__ import annotations

from typing import Any

USAGE = "/tasks [ID | stop ID]"


def _agent_of(agent: Any, task_id: str | None) -> str:
    tasks = getattr(agent, "tasks", None)
    info = tasks.registry.get(task_id) if tasks is not None and task_id else None
    return info.agent if info is not None else "?"


def label(agent_name: str) -> str:
    return f"[task:{agent_name}]"


def event_line(agent: Any, ev: dict[str, Any]) -> str | None:
    """The line to print for a sub-agent event (None: nothing)."""
    t = ev.get("type")
    if t == "subagent_start":
        bg = " (background)" if ev.get("background") else ""
        return f"{label(str(ev.get('agent')))} {ev.get('description')}{bg} · {ev.get('taskId')}"
    if t == "subagent_update" and ev.get("kind") == "tool":
        return f"{label(_agent_of(agent, ev.get('taskId')))}   ● {ev.get('toolName')}"
    if t == "subagent_end":
        usage = ev.get("usage") or {}
        cost = (usage.get("cost") or {}).get("total", 0) if isinstance(usage.get("cost"), dict) else 0
        info = agent.tasks.registry.get(ev.get("taskId")) if getattr(agent, "tasks", None) is not None else None
        turns = f" · {info.turns} turns" if info is not None and info.turns else ""
        err = f": {ev.get('error')}" if ev.get("error") else ""
        return f"{label(_agent_of(agent, ev.get('taskId')))} {ev.get('status')}{err}{turns} · ${cost:.4f}"
    if t == "permission_request" and isinstance(ev.get("context"), dict) and ev["context"].get("taskId"):
        return f"{label(_agent_of(agent, ev['context']['taskId']))} a sub-agent asks for approval:"
    return None


def attach(app: Any, agent: Any) -> None:
    if getattr(agent, "tasks", None) is None:
        app.renderer.extra_lines = None
        return

    def on_event(ev: dict[str, Any]) -> None:
        text = event_line(agent, ev)
        if text is not None:
            color = "33" if ev.get("type") == "permission_request" else "2;36"
            app.renderer.line(app.renderer.style(text, color))
        if str(ev.get("type", "")).startswith("subagent_"):  # the rows of running tasks changed
            app.renderer.redraw()
            refresh = getattr(getattr(app, "ui", None), "refresh", None)
            if callable(refresh):
                refresh()

    agent.subscribe(on_event)
    app.renderer.extra_lines = lambda: running_lines(agent)

    def to_background() -> None:
        moved = agent.tasks.to_background()
        text = f"moved to the background: {', '.join(moved)}" if moved else "no foreground task is running"
        app.renderer.line(app.renderer.style(text, "2"))

    if hasattr(app, "ui") and hasattr(app.ui, "on_ctrl_b"):
        app.ui.on_ctrl_b = to_background


def running_lines(agent: Any, width: int | None = None) -> list[str]:
    """One row per running task: ``[task:<agent>] <description> · N turns · $cost · <last action>``."""
    tasks = getattr(agent, "tasks", None)
    if tasks is None:
        return []
    if width is None:
        import shutil

        width = shutil.get_terminal_size((100, 40)).columns - 2
    out = []
    for t in tasks.registry.tasks.values():
        if t.status != "running":
            continue
        parts = [f"{label(t.agent)} {t.description or t.task_id}", f"{t.turns or 0} turns"]
        if t.cost_usd is not None:
            parts.append(f"${t.cost_usd:.4f}")
        parts.append(t.last_action or "starting")
        row = " · ".join(parts)
        out.append(row if len(row) <= width else row[: max(width - 1, 1)] + "…")
    return out


def task_rows(agent: Any) -> list[str]:
    tasks = getattr(agent, "tasks", None)
    if tasks is None or not tasks.registry.tasks:
        return []
    out = []
    for t in tasks.registry.tasks.values():
        cost = f"${t.cost_usd:.4f}" if t.cost_usd is not None else "-"
        last = f" · {t.last_action}" if t.last_action else ""
        out.append(f"  {t.task_id}  {t.status:<11} {t.agent:<10} {t.turns or 0:>3} turns  {cost}  {t.description}{last}")
    return out


def session_view(path: str, width: int = 400) -> list[str]:
    """The messages of a task's session, one or more lines each (read-only)."""
    from ama.agent.transcript import message_lines
    from ama.session.reader import read_session

    data = read_session(path)
    lines: list[str] = []
    for e in data.entries:
        m = getattr(e, "message", None)
        if m is None or type(m).__name__ == "SystemMessage":
            continue
        for line in message_lines(m, result_chars=width):
            lines.append(line if len(line) <= width else line[: width - 1] + "…")
    return lines


async def cmd_tasks(app: Any, arg: str) -> None:
    r = app.renderer
    a = app.agent
    tasks = getattr(a, "tasks", None)
    if tasks is None:
        r.line("this session has no task tool (tasks.maxDepth)")
        return
    verb, _, rest = arg.partition(" ")
    if not arg:
        rows = task_rows(a)
        r.line("\n".join(rows) if rows else "no tasks in this session")
        if rows:
            r.line(r.style(f"open one: {USAGE}", "2"))
        return
    ref = rest.strip() if verb == "stop" else arg.strip()
    found = [t for t in tasks.registry.tasks.values() if t.task_id.startswith(ref)]
    if len(found) != 1:
        r.line(r.style(f"no task {ref!r}" if not found else f"{ref!r} matches {len(found)} tasks; give more characters", "31"))
        return
    info = found[0]
    if verb == "stop":
        r.line(f"stopping {info.task_id}" if tasks.stop(info.task_id) else f"{info.task_id} is not running ({info.status})")
        return
    r.line(r.style(f"── {label(info.agent)} {info.description} · {info.status} · {info.task_id}", "36"))
    path = (info.session_ref or {}).get("sessionFile")
    if not path:
        r.line(info.result or "(no session file)")
        return
    try:
        for line in session_view(path):
            r.line(line)
    except Exception as exc:  # a damaged or missing child file: say so, do not crash the UI
        r.line(r.style(f"cannot read {path}: {exc}", "31"))


def session_line(agent: Any) -> str | None:
    """``/session``: the tasks' roll-up, or None without tasks."""
    tasks = getattr(agent, "tasks", None)
    if tasks is None or not tasks.registry.tasks:
        return None
    roll = tasks.rollup()
    u = roll["usage"]
    return f"tasks    {roll['count']} · tokens {u['input']} in · {u['output']} out · ${roll['cost']:.4f}"


__all__ = ["attach", "cmd_tasks", "event_line", "running_lines", "session_line", "session_view", "task_rows"]
