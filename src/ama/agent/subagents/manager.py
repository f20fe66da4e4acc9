"""``TaskManager``: the sub-agents of one session (docs/agents.md).

It owns the task registry, starts children (foreground: the tool call waits; background:
the call returns the ``taskId`` at once and the finish arrives as a ``<task-notification>``
user message with ``origin: "task"`` that starts a new turn), bounds them by the caps,
emits ``subagent_start`` / ``subagent_end`` and appends the ``TaskInfo`` entries.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ama.agent.events import event
from ama.agent.subagents.caps import TaskCaps, within_parent
from ama.agent.subagents.definitions import AgentDefinition, FoundAgents, discover_agents, is_external
from ama.agent.subagents.registry import TASK_TYPE, TaskInfo, TaskRegistry, cache_of, empty_usage
from ama.errors import AmaError
from ama.session.entries import now_iso

if TYPE_CHECKING:
    from ama.agent.session import AgentSession
    from ama.agent.subagents.runner import ChildOutcome, ChildSpec


class TaskError(AmaError):
    """A task that cannot start: shown to the model as the tool's error result."""

    def __init__(self, message: str) -> None:
        super().__init__("task_failed", message)


@dataclass
class Running:
    info: TaskInfo
    cancel: asyncio.Event
    future: asyncio.Future
    #: set to move a foreground task to the background (its tool call returns at once)
    detach: asyncio.Event = field(default_factory=asyncio.Event)


def notification_text(info: TaskInfo, text: str) -> str:
    body = text.strip() or "(no final text)"
    attrs = f'task-id="{info.task_id}" agent="{info.agent}" status="{info.status}"'
    extra = f"\nError: {info.error}" if info.error else ""
    return f'<task-notification {attrs}>\nTask "{info.description}" ended: {info.status}.{extra}\n\n{body}\n</task-notification>'


class TaskManager:
    def __init__(self, *, cwd: str, config: Any, depth: int, config_dir: str, data_dir: str) -> None:
        self.cwd = cwd
        self.config = config
        self.depth = depth  # 0: a top-level session; its children are depth 1
        self.caps = TaskCaps.from_config(config)
        self.config_dir = config_dir
        self.data_dir = data_dir
        self.registry = TaskRegistry()
        self.agent: AgentSession | None = None
        self._found: FoundAgents | None = None
        self._sem: asyncio.Semaphore | None = None
        self._running: dict[str, Running] = {}
        self._prefetched: dict[str, asyncio.Future] = {}
        self._notify: set[asyncio.Task] = set()
        self._closing = False
        self.warnings: list[str] = []
        #: children's usage (USD, tokens) made after the run that started them ended:
        #: it counts against the parent's next run (docs/agents.md "Limits")
        self._carry_cost = 0.0
        self._carry_tokens = 0
        #: a front end that runs notification turns itself (the interactive UI,
        #: cli/task_turns.py): called with the text, True when it took it
        self.on_notification: Callable[[str], bool] | None = None
        #: a child session's manager: its children's usage also counts against the
        #: grandparent's run (set by runner.build_child)
        self.upstream: Callable[[dict[str, Any]], None] | None = None

    # --- wiring -------------------------------------------------------------------------

    def attach(self, agent: AgentSession) -> None:
        """Bind to the session; a resumed one gets its registry back from its entries."""
        self.agent = agent
        if agent.session.entries:
            self.registry.rebuild(agent.session.branch())

    def _parent(self) -> AgentSession:
        assert self.agent is not None, "TaskManager.attach was not called"
        return self.agent

    @property
    def semaphore(self) -> asyncio.Semaphore:
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.caps.max_parallel)
        return self._sem

    def definitions(self) -> FoundAgents:
        if self._found is None:
            self._found = discover_agents(self.cwd, self.config_dir)
            self.warnings += self._found.warnings
        return self._found

    def agents(self) -> list[dict[str, Any]]:
        """``get_agents``: the agent types, then the external agents (when that runner exists)."""
        out = [a.to_json() for a in self.definitions().agents]
        try:
            from ama.agent import external  # type: ignore[attr-defined]
        except ImportError:
            return out
        try:
            out += list(external.list_external_agents(_plain_config(self.config)))
        except Exception as exc:  # a broken probe must not break get_agents
            self.warnings.append(f"external agents: {type(exc).__name__}: {exc}")
        return out

    # --- starting -----------------------------------------------------------------------

    def _model_for(self, definition: AgentDefinition, asked: str | None) -> str | None:
        if asked:
            return asked
        if definition.model:
            try:
                self._parent().registry.get(definition.model)
                return definition.model
            except AmaError:  # e.g. Claude Code's "sonnet": not an ama model; inherit
                return None
        if definition.small_model:
            return self.config.get("tasks.exploreModel") if self.config is not None else None
        return None

    def _record(self, info: TaskInfo) -> None:
        agent = self._parent()
        with contextlib.suppress(AmaError):
            agent.session.append_custom(TASK_TYPE, info.to_data())

    def _new_info(self, call_id: str, args: dict[str, Any], runner: str) -> TaskInfo:
        started = len(self.registry.tasks)
        if started >= self.caps.max_per_session:
            raise TaskError(
                f"this session already started {started} tasks, the limit of tasks.maxPerSession "
                f"({self.caps.max_per_session}); do the work yourself or continue an existing task with taskId"
            )
        return TaskInfo(
            task_id=uuid.uuid4().hex[:12],
            agent=str(args["agent"]),
            runner=runner,
            description=str(args.get("description") or ""),
            background=bool(args.get("background")),
            status="running",
            started_at=now_iso(),
            parent_tool_call_id=call_id,
            cwd=self._parent().cwd,
            depth=self.depth + 1,
        )

    async def start(self, call_id: str, args: dict[str, Any]) -> tuple[TaskInfo, asyncio.Future]:
        """Start (or continue) a task; returns its info and the future of its outcome."""
        parent = self._parent()
        name = str(args.get("agent") or "general")
        args = {**args, "agent": name}
        worktree = None
        continuing = args.get("taskId")
        if continuing:
            info = self.registry.get(str(continuing))
            if info is None:
                known = ", ".join(self.registry.tasks) or "none"
                raise TaskError(f"unknown taskId {continuing!r}; tasks of this session: {known}")
            if info.task_id in self._running:
                raise TaskError(f"task {info.task_id} is still running; wait for it or stop it with task_ctl")
            if info.runner == "ama" and not (info.session_ref or {}).get("sessionFile"):
                raise TaskError(f"task {info.task_id} has no session file to continue")
            definition = self.definitions().get(info.agent) or AgentDefinition(info.agent, "")
        elif is_external(name):
            info = self._new_info(call_id, args, name)
            definition = AgentDefinition(name, "")
        else:
            definition_or_none = self.definitions().get(name)
            if definition_or_none is None:
                names = ", ".join(a.name for a in self.definitions().agents)
                raise TaskError(f"unknown agent {name!r}; available: {names}")
            definition = definition_or_none
            info = self._new_info(call_id, args, "ama")
        # a continued task keeps its model unless another is asked for
        model = args.get("model") or (info.model if continuing else None) or self._model_for(definition, None)
        if model and info.runner == "ama":
            try:
                parent.registry.get(model)
            except AmaError as e:
                raise TaskError(f"model {model!r}: {e.message}") from None
        if continuing:  # checks passed: it runs again
            info.status, info.ended_at, info.error, info.limit = "running", None, None, None
            info.background = bool(args.get("background"))
            info.parent_tool_call_id = call_id
            if info.worktree and info.worktree.get("base"):
                from ama.agent.subagents.worktree import Worktree

                worktree = Worktree(info.cwd, str(info.worktree.get("branch")), str(info.worktree["base"]))
        if not continuing and info.runner == "ama" and args.get("isolation") == "worktree":
            from ama.agent.subagents.worktree import create_worktree

            try:
                worktree = await asyncio.get_running_loop().run_in_executor(
                    None, create_worktree, parent.cwd, self.data_dir, info.task_id
                )
            except AmaError as e:
                raise TaskError(e.message) from None
            info.cwd = worktree.path
        self.registry.add(info)
        cancel = asyncio.Event()
        limits = within_parent(self.caps.limits(), getattr(parent, "run_guard", None))
        from ama.agent.subagents.runner import ChildSpec  # the runner loads with the first task

        origin = getattr(parent, "run_guard", None)  # the parent's run this task is part of
        spec = ChildSpec(
            info=info,
            definition=definition,
            prompt=str(args.get("prompt") or ""),
            model=model,
            depth=self.depth + 1,
            limits=limits,
            session_file=(info.session_ref or {}).get("sessionFile") if continuing else None,
            worktree_cwd=info.cwd if worktree is not None or info.worktree else None,
            max_depth=self.caps.max_depth,
            on_usage=functools.partial(self.charge, origin),
        )
        future = asyncio.ensure_future(self._run(spec, cancel, worktree))
        self._running[info.task_id] = Running(info, cancel, future)
        return info, future

    async def _run(self, spec: ChildSpec, cancel: asyncio.Event, worktree: Any) -> ChildOutcome:
        from ama.agent.subagents.runner import ChildOutcome, run_child

        parent = self._parent()
        info = spec.info
        async with self.semaphore:

            def started() -> None:
                self._record(info)
                parent.emit(
                    event(
                        "subagent_start",
                        taskId=info.task_id,
                        parentToolCallId=info.parent_tool_call_id,
                        agent=info.agent,
                        runner=info.runner,
                        description=info.description,
                        background=info.background,
                        model=info.model,
                        sessionFile=(info.session_ref or {}).get("sessionFile"),
                        cwd=info.cwd,
                    )
                )

            try:
                if info.runner == "ama":
                    outcome = await run_child(parent, spec, cancel, started)
                else:
                    from ama.agent.subagents.external_host import run_external

                    started()
                    outcome = await run_external(self, parent, spec, cancel)
            except asyncio.CancelledError:
                outcome = ChildOutcome("aborted", "", "the task was cancelled")
            except AmaError as exc:
                outcome = ChildOutcome("failed", "", exc.message)
            except Exception as exc:
                outcome = ChildOutcome("failed", "", f"{type(exc).__name__}: {exc}")
            self._finish(spec, outcome, worktree)
        return outcome

    def _finish(self, spec: ChildSpec, outcome: ChildOutcome, worktree: Any) -> None:
        parent = self._parent()
        info = spec.info
        info.status = outcome.status
        info.error = outcome.error
        info.limit = outcome.limit
        info.ended_at = now_iso()
        info.result = outcome.text
        if outcome.session_file:
            info.session_ref = {"sessionId": outcome.session_id, "sessionFile": outcome.session_file}
        usage = outcome.usage or empty_usage()  # this run's
        info.usage = info.usage or empty_usage()  # the task's, over its continuations
        info.cost_usd = info.usage["cost"]["total"]
        if info.runner != "ama" and spec.on_usage is not None and outcome.usage:
            spec.on_usage(usage)  # an external runner reports its usage at the end only
        info.output_file = self._write_output(info, outcome.text)
        if worktree is not None:
            try:
                info.worktree = worktree.result()
            except Exception:
                info.worktree = {"branch": worktree.branch, "changed": None, "path": worktree.path, "base": worktree.base}
        self._record(info)
        parent.emit(
            event(
                "subagent_end",
                taskId=info.task_id,
                status=info.status,
                usage=usage,
                cache=cache_of(usage),
                outputFile=info.output_file,
                worktree={"branch": info.worktree.get("branch"), "changed": info.worktree.get("changed")} if info.worktree else None,
                error=info.error,
            )
        )
        self._running.pop(info.task_id, None)
        if info.background:
            self._schedule_notification(info, outcome.text)

    def _write_output(self, info: TaskInfo, text: str) -> str | None:
        out_dir = os.path.join(self._parent().output_dir, "tasks")
        try:
            os.makedirs(out_dir, exist_ok=True)
            path = os.path.join(out_dir, f"{info.task_id}.md")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            return path
        except OSError:
            return None

    # --- background notifications -------------------------------------------------------

    def _schedule_notification(self, info: TaskInfo, text: str) -> None:
        if self._closing:  # the session is closing: no new turn (the entry has the status)
            return
        t = asyncio.ensure_future(self._deliver(notification_text(info, text)))
        self._notify.add(t)
        t.add_done_callback(self._notify.discard)

    async def _deliver(self, text: str) -> None:
        """Start a new turn with the notification once the parent is idle."""
        from ama.errors import Busy

        agent = self._parent()
        if self.on_notification is not None and self.on_notification(text):
            return
        while True:
            await agent.wait_idle()
            await asyncio.sleep(0)
            if agent.busy:
                continue
            try:
                task = agent.start(text, origin="task")
            except Busy:
                continue
            except AmaError as e:  # e.g. a read-only session: tell the user instead
                agent.emit(event("notification", level="warn", message=f"task notification not delivered: {e.message}"))
                return
            if task is not None:
                with contextlib.suppress(Exception):
                    await task
            return

    # --- the parent's budget -----------------------------------------------------------

    def charge(self, guard: Any, usage: dict[str, Any]) -> None:
        """One child reply's usage: added to the parent's run that started the task while it
        runs (its next check may stop it with ``limit_reached``), else to the next run."""
        cost = float(usage["cost"]["total"])
        tokens = sum(int(usage.get(k, 0)) for k in ("input", "output", "cacheRead", "cacheWrite"))
        if guard is not None and guard.open:
            guard.charge(cost, tokens)
        else:
            self._carry_cost += cost
            self._carry_tokens += tokens
        if self.upstream is not None:  # a grandchild: every ancestor's budget pays
            self.upstream(usage)

    def bind_run(self, guard: Any) -> None:
        """A run of the parent starts: the children's usage no earlier run could check counts here."""
        if self._carry_cost or self._carry_tokens:
            guard.charge(self._carry_cost, self._carry_tokens)
            self._carry_cost, self._carry_tokens = 0.0, 0

    def unbind_run(self, guard: Any) -> None:
        """A run of the parent ended: what its children spent after its last check is carried."""
        cost, tokens = guard.close()
        self._carry_cost += cost
        self._carry_tokens += tokens

    # --- parallel calls -----------------------------------------------------------------

    def prefetch(self, calls: list[Any]) -> None:
        """Several ``task`` calls in one assistant message run concurrently: start them all
        now (each still bounded by ``tasks.maxParallel``); ``claim`` hands each its future."""
        tasks = [c for c in calls if c.name == "task" and isinstance(c.arguments, dict)]
        if len(tasks) < 2:
            return
        parent = self._parent()
        if parent.hooks is not None and parent.hooks.for_event("PreToolUse", "task"):
            return  # a PreToolUse hook must see each call before it runs: one at a time
        for call in tasks:
            tool = parent.tools_by_name.get("task")
            if tool is None or tool.validate(call.arguments) is not None:
                continue
            if parent.permissions.decide("task", call.arguments, read_only=True).action != "allow":
                continue
            self._prefetched[call.id] = asyncio.ensure_future(self.start(call.id, call.arguments))

    def claim(self, call_id: str) -> asyncio.Future | None:
        return self._prefetched.pop(call_id, None)

    async def discard_prefetched(self) -> None:
        """Calls that were started early but never ran (skipped, denied by a hook): stop them."""
        left, self._prefetched = self._prefetched, {}
        for fut in left.values():
            with contextlib.suppress(Exception):
                info, _ = await fut
                self.stop(info.task_id)

    def view(self) -> list[dict[str, Any]]:
        """``get_tasks``: the registry, in start order."""
        return self.registry.view()

    def rollup(self) -> dict[str, Any]:
        """Usage and cost of this session's tasks, in total and by agent type (for
        ``get_session_stats`` / ``/session``)."""
        from ama.agent.subagents.registry import merge_usage

        total = empty_usage()
        by_agent: dict[str, dict[str, Any]] = {}
        for t in self.registry.tasks.values():
            merge_usage(total, t.usage)
            row = by_agent.setdefault(t.agent, {"tasks": 0, "turns": 0, "usage": empty_usage()})
            row["tasks"] += 1
            row["turns"] += t.turns or 0
            merge_usage(row["usage"], t.usage)
        for row in by_agent.values():
            row["cost"] = row["usage"]["cost"]["total"]
        return {"count": len(self.registry.tasks), "usage": total, "cost": total["cost"]["total"], "byAgent": by_agent}

    # --- control ------------------------------------------------------------------------

    def stop(self, task_id: str) -> bool:
        r = self._running.get(task_id)
        if r is None:
            return False
        r.cancel.set()
        return True

    def to_background(self) -> list[str]:
        """Move every running foreground task to the background (Ctrl-B): their tool calls
        return now and each end arrives as a ``<task-notification>``. Returns their ids."""
        moved = []
        for r in self._running.values():
            if not r.info.background and not r.detach.is_set():
                r.detach.set()
                moved.append(r.info.task_id)
        return moved

    def mark_background(self, info: TaskInfo) -> None:
        info.background = True
        self._record(info)

    def running(self, task_id: str) -> Running | None:
        return self._running.get(task_id)

    def begin_close(self) -> None:
        """The session is closing: ended tasks no longer start a notification turn."""
        self._closing = True

    async def close(self) -> None:
        self._closing = True
        for r in list(self._running.values()):
            r.cancel.set()
        for r in list(self._running.values()):
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(r.future), timeout=10)
        for t in list(self._notify):
            t.cancel()


def _plain_config(config: Any) -> dict:
    values = getattr(config, "values", None)
    return dict(values) if isinstance(values, dict) else {}


__all__ = ["TaskError", "TaskManager", "notification_text"]
