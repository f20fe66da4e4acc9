"""The host side of external runners (``acp:<program>``, ``claude``, ``codex``).

``ama.agent.external.run_external_task(req, host, cancel, config)`` is imported lazily; when
that module is absent the task fails with "external runner <name> is not available".
``Host`` implements the ``ExternalTaskHost`` protocol: progress becomes ``subagent_update``,
permission asks go to the parent's broker with ``context {depth, taskId, origin}``, and
``record`` appends custom entries to the parent session.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any

from ama.agent.approvals import approval_timeout_ms
from ama.agent.events import event
from ama.agent.subagents.registry import merge_usage
from ama.agent.subagents.runner import ChildOutcome

if TYPE_CHECKING:
    from ama.agent.session import AgentSession
    from ama.agent.subagents.manager import TaskManager
    from ama.agent.subagents.runner import ChildSpec

HOST_TYPES = ("ama.agent-session", "ama.agent-usage")


class Host:
    def __init__(self, parent: AgentSession, spec: ChildSpec) -> None:
        self.parent = parent
        self.spec = spec
        self.turn = 0

    def update(self, payload: dict) -> None:
        kind = payload.get("kind")
        info = self.spec.info
        if kind == "text" or kind == "thinking":
            text = payload.get("text") or payload.get("delta") or ""
            self.parent.emit(event("subagent_update", taskId=info.task_id, kind="text", turn=self.turn, textDelta=str(text) or None))
        elif kind in ("tool_call", "tool_update"):
            name = str(payload.get("title") or payload.get("toolName") or payload.get("kind") or "tool")
            info.last_action = name
            if kind == "tool_call":
                self.parent.emit(event("subagent_update", taskId=info.task_id, kind="tool", turn=self.turn, toolName=name))
        else:
            self.turn += 1
            info.turns = self.turn
            self.parent.emit(event("subagent_update", taskId=info.task_id, kind="turn", turn=self.turn))

    @property
    def permission_mode(self) -> str:
        """The parent's mode: a child ama runs in it (docs/external-agents.md)."""
        return str(self.parent.permissions.mode)

    @property
    def unattended(self) -> bool:
        """Nobody can answer an ask (print mode, an SDK agent without an approver)."""
        return self.parent.broker is None

    async def ask_permission(self, request: dict) -> str:
        """Ask the parent's broker; returns the chosen ``optionId`` ("" when denied/unanswered)."""
        from ama.permissions import Answer

        parent = self.parent
        context = {"depth": self.spec.depth, "taskId": self.spec.info.task_id, **(request.get("context") or {})}
        origin = context.get("origin") or {}
        options = origin.get("options") or []
        timeout_ms = approval_timeout_ms()
        req: dict[str, Any] = {
            "requestId": uuid.uuid4().hex[:12],
            "toolName": request.get("toolName") or "agent",
            "input": request.get("input") or origin.get("toolCall") or {},
            "reason": "mode",
            "timeoutMs": timeout_ms,
            "context": context,
        }
        async with parent._approval_lock:
            parent.emit(event("permission_request", **req))
            answer: Answer = Answer("deny")
            if parent.broker is not None:
                try:
                    answer = await asyncio.wait_for(parent.broker.ask(req), timeout=timeout_ms / 1000)
                except TimeoutError:
                    answer = Answer("deny")
            parent.emit(event("permission_resolved", requestId=req["requestId"], decision={"allow_once": "allow"}.get(answer.kind, answer.kind)))
        if answer.kind == "deny":
            return ""
        want = "allow_always" if answer.kind == "allow_session" else "allow_once"
        for o in options:
            if o.get("kind") == want:
                return str(o.get("optionId"))
        for o in options:
            if str(o.get("kind", "")).startswith("allow"):
                return str(o.get("optionId"))
        return "allow" if not options else ""

    def record(self, custom_type: str, data: dict) -> None:
        self.parent.session.append_custom(custom_type, data)


async def run_external(manager: TaskManager, parent: AgentSession, spec: ChildSpec, cancel: asyncio.Event) -> ChildOutcome:
    name = spec.info.agent
    try:
        from ama.agent import external  # type: ignore[attr-defined]
    except ImportError:
        return ChildOutcome("failed", "", f"external runner {name} is not available")
    run = getattr(external, "run_external_task", None)
    req_cls = getattr(external, "ExternalTaskRequest", None)
    if run is None or req_cls is None:
        return ChildOutcome("failed", "", f"external runner {name} is not available")
    req = req_cls(
        agent=name,
        prompt=spec.prompt,
        cwd=spec.worktree_cwd or parent.cwd,
        task_id=spec.info.task_id,
        description=spec.info.description,
        session_id=(spec.info.session_ref or {}).get("sessionId") if spec.session_file is None and spec.info.session_ref else None,
        model=spec.model,
    )
    from ama.agent.subagents.manager import _plain_config

    result = await run(req, Host(parent, spec), cancel, _plain_config(parent.config))
    usage: dict = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.0}}
    merge_usage(usage, getattr(result, "usage", None) or {})
    total: dict = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.0}}
    merge_usage(total, spec.info.usage)
    merge_usage(total, usage)
    spec.info.usage = total
    sid = getattr(result, "session_id", None)
    if sid:
        spec.info.session_ref = {"sessionId": sid}
    status = result.status if result.status in ("completed", "failed", "aborted") else "failed"
    return ChildOutcome(status, result.text or "", result.error, usage=usage)


__all__ = ["HOST_TYPES", "Host", "run_external"]
