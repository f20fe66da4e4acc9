"""One tool call: validate, PreToolUse hooks, permission (and approval), execute, PostToolUse.

Every call ends in exactly one ``toolResult`` message and one ``tool_execution_end`` event;
a call that did not run (unknown tool, bad arguments, denied) says why in its result, and
``denied: true`` marks a permission / hook / approval denial.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any

from ama.agent.approvals import approval_timeout_ms
from ama.agent.events import event, plain
from ama.agent.preview import permission_preview
from ama.messages import TextContent, ToolCall, ToolResultMessage
from ama.permissions import DENY, Answer, Decision
from ama.session.entries import now_ms
from ama.tools import ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from ama.agent.session import AgentSession

ANSWER_NAMES = {"allow_once": "allow", "allow_session": "allow_session", "deny": "deny"}


def _error(text: str) -> ToolResult:
    return ToolResult([TextContent(text=text)], None, True)


async def _ask(agent: AgentSession, call: ToolCall, decision: Decision, hook_reason: str | None) -> Decision:
    """Ask the approval broker; serial, bounded by the timeout, denied on abort."""
    request_id = uuid.uuid4().hex[:12]
    timeout_ms = approval_timeout_ms()
    req: dict[str, Any] = {
        "requestId": request_id,
        "toolCallId": call.id,
        "toolName": call.name,
        "input": call.arguments,
        "reason": decision.request_reason,
        "timeoutMs": timeout_ms,
        "message": decision.reason,
    }
    if hook_reason:
        req["hookReason"] = hook_reason
    if decision.auto is not None:
        req["autoDecision"] = decision.auto.to_json()
    if agent.approval_context:  # a task sub-agent's ask: {depth, taskId} (agent/subagents)
        req["context"] = agent.approval_context
    if decision.session_rules:
        req["sessionRules"] = [str(r) for r in decision.session_rules]  # what "allow for the session" adds
    args = call.arguments if isinstance(call.arguments, dict) else {}
    preview = permission_preview(call.name, args, agent.cwd, sandboxed=decision.sandboxed, sandbox=agent.bash_sandbox)
    if preview is not None:
        req["preview"] = preview
    async with agent._approval_lock:
        agent.emit(event("permission_request", **req))
        answer: Answer = DENY
        broker = agent.broker
        if broker is not None and not agent.abort_event.is_set():
            ask = asyncio.ensure_future(broker.ask(req))
            aborted = asyncio.ensure_future(agent.abort_event.wait())
            try:
                done, _ = await asyncio.wait({ask, aborted}, timeout=timeout_ms / 1000, return_when=asyncio.FIRST_COMPLETED)
                if ask in done and not agent.abort_event.is_set():
                    answer = ask.result()
            finally:
                for fut in (ask, aborted):
                    if not fut.done():
                        fut.cancel()
        agent.emit(event("permission_resolved", requestId=request_id, decision=ANSWER_NAMES[answer.kind]))
    return agent.permissions.resolve(decision, answer)


async def execute_call(agent: AgentSession, call: ToolCall) -> tuple[ToolResultMessage, bool]:
    """Run one call; returns its result message (appended to the session) and ``denied``."""
    from ama.hooks import run_hooks

    args = call.arguments if isinstance(call.arguments, dict) else {}
    agent.emit(event("tool_execution_start", toolCallId=call.id, toolName=call.name, args=args))
    tool = agent.tools_by_name.get(call.name)
    denied = False
    auto = None  # auto mode: the layer that decided (autoDecision)
    result: ToolResult
    if tool is None:
        names = ", ".join(sorted(agent.tools_by_name))
        result = _error(f"Unknown tool {call.name!r}. Available tools: {names}.")
    elif (problem := tool.validate(args)) is not None:
        result = _error(f"Invalid arguments for {call.name}: {problem}")
    else:
        hook = None
        if agent.hooks:
            hook = await run_hooks(
                "PreToolUse",
                {"sessionId": agent.session.id, "toolName": call.name, "toolInput": args},
                agent.hooks,
                cwd=agent.cwd,
            )
            agent.emit_hook_records(hook)
        decision = agent.permissions.decide(call.name, args, read_only=tool.read_only, hook=hook)
        if decision.pending:  # auto mode: the classifier judges it
            from ama.agent.auto_classifier import recent_intent

            decision = await agent.permissions.settle(call.name, args, decision, intent=recent_intent(agent))
        auto = decision.auto
        if decision.action == "ask":
            decision = await _ask(agent, call, decision, hook.reason if hook and hook.decision == "ask" else None)
        if decision.action != "allow":
            denied = True
            result = _error(decision.reason)
        else:
            result = await _run_tool(agent, tool, call, args, decision)
            if agent.hooks:
                post = await run_hooks(
                    "PostToolUse",
                    {
                        "sessionId": agent.session.id,
                        "toolName": call.name,
                        "toolInput": args,
                        "toolResult": {"content": plain(result.content), "isError": result.is_error},
                    },
                    agent.hooks,
                    cwd=agent.cwd,
                )
                agent.emit_hook_records(post)
                if post.blocked and post.reason:
                    result.content.append(TextContent(text=f"[PostToolUse hook] {post.reason}"))
    msg = ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=list(result.content),
        is_error=result.is_error,
        timestamp=now_ms(),
    )
    if result.details is not None:
        msg.details = result.details
    if call.id == agent.batch_tail_id:  # the batch's last result carries the reminders
        from ama.agent.reminders import on_batch_tail

        on_batch_tail(agent, msg)
    agent.session.append_message(msg)
    agent.emit(
        event(
            "tool_execution_end",
            toolCallId=call.id,
            toolName=call.name,
            result={"content": plain(msg.content), "details": result.details},
            isError=msg.is_error,
            denied=True if denied else None,
            autoDecision=auto.to_json() if auto is not None else None,
        )
    )
    return msg, denied


async def _run_tool(agent: AgentSession, tool: Any, call: ToolCall, args: dict, decision: Decision) -> ToolResult:
    ctx = ToolContext(
        cwd=agent.cwd,
        abort=agent.abort_event,
        read_files=agent.read_files,
        output_dir=agent.output_dir,
        session=agent.session,
        before_write=agent.before_write,
        after_write=agent.after_write,
        bash_sandbox=agent.bash_sandbox,
        emit=agent.emit,
        sandboxed=decision.sandboxed,
    )

    def on_update(partial: ToolResult) -> None:
        text = "".join(b.text for b in partial.content if isinstance(b, TextContent))
        agent.emit(event("tool_execution_update", toolCallId=call.id, toolName=call.name, partial=text))

    try:
        return await tool.execute(call.id, args, ctx, on_update)
    except ToolError as err:
        return _error(err.message)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a bug in a tool must not end the session
        return _error(f"Internal error in tool {call.name}: {type(exc).__name__}: {exc}")
    finally:
        tracker = agent.checkpoints
        if call.name == "bash" and tracker is not None and tracker.mode == "shadow-git":
            # shadow-git: what the command changed is ama's doing, so a rewind restores it
            await asyncio.get_running_loop().run_in_executor(None, tracker.after_command)
