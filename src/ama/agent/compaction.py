"""Tier 2 of context management (SPEC D10, docs/compaction.md): a model-written summary.

* ``maybe_compact`` runs before every model request of a run: when the next request
  (``context_budget.measure``) would be larger than the window's limit, the older part of
  the conversation is summarized into a ``compaction`` entry (trigger ``threshold``).
* ``recover_overflow`` runs when a provider answers ``context_overflow``: the failed
  attempt is removed from the context (``context_edit{reason:"overflow"}``), the history is
  compacted (trigger ``overflow``, ``willRetry: true``) and the request is sent once more.
* ``compact`` is the manual form (RPC ``compact``, ``ama sessions compact``), with an
  optional focus for the summary.

The cut point (``firstKeptEntryId``) keeps about ``compaction.keepRecentTokens`` of the
newest context verbatim and is always a user, assistant or custom message, never a tool
result: a tool call and its result are on the same side.  The summary ends with the last
user request verbatim and a ``<post-compact-state>`` block (files read and modified, the
todo list, running background jobs: lists and pointers, no file bodies).  System messages
(the system prompt with the project notes) are never summarized: the projection replays
them first.  ``compaction.enabled: false`` turns all of this off.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ama.agent.context_budget import ContextSize, Window, estimate_entry, measure
from ama.agent.events import event
from ama.agent.summary_parts import summarize
from ama.agent.transcript import message_lines
from ama.errors import AmaError, Busy
from ama.messages import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    ContextMessage,
    CustomMessage,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    text_of,
)
from ama.session.entries import AnyEntry, CompactionEntry, CustomMessageEntry, MessageEntry

if TYPE_CHECKING:
    from ama.agent.session import AgentSession

DEFAULTS = {"enabled": True, "threshold": 0.8, "reserveTokens": 16_384, "keepRecentTokens": 20_000}
RESULT_CHARS = 2_000  # of each tool result in the summary request
READ_TOOLS = ("read", "grep", "find", "ls")
WRITE_TOOLS = ("write", "edit")

SUMMARY_SYSTEM = (
    "You compress the history of a coding-agent session so that the agent can continue the work "
    "from your summary alone. Write Markdown with these sections: Goal (the user's goals and "
    "constraints), Progress (what was done, with file paths and commands and their outcomes), "
    "Decisions, Errors and fixes, Next steps. Keep identifiers, paths, numbers and error messages "
    "exact. Be concise and factual; no preamble."
)

OVERFLOW_FAILED = (
    "the conversation does not fit the model's context window ({window} tokens) even after "
    "compaction: {error}"
)
OVERFLOW_DISABLED = (
    "the conversation does not fit the model's context window ({window} tokens) and compaction is "
    "off (compaction.enabled: false): {error}"
)


@dataclass(frozen=True)
class Settings:
    enabled: bool
    threshold: float
    reserve_tokens: int
    keep_recent_tokens: int


def settings(config: Any) -> Settings:
    def get(key: str) -> Any:
        value = config.get(f"compaction.{key}", DEFAULTS[key]) if config is not None else DEFAULTS[key]
        return DEFAULTS[key] if value is None else value

    threshold = float(get("threshold"))
    if not 0 < threshold <= 1:
        threshold = float(DEFAULTS["threshold"])
    return Settings(bool(get("enabled")), threshold, int(get("reserveTokens")), int(get("keepRecentTokens")))


@dataclass
class ContextState:
    """Per-session state of context management (``AgentSession.context_state``)."""

    #: why the last run failed at the context limit, for its run record
    failure: str | None = None
    compactions: list[dict[str, Any]] = field(default_factory=list)
    #: the ``context_pressure`` level last reported (0, 70 or 90) and the growth per turn
    pressure_level: int = 0
    last_tokens: int | None = None
    growth: float = 0.0
    #: the model that writes summaries, over ``compaction.model`` (``ama sessions compact --model``)
    summary_model: Any = None

    def take_failure(self) -> str | None:
        f, self.failure = self.failure, None
        return f


def window(agent: AgentSession) -> Window:
    s = settings(agent.config)
    return Window(agent.model.context_window, agent.model.max_tokens, s.threshold, s.reserve_tokens)


def context_size(agent: AgentSession) -> ContextSize:
    ctx = agent.session.context()
    return measure(agent.session.branch(), ctx.messages, ctx.entry_ids, agent.build_context().tools)


# --- the cut point ---------------------------------------------------------------------


def _can_cut_at(e: AnyEntry) -> bool:
    if isinstance(e, CustomMessageEntry):
        return True
    if isinstance(e, MessageEntry):
        return not isinstance(e.message, ToolResultMessage | SystemMessage)
    return False


def _is_context(e: AnyEntry) -> bool:
    return estimate_entry(e) > 0 and not (isinstance(e, MessageEntry) and isinstance(e.message, SystemMessage))


def window_indices(branch: list[AnyEntry]) -> list[int]:
    """Indices of the branch entries that the projection shows after the latest compaction's
    summary: from its ``firstKeptEntryId`` to it, then everything after it."""
    at = -1
    for i, e in enumerate(branch):
        if isinstance(e, CompactionEntry):
            at = i
    if at < 0:
        return list(range(len(branch)))
    comp = branch[at]
    assert isinstance(comp, CompactionEntry)
    kept_from = next((j for j in range(at) if branch[j].id == comp.first_kept_entry_id), at)
    return [j for j in range(kept_from, len(branch)) if j != at and not isinstance(branch[j], CompactionEntry)]


def find_cut(branch: list[AnyEntry], keep_recent: int) -> int | None:
    """Index in ``branch`` of the first kept entry, or None when nothing can be summarized:
    the newest context entries worth about ``keep_recent`` tokens stay, the cut is moved
    forward to the next user/assistant/custom message so no tool result is cut off from
    its call (backward only when nothing after it qualifies)."""
    idx = window_indices(branch)
    acc = 0
    crossed = 0
    for k in range(len(idx) - 1, -1, -1):
        e = branch[idx[k]]
        acc += estimate_entry(e) if _is_context(e) else 0
        if acc >= keep_recent:
            crossed = k
            break
    cut = next((k for k in range(crossed, len(idx)) if _can_cut_at(branch[idx[k]])), None)
    if cut is None:
        cut = next((k for k in range(crossed - 1, -1, -1) if _can_cut_at(branch[idx[k]])), None)
    if cut is not None and not any(_is_context(branch[j]) for j in idx[:cut]):
        # nothing older than the newest ``keep_recent`` tokens: keep less rather than fail
        cut = next((k for k in range(cut + 1, len(idx)) if _can_cut_at(branch[idx[k]])), None)
    return None if cut is None else idx[cut]


def _older_messages(branch: list[AnyEntry], cut: int) -> list[ContextMessage]:
    """The context messages the compaction replaces: the earlier summary and everything
    before the cut (system messages excluded: they stay first in every request)."""
    from ama.session.projection import project

    ctx = project(branch)
    pos = {e.id: i for i, e in enumerate(branch)}
    out: list[ContextMessage] = []
    for m, ids in zip(ctx.messages, ctx.entry_ids):
        if isinstance(m, SystemMessage):
            continue
        if ids and isinstance(branch[pos[ids[0]]], CompactionEntry):
            out.append(m)
            continue
        if ids and pos[ids[0]] >= cut:
            break
        out.append(m)
    return out


# --- what the summary is made of -------------------------------------------------------


def _blocks(messages: list[ContextMessage]) -> list[str]:
    lines: list[str] = []
    for m in messages:
        if isinstance(m, CompactionSummaryMessage):
            lines.append(f"[Summary of the earlier conversation]\n{m.summary}")
        elif isinstance(m, BranchSummaryMessage):
            lines.append(f"[Summary of another branch]\n{m.summary}")
        elif isinstance(m, CustomMessage):
            lines.append(f"Note ({m.custom_type}): {text_of(m.content)}")
        elif isinstance(m, UserMessage | AssistantMessage | ToolResultMessage):
            lines.extend(message_lines(m, result_chars=RESULT_CHARS, note_cut=True))
        elif isinstance(m, BashExecutionMessage):
            lines.append(f"User ran `{m.command}`: {m.output[:RESULT_CHARS]}")
    return lines


def file_lists(branch: list[AnyEntry]) -> tuple[list[str], list[str]]:
    """(readFiles, modifiedFiles) of the branch: paths the tools read or changed, with the
    lists of earlier compactions carried over; a modified file is not also listed as read."""
    read: dict[str, None] = {}
    modified: dict[str, None] = {}
    for e in branch:
        if isinstance(e, CompactionEntry) and isinstance(e.details, dict):
            for p in e.details.get("readFiles") or []:
                read[str(p)] = None
            for p in e.details.get("modifiedFiles") or []:
                modified[str(p)] = None
        elif isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage):
            for b in e.message.content:
                if not isinstance(b, ToolCall):
                    continue
                path = b.arguments.get("path") or b.arguments.get("file_path")
                if not isinstance(path, str) or not path:
                    continue
                if b.name in WRITE_TOOLS:
                    modified[path] = None
                elif b.name == "read":
                    read[path] = None
    return [p for p in read if p not in modified], list(modified)


def _last_user_request(branch: list[AnyEntry]) -> str | None:
    for e in reversed(branch):
        if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage):
            return text_of(e.message.content)
    return None


def _active_plan(agent: AgentSession) -> Any:
    """The latest plan on the branch when it is proposed or approved (docs/plan.md)."""
    plans = getattr(agent, "plans", None)
    try:
        plan = plans.get() if plans is not None else None
    except Exception:
        return None
    return plan if plan is not None and plan.status in ("proposed", "approved") else None


def _running_tasks(agent: AgentSession) -> list[dict[str, Any]]:
    tasks = getattr(agent, "tasks", None)
    try:
        rows = tasks.view() if tasks is not None else []
    except Exception:
        return []
    return [t for t in rows if isinstance(t, dict) and t.get("status") == "running"]


def post_compact_state(agent: AgentSession, read: list[str], modified: list[str]) -> str:
    from ama.tools.todo import current_items

    lines = ["<post-compact-state>"]
    lines.append("Files read: " + (", ".join(read) if read else "none"))
    lines.append("Files modified: " + (", ".join(modified) if modified else "none"))
    items = current_items(agent.session)
    if items:
        lines.append("Todo list:")
        lines.extend(f"- [{i.get('status', 'pending')}] {i.get('id', '?')}: {i.get('text', '')}" for i in items)
    else:
        lines.append("Todo list: empty")
    jobs = list(agent.jobs.running()) if agent.jobs is not None else []
    if jobs:
        lines.append("Running background jobs:")
        for j in jobs:
            jid, cmd, out = (getattr(j, k, "?") for k in ("id", "command", "output_path"))
            lines.append(f"- {jid}: {cmd} (output: {out})")
    else:
        lines.append("Running background jobs: none")
    plan = _active_plan(agent)
    if plan is not None:  # a pointer, not the plan: its file and ama.plan entries hold it
        where = f", file {plan.file_path}" if plan.file_path else ""
        lines.append(f"Active plan: {plan.id} v{plan.version} ({plan.status}) {plan.title!r}{where}")
    tasks = _running_tasks(agent)
    if tasks:
        lines.append("Running tasks:")
        lines.extend(f"- {t.get('taskId')}: {t.get('agent')} — {t.get('description', '')}" for t in tasks)
    lines.append("Read a file again before relying on its content.")
    lines.append("</post-compact-state>")
    return "\n".join(lines)


async def run_compaction(agent: AgentSession, trigger: str, focus: str | None = None, *, will_retry: bool = False) -> dict[str, Any]:
    """Summarize the older part of the branch into a ``compaction`` entry; the result (also
    in ``compaction_end``).  Raises AmaError when nothing can be compacted or the summary
    request fails (``compaction_end`` carries the error; the session is unchanged)."""
    s = settings(agent.config)
    agent.emit(event("compaction_start", trigger=trigger))
    try:
        if not s.enabled:
            raise AmaError("unsupported", "compaction is off (compaction.enabled: false)")
        size = context_size(agent)
        branch = agent.session.branch()
        keep = min(s.keep_recent_tokens, max(1, window(agent).limit // 2))
        if trigger != "threshold":  # asked for now: keep at most half of the conversation
            shown = sum(estimate_entry(branch[j]) for j in window_indices(branch) if _is_context(branch[j]))
            keep = min(keep, max(1, shown // 2))
        cut = find_cut(branch, keep)
        if cut is None:
            raise AmaError("nothing_to_compact", "nothing to compact: the context holds only the most recent turn")
        older = _older_messages(branch, cut)
        head = ""
        if older and isinstance(older[0], CompactionSummaryMessage):
            head = "\n\n".join(_blocks(older[:1]))
            older = older[1:]
        # in parts when the history does not fit one request: never a dead end
        text, usage, n_parts = await summarize(agent, SUMMARY_SYSTEM, head, _blocks(older), focus)
    except AmaError as err:
        aborted = err.code == "aborted"
        agent.emit(
            event("compaction_end", trigger=trigger, aborted=aborted, willRetry=False, error=None if aborted else err.message)
        )
        raise
    read, modified = file_lists(branch)
    last = _last_user_request(branch)
    parts = [text]
    if last:
        parts.append(f"## Last user request (verbatim)\n\n{last}")
    parts.append(post_compact_state(agent, read, modified))
    summary = "\n\n".join(parts)
    kept_id = branch[cut].id
    kept_turns = sum(
        1 for e in branch[cut:] if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage) and e.message.origin != "steer"
    )
    details = {"readFiles": read, "modifiedFiles": modified}
    comp = agent.session.append_compaction(summary, kept_id, size.tokens, usage=usage, details=details)
    after = context_size(agent).tokens
    result = {
        "summary": summary,
        "firstKeptEntryId": kept_id,
        "tokensBefore": size.tokens,
        "tokensAfter": after,
        "entryId": comp.id,
        "details": details,
        "keptTurns": kept_turns,
    }
    if n_parts > 1:
        result["summaryParts"] = n_parts
    agent.context_state.compactions.append(result)
    agent.emit(event("compaction_end", trigger=trigger, result=result, aborted=False, willRetry=will_retry))
    agent.emit(event("notification", level="info", message=f"Compacted {_k(size.tokens)} → {_k(after)} tokens ({trigger})"))
    return result


def _k(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


PRESSURE_LEVELS = (90, 70)


def check_pressure(agent: AgentSession, tokens: int) -> None:
    """``context_pressure{percent, threshold, remainingTokens, estimatedTurnsLeft}`` when the
    next request crosses 70 % or 90 % of the window upwards (once per crossing: falling
    below, e.g. after a compaction, re-arms it)."""
    st = agent.context_state
    w = agent.model.context_window
    if st.last_tokens is not None and tokens > st.last_tokens:
        step = tokens - st.last_tokens
        st.growth = step if st.growth == 0 else 0.5 * st.growth + 0.5 * step
    st.last_tokens = tokens
    percent = tokens * 100 / w if w > 0 else 0.0
    level = next((lv for lv in PRESSURE_LEVELS if percent >= lv), 0)
    if level > st.pressure_level:
        remaining = max(0, w - tokens)
        turns_left = int(remaining // st.growth) if st.growth > 0 else None
        agent.emit(
            event(
                "context_pressure",
                percent=round(percent, 1),
                threshold=level,
                remainingTokens=remaining,
                estimatedTurnsLeft=turns_left,
            )
        )
    st.pressure_level = level


async def maybe_compact(agent: AgentSession) -> None:
    """Before a model request of a run: report context pressure, and compact when the
    request would pass the limit.  A failed threshold compaction does not stop the run (the
    request may still fit, and an overflow is recovered by ``recover_overflow``)."""
    s = settings(agent.config)
    if agent.abort_event.is_set():
        return
    tokens = context_size(agent).tokens
    from ama.agent.pruning import prune_context

    if prune_context(agent, tokens, window(agent).limit):  # tier 1 first (agent/pruning.py)
        tokens = context_size(agent).tokens
    check_pressure(agent, tokens)
    if not s.enabled or tokens <= window(agent).limit:
        return
    try:
        await run_compaction(agent, "threshold")
    except AmaError:
        return
    check_pressure(agent, context_size(agent).tokens)


async def recover_overflow(agent: AgentSession, failed_entry_id: str, error: str) -> bool:
    """A request failed with ``context_overflow``: True when the history was compacted and
    the request should be sent once more; else ``context_state.failure`` says why not."""
    s = settings(agent.config)
    w = agent.model.context_window
    if not s.enabled:
        agent.context_state.failure = OVERFLOW_DISABLED.format(window=w, error=error)
        return False
    agent.session.append_context_edit(failed_entry_id, None, "overflow")
    try:
        await run_compaction(agent, "overflow", will_retry=True)
    except AmaError as err:
        agent.context_state.failure = OVERFLOW_FAILED.format(window=w, error=f"{error} ({err.message})")
        return False
    return True


def overflow_failed(agent: AgentSession, error: str) -> None:
    """The retried request overflowed again."""
    agent.context_state.failure = OVERFLOW_FAILED.format(window=agent.model.context_window, error=error)


async def compact(agent: AgentSession, focus: str | None = None) -> dict[str, Any]:
    """Manual compaction (RPC ``compact``, ``ama sessions compact``) of an idle session."""
    if agent.busy:
        raise Busy("cannot compact while a run is in progress; abort it first")
    import asyncio

    agent.abort_event = asyncio.Event()  # a stale abort of an earlier run must not cancel this
    return await run_compaction(agent, "manual", focus)


__all__ = [
    "ContextState",
    "Settings",
    "compact",
    "context_size",
    "file_lists",
    "find_cut",
    "maybe_compact",
    "post_compact_state",
    "recover_overflow",
    "run_compaction",
    "settings",
    "window",
]
