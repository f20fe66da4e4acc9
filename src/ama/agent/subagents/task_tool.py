"""The ``task`` and ``task_ctl`` tools (docs/agents.md).

``task{agent, description, prompt, background?, model?, taskId?, isolation?}`` runs a
sub-agent; ``task_ctl{action: list|status|output|stop, taskId?}`` looks at or stops them.
Both are ``read_only`` for the permission pipeline (they change nothing themselves; what a
child does is decided by the child's own permissions, capped by the parent's mode).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import TYPE_CHECKING, Any

from ama.tools.base import BuiltinTool, ToolError, ToolResult

if TYPE_CHECKING:
    from ama.agent.subagents.manager import TaskManager
    from ama.agent.subagents.registry import TaskInfo
    from ama.tools.context import ToolContext

TASK_DESCRIPTION = """\
Run a sub-agent on a self-contained task in its own context, and get its final report back.
Use it for broad searches (agent "explore": read-only, fast), for independent pieces of work
("general"), or for an agent defined in .ama/agents/. The sub-agent does not see this
conversation: give it everything it needs in `prompt`. Several task calls in one reply run in
parallel. background: true returns at once with a taskId; you are told when it finishes (a
<task-notification> message). Continue a finished task with taskId (its context is kept).
isolation: "worktree" runs it in a fresh git worktree (nothing is merged back automatically).
Available agents: {agents}"""

TASK_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "agent": {"type": "string", "description": "agent type, e.g. explore or general"},
        "description": {"type": "string", "description": "a short (3-8 word) label of the task"},
        "prompt": {"type": "string", "description": "the full instructions for the sub-agent"},
        "background": {"type": "boolean", "description": "return at once; be notified when it ends"},
        "model": {"type": "string", "description": "provider/id to use instead of the agent's model"},
        "taskId": {"type": "string", "description": "continue this earlier task"},
        "isolation": {"type": "string", "enum": ["none", "worktree"], "description": "worktree: a fresh git worktree"},
    },
    "required": ["prompt"],
    "additionalProperties": False,
}

CTL_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["list", "status", "output", "stop"]},
        "taskId": {"type": "string"},
    },
    "required": ["action"],
    "additionalProperties": False,
}


def _check_task(args: dict) -> str | None:
    if not args.get("taskId") and not str(args.get("description") or "").strip():
        return "description is required for a new task"
    if not str(args.get("prompt") or "").strip():
        return "prompt must not be empty"
    return None


def _check_ctl(args: dict) -> str | None:
    if args.get("action") != "list" and not args.get("taskId"):
        return f"taskId is required for action {args.get('action')!r}"
    return None


def result_text(info: TaskInfo, text: str, denied: list[str]) -> str:
    parts = [text.strip() or "(the task ended without a final message)"]
    if info.status != "completed":
        parts.append(f"[task {info.task_id} ended {info.status}: {info.error or 'no reason given'}]")
    if denied:
        names = ", ".join(sorted(set(denied)))
        parts.append(
            f"[{len(denied)} tool call(s) of this task were denied or not approved ({names}) and did not run; "
            "its report may be incomplete]"
        )
    if info.worktree:
        wt = info.worktree
        state = "has changes" if wt.get("changed") else "has no changes"
        parts.append(f"[worktree {wt.get('path')} on branch {wt.get('branch')} {state}; nothing was merged]")
    parts.append(f"[taskId: {info.task_id} — pass it as taskId to continue this task]")
    return "\n\n".join(parts)


def _details(info: TaskInfo) -> dict[str, Any]:
    return info.to_json()


def make_task_tools(manager: TaskManager) -> list[BuiltinTool]:
    async def run_task(call_id: str, args: dict, ctx: ToolContext, on_update: Any = None) -> ToolResult:
        from ama.agent.subagents.manager import TaskError

        pre = manager.claim(call_id)
        try:
            info, future = await (pre if pre is not None else manager.start(call_id, args))
        except TaskError as e:
            raise ToolError(e.message) from None
        if info.background:
            return ToolResult.text(
                f"Started background task {info.task_id} ({info.agent}: {info.description}). You will get a "
                "<task-notification> message when it ends; use task_ctl to check on it or stop it.",
                _details(info),
            )
        aborted = asyncio.ensure_future(ctx.abort.wait())
        running = manager.running(info.task_id)
        detached = asyncio.ensure_future(running.detach.wait()) if running is not None else None
        try:
            waits = {future, aborted} | ({detached} if detached is not None else set())
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if future not in done and detached is not None and detached in done:
                manager.mark_background(info)
                return ToolResult.text(
                    f"The user moved task {info.task_id} ({info.agent}: {info.description}) to the background; "
                    "it keeps running and you will get a <task-notification> message when it ends.",
                    _details(info),
                )
            if future not in done:
                manager.stop(info.task_id)
            outcome = await future
        finally:
            aborted.cancel()
            if detached is not None:
                detached.cancel()
        return ToolResult.text(result_text(info, outcome.text, outcome.denied), _details(info), is_error=info.status != "completed")

    async def run_ctl(call_id: str, args: dict, ctx: ToolContext, on_update: Any = None) -> ToolResult:
        action = args["action"]
        if action == "list":
            rows = manager.registry.view()
            if not rows:
                return ToolResult.text("No tasks in this session.", {"tasks": []})
            lines = [f"{t['taskId']}  {t['status']:<11} {t['agent']:<10} {t['description']}" for t in rows]
            return ToolResult.text("\n".join(lines), {"tasks": rows})
        task_id = str(args["taskId"])
        info = manager.registry.get(task_id)
        if info is None:
            known = ", ".join(manager.registry.tasks) or "none"
            raise ToolError(f"unknown taskId {task_id!r}; tasks of this session: {known}")
        if action == "status":
            return ToolResult.text(json.dumps(info.to_json(), indent=2, ensure_ascii=False), info.to_json())
        if action == "output":
            if info.status == "running":
                return ToolResult.text(f"Task {task_id} is still running (last action: {info.last_action or 'none yet'}).")
            text = info.result
            if not text and info.output_file:
                with contextlib.suppress(OSError), open(info.output_file, encoding="utf-8") as f:
                    text = f.read()
            return ToolResult.text(text or "(no output)", {"taskId": task_id, "status": info.status})
        # stop
        if not manager.stop(task_id):
            return ToolResult.text(f"Task {task_id} is not running (status: {info.status}).")
        running = manager.running(task_id)
        if running is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(running.future), timeout=30)
        return ToolResult.text(f"Task {task_id} stopped (status: {info.status}).", info.to_json())

    try:
        names = ", ".join(f"{a.name} ({a.description})" for a in manager.definitions().agents)
    except Exception:
        names = "general, explore"
    task = BuiltinTool(
        name="task",
        label="Task",
        description=TASK_DESCRIPTION.format(agents=names),
        parameters=TASK_PARAMS,
        read_only=True,
        run=run_task,
        check=_check_task,
    )
    ctl = BuiltinTool(
        name="task_ctl",
        label="Task control",
        description="List this session's sub-agent tasks, show one's status or final output, or stop a running one.",
        parameters=CTL_PARAMS,
        read_only=True,
        run=run_ctl,
        check=_check_ctl,
    )
    return [task, ctl]


__all__ = ["make_task_tools", "result_text"]
