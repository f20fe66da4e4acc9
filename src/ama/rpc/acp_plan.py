"""Plan approval over ACP: a proposed plan is put to the client as ``session/request_permission``.

After a prompt's run settles with a plan proposed (plan mode, a ``<proposed_plan>`` reply), the
client is asked with one option per answer: ``approve`` (keep the context), ``approve_compact``
(compact, then implement), ``approve_fresh`` (a fresh ama session behind the same ACP session)
and ``reject``.  A cancelled request leaves the plan proposed: the user's next prompt is the
feedback, and the model's next block becomes the next version (that is how revise works here).
The approved plan is executed within the same ``session/prompt``, whose stop reason is then the
execution turn's.  docs/acp.md and docs/plan.md describe it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from ama.rpc.acp_map import text_content

if TYPE_CHECKING:
    from ama.agent.plans import PlanData
    from ama.rpc.acp_session import AcpSession

log = logging.getLogger("ama.acp")

#: the permission options of a plan approval; the option id is the ``plan_response`` decision
PLAN_OPTIONS: list[dict[str, str]] = [
    {"optionId": "approve", "name": "Approve and implement (keep the context)", "kind": "allow_once"},
    {"optionId": "approve_compact", "name": "Compact, then implement", "kind": "allow_once"},
    {"optionId": "approve_fresh", "name": "Implement in a fresh session", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject (stay in plan mode)", "kind": "reject_once"},
]
DECISIONS = {o["optionId"] for o in PLAN_OPTIONS}


def plan_tool_call(plan: PlanData, mode: str) -> dict[str, Any]:
    """The ``toolCall`` shown with the request: the plan's Markdown as its content."""
    raw: dict[str, Any] = {"planId": plan.id, "version": plan.version, "mode": mode}
    if plan.file_path:
        raw["filePath"] = plan.file_path
    return {
        "toolCallId": f"{plan.id}-v{plan.version}",
        "title": f"Plan: {plan.title} (v{plan.version})",
        "kind": "think",
        "status": "pending",
        "rawInput": raw,
        "content": [text_content(plan.markdown)],
    }


async def ask(s: AcpSession, plan: PlanData) -> str | None:
    """The client's decision for ``plan``, or None (cancelled, or the request failed)."""
    await s.outbox.drain()  # the client has the reply and the plan update before the question
    call = plan_tool_call(plan, s.agent.plans.pre_plan_mode())
    try:
        resp = await s.conn.request_permission(
            session_id=s.acp_id,
            tool_call=s.schema.ToolCallUpdate.model_validate(call),
            options=[s.schema.PermissionOption.model_validate(o) for o in PLAN_OPTIONS],
        )
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log.warning("session/request_permission for plan %s failed: %s", plan.id, exc)
        return None
    outcome = resp.outcome
    if getattr(outcome, "outcome", None) == "selected" and outcome.option_id in DECISIONS:
        return str(outcome.option_id)
    return None


async def settle(s: AcpSession, result: Any) -> Any:
    """After a run that proposed a plan (``s.proposed``): ask the client and carry out the
    answer; an execution run's result replaces ``result``.  Returns the last run's result."""
    while s.proposed and not s.cancelled:
        s.proposed = False
        plans = s.agent.plans
        plan = plans.pending()
        if plan is None:
            return result
        s.asking = True
        try:
            decision = await ask(s, plan)
        finally:
            s.asking = False
        if decision is None or s.cancelled:
            return result  # cancelled: the plan waits; the next prompt revises it
        data, task = await plans.answer(plan.id, decision, allow_fresh=True)
        if decision == "approve_fresh":
            approved = plans.get(plan.id)
            assert approved is not None
            model = s.agent.model.ref
            await s.fresh_agent()
            task = s.agent.plans.begin_fresh(approved, data["mode"], model=model)
        if task is None:
            return result
        result = await asyncio.shield(task)
    return result
