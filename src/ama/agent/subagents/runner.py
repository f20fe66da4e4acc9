"""Run one ama child: its session file, its ``AgentSession``, one prompt, its outcome.

The child session lives in the same sessions directory with lineage to the parent
(``parentSession``, ``rootId``, ``relationType: "task"``) and an ``ama.task`` first entry
``{parentToolCallId, description, parentSession, taskId, agent}`` (no ``status``).  The child
shares the parent's approval broker and approval lock, its checkpoint tracker (edits land in
the parent's current turn, so the parent's rewind undoes them) unless it works in a worktree,
its config, hooks and sandbox choice.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ama.agent.guard import Limits
from ama.agent.subagents.definitions import READ_ONLY_TOOLS, AgentDefinition
from ama.agent.subagents.registry import TASK_TYPE, TaskInfo
from ama.agent.subagents.relay import Relay

if TYPE_CHECKING:
    from ama.agent.session import AgentSession

MODE_ORDER = ("plan", "allowlist", "default", "auto-edit", "full-auto")


def capped_mode(parent_mode: str, wanted: str | None) -> str:
    """The child's permission mode: ``wanted`` but never more permissive than the parent's."""
    if wanted is None or wanted not in MODE_ORDER or parent_mode not in MODE_ORDER:
        return parent_mode
    return wanted if MODE_ORDER.index(wanted) < MODE_ORDER.index(parent_mode) else parent_mode


@dataclass
class ChildSpec:
    info: TaskInfo
    definition: AgentDefinition
    prompt: str
    model: str | None
    depth: int
    limits: Limits
    #: the child session file to continue (None: a new session)
    session_file: str | None = None
    #: the cwd of a worktree (None: the parent's cwd, sharing its checkpoints)
    worktree_cwd: str | None = None
    max_depth: int = 1
    #: called with the usage of each child reply: the parent's budget pays for it
    on_usage: Callable[[dict], None] | None = None


@dataclass
class ChildOutcome:
    status: str
    text: str
    error: str | None = None
    limit: dict | None = None
    denied: list[str] = field(default_factory=list)
    session_file: str | None = None
    session_id: str | None = None
    #: this run's usage ({input, output, cacheRead, cacheWrite, cost: {total}}); None: none
    usage: dict | None = None


def status_of(record: Any) -> tuple[str, str | None]:
    """The task status for a child's run record, and an error text."""
    if record.limit:
        return "max_turns", record.error_message or f"the task reached its {record.limit.get('kind')} limit"
    if record.status == "COMPLETED":
        return "completed", None
    if record.status == "CANCELLED":
        return "aborted", "the task was stopped"
    return "failed", record.error_message or "the task failed"


def _child_session(parent: AgentSession, spec: ChildSpec, cwd: str) -> str | None:
    """Create the child's session file (returns its path; None for an in-memory parent)."""
    from ama.session.store import Session

    if parent.session.path is None:
        return None
    sessions_dir = os.path.dirname(os.path.dirname(parent.session.path))
    s = Session.create(
        cwd,
        sessions_dir,
        parent_session=parent.session.path,
        root_id=parent.session.header.lineage_root,
        relation_type="task",
    )
    try:
        s.append_custom(
            TASK_TYPE,
            {
                "parentToolCallId": spec.info.parent_tool_call_id,
                "description": spec.info.description,
                "parentSession": parent.session.path,
                "taskId": spec.info.task_id,
                "agent": spec.info.agent,
            },
        )
        return s.path
    finally:
        s.close()


def _system_prompt(cwd: str, definition: AgentDefinition, prompts: Any) -> str:
    from ama.agent.system_prompt import build_system_prompt

    extra = [definition.prompt] if definition.prompt else []
    section = prompts.system_prompt_section() if prompts is not None else None
    if section:
        extra.append(section)
    return build_system_prompt(cwd, extra="\n\n".join(extra) or None)


def build_child(parent: AgentSession, spec: ChildSpec) -> AgentSession:
    from ama.agent.compose import AgentOptions, build_agent

    cwd = spec.worktree_cwd or parent.cwd
    path = spec.session_file or _child_session(parent, spec, cwd)
    sandbox = "auto" if getattr(parent.bash_sandbox, "active", False) else "off"
    opts = AgentOptions(
        cwd=cwd,
        model=spec.model or parent.model.ref,
        thinking=parent.thinking_level,
        permission_mode=capped_mode(parent.permissions.mode, spec.definition.permission_mode),
        session=path or "memory",
        session_dir=os.path.dirname(os.path.dirname(path)) if path else None,
        broker=parent.broker,
        config=parent.config,
        system_prompt=_system_prompt(cwd, spec.definition, parent.prompts),
        sandbox=sandbox,
        task_depth=spec.depth,
    )
    child, _warnings = build_agent(opts)
    if not spec.session_file and child.session.entries and len(child.session.entries) == 1:
        child.session.append_model_change(child.model.provider, child.model.id, child.model.channel)
        child.session.append_thinking_level_change(child.thinking_level)
    # which tools: the definition's (explore: read-only), never task beyond the depth limit
    wanted = spec.definition.tools
    names = [t.name for t in child.tools]
    if wanted is not None:
        keep = [n for n in names if n in wanted]
    else:
        keep = names
    if spec.definition.name == "explore" and spec.definition.scope == "builtin":
        keep = [n for n in keep if n in READ_ONLY_TOOLS]
    if spec.depth >= spec.max_depth:
        keep = [n for n in keep if n not in ("task", "task_ctl")]
    child.set_active_tools(keep)
    if child.tasks is not None:  # its own children count against this task's parent too
        child.tasks.upstream = spec.on_usage  # type: ignore[attr-defined]
    # one broker, one lock: asks of parallel children and the parent come one at a time
    child._approval_lock = parent._approval_lock
    child.approval_context = {"depth": spec.depth, "taskId": spec.info.task_id}
    if spec.worktree_cwd is None:  # edits recorded into the parent's tracker, in its turn
        if child.checkpoints is not None and child.checkpoints is not parent.checkpoints:
            close = getattr(child.checkpoints, "close", None)
            if callable(close):
                close()
        child.checkpoints = None
        child.before_write = parent.before_write
        child.after_write = parent.after_write
    return child


async def close_child(child: AgentSession) -> None:
    """Release the child's session file, jobs and sandbox (not the shared HTTP clients)."""
    if child.busy:
        child.abort()
        await child.wait_idle()
    if child.tasks is not None:  # its own children (tasks.maxDepth > 1)
        await child.tasks.close()
    if child.jobs is not None and child.jobs.running():
        await asyncio.get_running_loop().run_in_executor(None, child.jobs.kill_all)
    if child.bash_sandbox is not None:
        child.bash_sandbox.close()
    child.session.close()


async def run_child(
    parent: AgentSession, spec: ChildSpec, cancel: asyncio.Event, on_start: Callable[[], None] | None = None
) -> ChildOutcome:
    """Build the child, run ``spec.prompt`` in it to the end (or ``cancel``), close it."""
    child = build_child(parent, spec)
    relay = Relay(parent.emit, spec.info, on_usage=spec.on_usage)
    unsubscribe = child.subscribe(relay)
    spec.info.session_ref = {"sessionId": child.session.id, "sessionFile": child.session.path} if child.session.path else None
    spec.info.model = child.model.ref
    if on_start is not None:
        on_start()
    stopper = asyncio.ensure_future(cancel.wait())
    try:
        run = child.start(spec.prompt, limits=spec.limits)
        assert run is not None
        done, _ = await asyncio.wait({run, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if run not in done:
            child.abort()
        result = await run
        relay.flush()
        status, error = status_of(result.record)
        return ChildOutcome(
            status,
            result.text,
            error,
            result.record.limit,
            relay.denied,
            child.session.path,
            child.session.id,
            relay.usage,
        )
    finally:
        stopper.cancel()
        unsubscribe()
        await close_child(child)


__all__ = ["ChildOutcome", "ChildSpec", "build_child", "capped_mode", "close_child", "run_child", "status_of"]
