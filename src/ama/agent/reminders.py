"""Reminders for the model (``ama.reminder``, docs/compaction.md "Reminders").

Short facts the model would otherwise lose track of in a long session, each source
switchable under ``reminders.*`` (all on by default):

| source | key | says |
| --- | --- | --- |
| todo restatement | ``reminders.todo`` | the open todo items (before a new prompt, when the list changed since it was last restated) |
| changed files | ``reminders.changedFiles`` | files the agent read that changed or disappeared on disk since (each version once) |
| context usage | ``reminders.contextUsage`` | how full the window is, at 70 % and 90 % (once per crossing) |
| budget | ``reminders.budget`` | what is left of the run's limits (turns, cost, tokens, wall time) at 75 % and 90 % used |
| background commands | ``reminders.backgroundJobs`` | background jobs that exited since the last reminder, with exit code and output file |

Placement (seed 000, customType table) keeps the cached prefix intact: before a new prompt
they are one ``custom_message{customType:"ama.reminder", display:false}`` entry at the end
of the context; during a run they are not an entry of their own but appended to the last
tool result of a batch (the newest message, so already-sent messages never change).  The
text is wrapped in ``<system-reminder>`` … ``</system-reminder>``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ama.messages import TextContent, ToolResultMessage

if TYPE_CHECKING:
    from ama.agent.guard import RunGuard
    from ama.agent.session import AgentSession

CUSTOM_TYPE = "ama.reminder"
SOURCES = ("todo", "changedFiles", "contextUsage", "budget", "backgroundJobs")
CONTEXT_LEVELS = (90, 70)
BUDGET_LEVELS = (0.9, 0.75)
MAX_FILES = 20


def wrap(lines: list[str]) -> str:
    return "<system-reminder>\n" + "\n".join(lines) + "\n</system-reminder>"


@dataclass
class ReminderState:
    """What was already said (``AgentSession.reminders``), so nothing is repeated."""

    #: the run in progress (set by the run loop), for the budget source
    guard: RunGuard | None = None
    todo_said: str | None = None
    files_said: dict[str, tuple[int, int] | None] = field(default_factory=dict)
    jobs_said: set[str] = field(default_factory=set)
    context_level: int = 0
    budget_said: dict[str, float] = field(default_factory=dict)


def _on(agent: AgentSession, source: str) -> bool:
    cfg = agent.config
    value = cfg.get(f"reminders.{source}") if cfg is not None else None
    return value is not False


# --- sources ----------------------------------------------------------------------------


def todo_lines(agent: AgentSession, st: ReminderState) -> list[str]:
    from ama.tools.todo import current_items

    items = [i for i in current_items(agent.session) if i.get("status") != "done"]
    sig = repr([(i.get("id"), i.get("status"), i.get("text")) for i in items])
    if not items or sig == st.todo_said:
        return []
    st.todo_said = sig
    out = ["Open todo items (keep them current with the todo tool):"]
    out += [f"- [{i.get('status', 'pending')}] {i.get('id', '?')}: {i.get('text', '')}" for i in items]
    return out


def changed_files_lines(agent: AgentSession, st: ReminderState) -> list[str]:
    from ama.tools.context import file_sha256

    changed: list[str] = []
    deleted: list[str] = []
    for path, (size, mtime_ns, digest) in list(agent.read_files.entries.items()):
        try:
            s = os.stat(path)
        except FileNotFoundError:
            if path not in st.files_said or st.files_said[path] is not None:
                st.files_said[path] = None
                deleted.append(path)
            continue
        except OSError:
            continue
        now = (s.st_size, s.st_mtime_ns)
        if now == (size, mtime_ns) or st.files_said.get(path) == now:
            continue
        try:
            same = s.st_size == size and file_sha256(path) == digest
        except OSError:
            continue
        st.files_said[path] = now
        if not same:
            changed.append(path)
    if not changed and not deleted:
        return []
    out: list[str] = []
    rel = [os.path.relpath(p, agent.cwd) if p.startswith(agent.cwd + os.sep) else p for p in changed]
    if rel:
        more = f" (and {len(rel) - MAX_FILES} more)" if len(rel) > MAX_FILES else ""
        out.append("Files you read changed on disk since: " + ", ".join(rel[:MAX_FILES]) + more + ". Read them again before relying on them.")
    if deleted:
        gone = [os.path.relpath(p, agent.cwd) if p.startswith(agent.cwd + os.sep) else p for p in deleted]
        out.append("Files you read were deleted since: " + ", ".join(gone[:MAX_FILES]) + ".")
    return out


def context_lines(agent: AgentSession, st: ReminderState, tokens: int | None = None) -> list[str]:
    window = agent.model.context_window
    if window <= 0:
        return []
    if tokens is None:
        from ama.agent.compaction import context_size

        tokens = context_size(agent).tokens
    percent = tokens * 100 / window
    level = next((lv for lv in CONTEXT_LEVELS if percent >= lv), 0)
    said, st.context_level = st.context_level, level
    if level <= said:
        return []
    left = max(0, window - tokens)
    return [
        f"Context window: {percent:.0f}% used ({left:,} tokens left). Keep outputs short; older messages "
        "may be summarized soon, so note anything you must not lose in the todo list."
    ]


def budget_lines(agent: AgentSession, st: ReminderState) -> list[str]:
    g = st.guard
    if g is None:
        return []
    out: list[str] = []
    for kind, unit in (("turns", "model calls"), ("cost", "USD"), ("tokens", "tokens"), ("wallTime", "seconds")):
        limit = g.limits.limit_for(kind)
        if not limit:
            continue
        used = g.value_of(kind)
        frac = used / limit
        level = next((lv for lv in BUDGET_LEVELS if frac >= lv), 0.0)
        if level <= st.budget_said.get(kind, 0.0):
            continue
        st.budget_said[kind] = level
        left = max(0.0, limit - used)
        fmt = (lambda v: f"{v:.2f}") if kind == "cost" else (lambda v: f"{v:,.0f}")
        out.append(f"Budget: {fmt(used)} of {fmt(limit)} {unit} used ({fmt(left)} left); wrap up before the limit stops the run.")
    return out


def jobs_lines(agent: AgentSession, st: ReminderState) -> list[str]:
    jobs = agent.jobs
    if jobs is None or not hasattr(jobs, "jobs"):
        return []
    out: list[str] = []
    for j in jobs.jobs():
        if j.returncode is None or j.id in st.jobs_said:
            continue
        st.jobs_said.add(j.id)
        from ama.tools._process import describe_exit

        code = describe_exit(j.returncode)[0]
        how = "was stopped" if getattr(j, "kill_requested", False) else f"exited with code {code}"
        out.append(f"Background command {j.id} (`{j.command}`) {how}; its output: {j.output_path} (bash_output reads it).")
    return out


def collect(agent: AgentSession, *, before_prompt: bool) -> list[str]:
    st: ReminderState = agent.reminders
    lines: list[str] = []
    if before_prompt and _on(agent, "todo"):
        lines += todo_lines(agent, st)
    if _on(agent, "changedFiles"):
        lines += changed_files_lines(agent, st)
    if _on(agent, "backgroundJobs"):
        lines += jobs_lines(agent, st)
    if _on(agent, "contextUsage"):
        lines += context_lines(agent, st)
    if not before_prompt and _on(agent, "budget"):
        lines += budget_lines(agent, st)
    return lines


# --- placement --------------------------------------------------------------------------


def before_prompt(agent: AgentSession) -> Any:
    """Before a new prompt's user message: one ``ama.reminder`` entry (or nothing)."""
    agent.reminders.guard = None
    agent.reminders.budget_said.clear()  # each run has its own budget
    lines = collect(agent, before_prompt=True)
    if not lines:
        return None
    return agent.session.append_custom_message(CUSTOM_TYPE, wrap(lines), display=False)


def on_batch_tail(agent: AgentSession, msg: ToolResultMessage) -> None:
    """The last tool result of a batch, before it is written: reminders go at its end."""
    lines = collect(agent, before_prompt=False)
    if lines:
        msg.content.append(TextContent(text=wrap(lines)))


__all__ = ["CUSTOM_TYPE", "SOURCES", "ReminderState", "before_prompt", "collect", "on_batch_tail", "wrap"]
