"""``AgentSession``: one conversation driven by prompts, the same object for every interface.

    agent = build_agent(cwd=..., model="anthropic/claude-sonnet-4-5")   # agent/compose.py
    agent.subscribe(print)                                              # events (dicts)
    result = await agent.prompt("fix the failing test")                 # -> RunResult
    agent.steer("also update the docs")   # during a run: delivered after the current tool
    agent.follow_up("then commit")        # during a run: delivered when it would stop
    agent.abort()                         # stops the stream and the tools; partial reply kept

The session file is written through ``ama.session.Session`` (every append becomes an
``entry_appended`` event).  A new session starts with ``model_change``,
``thinking_level_change`` and the system prompt as its first ``system`` message.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ama.agent.approvals import ApprovalBroker
from ama.agent.compaction import ContextState
from ama.agent.events import Emitter, Event, Listener, event, plain
from ama.agent.guard import Limits
from ama.agent.parts import (
    AgentParts,
    AgentSettings,
    BashSandbox,
    Checkpoints,
    Jobs,
    ModelRegistry,
    Permissions,
    Tasks,
)
from ama.agent.snapshot import agent_state, model_json
from ama.errors import AmaError, Busy, InvalidArguments
from ama.messages import ImageContent, SystemMessage, TextContent, ToolCall, ToolResultMessage
from ama.session.entries import AnyEntry, MessageEntry, now_ms
from ama.session.store import Session

if TYPE_CHECKING:
    from ama.agent.run import RunResult
    from ama.ai.types import Model
    from ama.hooks import HookTable
    from ama.tools import ReadFiles, Tool

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
Queued = tuple[str, list[ImageContent] | None]


class AgentSession:
    """One conversation: ``session`` (the file), the ``model``, the ``tools``, the ``parts``
    it works with (registry, permissions, hooks, sandbox, checkpoints, jobs, approvals — see
    ``agent/parts.py``) and its scalar ``settings``."""

    def __init__(
        self,
        *,
        session: Session,
        model: Model,
        tools: Sequence[Tool],
        parts: AgentParts,
        settings: AgentSettings,
    ) -> None:
        from ama.tools import ReadFiles, tool_specs

        self.session = session
        self.model = model
        self.tools = list(tools)
        self.tools_by_name = {t.name: t for t in self.tools}
        self.active_tool_names = [t.name for t in self.tools]
        self._tool_specs = tool_specs(self.tools)
        self.parts = parts
        self.registry: ModelRegistry = parts.registry
        self.permissions: Permissions = parts.permissions
        self.hooks: HookTable | None = parts.hooks
        self.broker: ApprovalBroker | None = parts.broker
        self.bash_sandbox: BashSandbox | None = parts.bash_sandbox
        self.read_files: ReadFiles = parts.read_files if parts.read_files is not None else ReadFiles()
        self.jobs: Jobs | None = parts.jobs
        self.config: Any = parts.config
        #: the model answering when this one is overloaded (agent/fallback.py)
        self.fallback_model: Any = settings.fallback_model
        from ama.agent.catalog import PromptCatalog

        #: prompt templates and skills: ``/name args`` prompts expand through it
        self.prompts: PromptCatalog = parts.prompts if parts.prompts is not None else PromptCatalog()
        #: the file-checkpoint tracker (None: no checkpoints) and its write hooks
        tracker = parts.checkpoints
        self.checkpoints: Checkpoints | None = tracker
        on = tracker is not None and tracker.enabled
        self.before_write: Callable[[str], None] | None = tracker.before_write if tracker is not None and on else None
        self.after_write: Callable[[str, bytes], None] | None = tracker.after_write if tracker is not None and on else None
        self.thinking_level = settings.thinking_level
        self.output_dir = settings.output_dir
        self.system_prompt = settings.system_prompt
        self.max_turns = settings.max_turns
        #: the budgets of every run (agent/guard.py); a prompt may override them
        self.limits = (settings.limits or Limits()).over(Limits(max_turns=settings.max_turns))
        self.max_attempts = max(1, settings.max_attempts)
        self.retry_base_s = settings.retry_base_s
        self.request_timeout_s = settings.request_timeout_s
        self.explicit_mode = settings.explicit_mode
        #: ama.rewind-note texts to append before the next prompt
        self.pending_notes: list[str] = []
        #: context management state (agent/compaction.py)
        self.context_state = ContextState()
        from ama.agent.reminders import ReminderState

        #: what the reminders already said (agent/reminders.py); the call whose result ends
        #: the running batch of tool calls (reminders are appended to it)
        self.reminders = ReminderState()
        self.batch_tail_id: str | None = None
        from ama.agent.cache_care import CacheState

        #: the previous request and the keep-warm timer (agent/cache_care.py)
        self.cache = CacheState()
        self.abort_event = asyncio.Event()
        self.steering: list[Queued] = []
        self.follow_up: list[Queued] = []
        self._approval_lock = asyncio.Lock()
        self._emitter = Emitter()
        self._task: asyncio.Task | None = None
        self._event_queues: list[asyncio.Queue] = []
        self.warnings: list[str] = []
        self.session.listeners.append(self._on_entry)
        from ama.agent.plan_mode import PlanController

        #: plan mode, proposals and approval (agent/plan_mode.py)
        self.plans = PlanController(self)
        from ama.agent.telemetry import Telemetry

        #: rate telemetry of the turn requests (agent/telemetry.py); ``ui.animation`` gates ticks
        animation = self.config.get("ui.animation", True) if self.config is not None else True
        self.telemetry = Telemetry(self.emit, ticks=animation is not False)
        #: task sub-agents (agent/subagents); the running run's guard, which a task's budget
        #: is capped by; for a child, the ``context`` its approval requests carry
        self.tasks: Tasks | None = parts.tasks
        self.run_guard: Any = None
        self.approval_context: dict[str, Any] | None = None

    # --- events -----------------------------------------------------------------------

    def subscribe(self, fn: Listener) -> Callable[[], None]:
        return self._emitter.subscribe(fn)

    def emit(self, ev: Event) -> None:
        self._emitter.emit(ev)

    def emit_hook_records(self, outcome: Any) -> None:
        for r in getattr(outcome, "records", ()):
            self.emit(event("hook_executed", **r.to_event()))

    def _on_entry(self, entry: AnyEntry) -> None:
        self.emit({"type": "entry_appended", "entry": plain(entry)})

    # --- state ------------------------------------------------------------------------

    @property
    def cwd(self) -> str:
        return self.session.cwd

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    def state(self) -> dict[str, Any]:
        return agent_state(
            self.session, self.model, self.thinking_level, self.permissions.mode, busy=self.busy,
            steering=[t for t, _ in self.steering], follow_up=[t for t, _ in self.follow_up],
        )  # fmt: skip

    def model_json(self) -> dict[str, Any]:
        return model_json(self.model)

    def build_context(self) -> Any:
        from ama.ai import Context, ToolSpec

        ctx = self.session.context()
        return Context(
            system_prompt="",
            messages=ctx.messages,
            tools=[ToolSpec(d["name"], d["description"], d["parameters"]) for d in self._tool_specs],
        )

    def ensure_started(self) -> None:
        """First prompt of a session: record model, thinking level and the system prompt
        (also for a resumed session whose branch has no system message, e.g. a pi file)."""
        branch = self.session.branch()
        if not branch:
            self.session.append_model_change(self.model.provider, self.model.id, self.model.channel)
            self.session.append_thinking_level_change(self.thinking_level)
        has_system = any(isinstance(e, MessageEntry) and isinstance(e.message, SystemMessage) for e in branch)
        if not has_system and self.system_prompt:
            self.session.append_message(SystemMessage(content=self.system_prompt, timestamp=now_ms()))

    # --- queues -----------------------------------------------------------------------

    def _queue_update(self) -> None:
        self.emit(
            event("queue_update", steering=[t for t, _ in self.steering], followUp=[t for t, _ in self.follow_up])
        )

    def steer(self, text: str, images: list[ImageContent] | None = None) -> None:
        """A message for the running turn: delivered after the current tool call; the
        remaining calls of that turn are skipped.  When idle, use ``prompt``."""
        self.steering.append((text, images))
        self._queue_update()

    def queue_follow_up(self, text: str, images: list[ImageContent] | None = None) -> None:
        """A message delivered when the running agent would otherwise stop."""
        self.follow_up.append((text, images))
        self._queue_update()

    def take_steering(self) -> list[Queued]:
        items, self.steering = self.steering, []
        self._queue_update()
        return items

    def take_follow_up(self) -> list[Queued]:
        items, self.follow_up = self.follow_up[:1], self.follow_up[1:]
        self._queue_update()
        return items

    def append_skipped(self, call: ToolCall, text: str) -> ToolResultMessage:
        msg = ToolResultMessage(
            tool_call_id=call.id, tool_name=call.name, content=[TextContent(text=text)], is_error=True, timestamp=now_ms()
        )
        self.emit(event("tool_execution_start", toolCallId=call.id, toolName=call.name, args=call.arguments))
        self.session.append_message(msg)
        self.emit(
            event(
                "tool_execution_end",
                toolCallId=call.id,
                toolName=call.name,
                result={"content": plain(msg.content), "details": None},
                isError=True,
            )
        )
        return msg

    # --- running ----------------------------------------------------------------------

    def start(
        self,
        text: str,
        images: list[ImageContent] | None = None,
        *,
        origin: str | None = None,
        behavior: str | None = None,
        started: Callable[[], None] | None = None,
        limits: Limits | None = None,
    ) -> asyncio.Task | None:
        """Start a run (returns its task), or, while busy, queue the message as ``behavior``
        (``"steer"`` or ``"followUp"``) and return None.  Busy without a behavior -> Busy.
        ``started`` (optional) resolves when the run has begun (see ``run_prompt``);
        ``limits`` override the agent's budgets for this run.  A ``/template args`` or
        ``/skill:<name> args`` text is expanded first (``agent/catalog.py``; an unknown skill or
        a broken template raises ``InvalidArguments``)."""
        text = self.prompts.expand(text)
        if self.busy:
            if behavior == "steer":
                self.steer(text, images)
                return None
            if behavior in ("followUp", "follow_up"):
                self.queue_follow_up(text, images)
                return None
            raise Busy("a run is in progress: send it as steer or followUp, or abort first")
        if behavior not in (None, "steer", "followUp", "follow_up"):
            raise InvalidArguments(f"unknown streamingBehavior {behavior!r}; expected steer or followUp")
        if self.session.readonly_reason:
            raise AmaError("readonly", f"cannot write to session {self.session.path}: {self.session.readonly_reason}")
        self.abort_event = asyncio.Event()
        from ama.agent.run import run_prompt  # the turn loop loads with the first prompt

        self._task = asyncio.ensure_future(run_prompt(self, text, images, origin, started, limits))
        return self._task

    async def prompt(
        self,
        text: str,
        images: list[ImageContent] | None = None,
        *,
        origin: str | None = None,
        limits: Limits | None = None,
    ) -> RunResult:
        task = self.start(text, images, origin=origin, limits=limits)
        assert task is not None
        return await task

    def abort(self) -> list[Queued]:
        """Stop the running prompt: the stream and the tools end, pending approvals are
        denied, queued messages are dropped (and returned, e.g. to refill an editor)."""
        dropped = self.steering + self.follow_up
        if self.steering or self.follow_up:
            self.steering, self.follow_up = [], []
            self._queue_update()
        self.abort_event.set()
        return dropped

    async def wait_idle(self) -> None:
        if self._task is not None:
            try:
                await asyncio.shield(self._task)
            except Exception:
                pass

    # --- settings ---------------------------------------------------------------------

    def set_model(self, ref: str) -> dict[str, Any]:
        model = self.registry.get(ref)
        self.model = model
        if self.session.entries:
            self.session.append_model_change(model.provider, model.id, model.channel)
        self.emit(event("model_changed", model=self.model_json()))
        return self.model_json()

    def set_thinking_level(self, level: str) -> str:
        if level not in THINKING_LEVELS:
            raise InvalidArguments(f"unknown thinking level {level!r}; expected one of {', '.join(THINKING_LEVELS)}")
        self.thinking_level = level
        if self.session.entries:
            self.session.append_thinking_level_change(level)
        self.emit(event("thinking_level_changed", level=level))
        return level

    def set_permission_mode(self, mode: str) -> str:
        old = self.permissions.mode
        self.permissions.set_mode(mode)
        self.plans.on_mode_change(old, mode)
        self.emit(event("permission_mode_changed", mode=mode))
        return mode

    def set_active_tools(self, names: list[str]) -> list[str]:
        """Restrict the tools the model sees (and may call) to ``names``, in registry order."""
        from ama.tools import tool_specs

        known = {t.name for t in self.tools}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise InvalidArguments(f"unknown tools {unknown}; known: {sorted(known)}")
        active = [t for t in self.tools if t.name in set(names)]
        self.active_tool_names = [t.name for t in active]
        self.tools_by_name = {t.name: t for t in active}
        self._tool_specs = tool_specs(active)
        return self.active_tool_names

    # --- rewind (agent/session_rewind.py) -----------------------------------------------

    def rewind_points(self) -> list[dict[str, Any]]:
        """New-turn user messages on the active path, oldest first, with ``hasCheckpoint``."""
        from ama.agent.session_rewind import rewind_points

        return rewind_points(self)

    async def rewind(
        self, entry_id: str, mode: str = "both", *, dry_run: bool = False, on_conflict: str = "skip"
    ) -> dict[str, Any]:
        """Go back to before user message ``entry_id``: ``mode`` both | conversation | code."""
        from ama.agent.session_rewind import rewind

        return await rewind(self, entry_id, mode, dry_run=dry_run, on_conflict=on_conflict)

    async def summarize_from(self, entry_id: str, instructions: str | None = None) -> dict[str, Any]:
        from ama.agent.session_rewind import summarize_from

        return await summarize_from(self, entry_id, instructions)

    async def summarize_up_to(self, entry_id: str, instructions: str | None = None) -> dict[str, Any]:
        from ama.agent.session_rewind import summarize_up_to

        return await summarize_up_to(self, entry_id, instructions)

    async def compact(self, focus: str | None = None) -> dict[str, Any]:
        """Summarize the older part of the conversation now (docs/compaction.md)."""
        from ama.agent.compaction import compact

        return await compact(self, focus)

    # --- SDK views (the RPC client has the same names) ---------------------------------

    async def events(self) -> Any:
        """Async iterator over this agent's events until it is closed; subscribe before
        prompting (``async for ev in agent.events(): ...`` in a separate task)."""
        queue: asyncio.Queue = asyncio.Queue()
        unsubscribe = self.subscribe(queue.put_nowait)
        self._event_queues.append(queue)
        try:
            while True:
                ev = await queue.get()
                if ev is None:
                    return
                yield ev
        finally:
            unsubscribe()

    def entries(self, since: str | None = None) -> dict[str, Any]:
        from ama.agent.views import entries_since

        return entries_since(self.session, since)

    def tree(self) -> dict[str, Any]:
        from ama.agent.views import tree_nodes

        return tree_nodes(self.session)

    def stats(self) -> dict[str, Any]:
        from ama.agent.views import session_stats

        out = {**session_stats(self.session), "telemetry": self.telemetry.snapshot()}
        if self.tasks is not None:  # sub-agents' usage rolled up (agent/subagents)
            out["tasks"] = self.tasks.rollup()
        return out

    def get_tasks(self) -> list[dict[str, Any]]:
        """The task sub-agents of this session (``TaskInfo``, docs/agents.md)."""
        return self.tasks.view() if self.tasks is not None else []

    def get_agents(self) -> list[dict[str, Any]]:
        """The agent types a ``task`` can run (``AgentInfo``, docs/agents.md)."""
        return self.tasks.agents() if self.tasks is not None else []

    def fork(self, entry_id: str | None = None) -> dict[str, Any]:
        """Copy this session's branch (up to ``entry_id``, default the leaf) into a new
        session file; returns ``{sessionId, sessionFile}`` (this agent stays on its session)."""
        from ama.session.fork import fork_session

        if self.session.path is None:
            raise AmaError("unsupported", "an in-memory session has no file to fork")
        sessions_dir = os.path.dirname(os.path.dirname(self.session.path))
        sid, path = fork_session(self.session.path, sessions_dir, expected_id=self.session.id, at=entry_id)
        return {"sessionId": sid, "sessionFile": path}

    async def close(self) -> None:
        """Stop background jobs, release the session file, close HTTP connections."""
        if self.tasks is not None:  # no task notification starts a turn from here on
            self.tasks.begin_close()
        if self.busy:
            self.abort()
            await self.wait_idle()
        from ama.agent.cache_care import stop

        stop(self, "closed")
        if self.tasks is not None:
            await self.tasks.close()
        if self.jobs is not None and self.jobs.running():
            await asyncio.get_running_loop().run_in_executor(None, self.jobs.kill_all)
        if self.bash_sandbox is not None:
            self.bash_sandbox.close()
        self.session.close()
        from ama.ai import aclose

        await aclose()
        for q in self._event_queues:
            q.put_nowait(None)


def default_output_dir(data_dir: str, session_id: str) -> str:
    return os.path.join(data_dir, "tmp", session_id)
