"""The run loop: a prompt -> turns (model call, tool calls) -> ``agent_settled``.

Turn = one model call plus the tool calls it asked for.  After a reply without tool calls,
queued steering messages, then follow-up messages, then a blocking Stop hook may continue
the run with a new user message; otherwise the run ends.  Failures of the model call that
are retryable (429, 5xx, overloaded, network) are retried with backoff: the failed attempt
stays in the file and is removed from the context by ``context_edit{reason:"retry"}``, so
the retried request is byte-identical to the failed one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ama.agent.events import event, plain
from ama.agent.runs import RUN_TYPE, RunRecord
from ama.agent.tool_exec import execute_call
from ama.messages import AssistantMessage, ImageContent, TextContent, ToolCall, ToolResultMessage, UserMessage
from ama.session.entries import now_iso, now_ms

if TYPE_CHECKING:
    from ama.agent.session import AgentSession

ABORTED_NOTE = (
    "The user interrupted the previous reply; it may be incomplete and tool calls after the "
    "interruption did not run. Wait for the user's next instruction."
)
SKIPPED_STEER = "Skipped: the user sent a new message before this call ran."
SKIPPED_ABORT = "Not run: the user interrupted."


@dataclass
class RunResult:
    record: RunRecord
    message: AssistantMessage | None  # the last assistant message
    warning: str | None = None

    @property
    def text(self) -> str:
        if self.message is None:
            return ""
        return "".join(b.text for b in self.message.content if isinstance(b, TextContent))

    @property
    def exit_code(self) -> int:
        return self.record.exit_code


def user_message(text: str, images: list[ImageContent] | None = None, origin: str | None = None) -> UserMessage:
    content: str | list = text if not images else [TextContent(text=text), *images]
    msg = UserMessage(content=content, timestamp=now_ms())
    if origin:
        msg.origin = origin
    return msg


async def _sleep_or_abort(agent: AgentSession, seconds: float) -> bool:
    """Sleep; True if the run was aborted meanwhile."""
    try:
        await asyncio.wait_for(agent.abort_event.wait(), timeout=seconds)
        return True
    except TimeoutError:
        return False


async def model_call(agent: AgentSession, record: RunRecord) -> tuple[AssistantMessage, bool]:
    """One model request with retries: the final assistant message (already in the session)
    and whether it was retried."""
    from ama.agent.compaction import overflow_failed, recover_overflow
    from ama.ai import DoneEvent, ErrorEvent, StartEvent, StreamOptions, backoff_delay, stream

    attempt = 0
    retried = False
    overflowed = False  # a context overflow was recovered once (docs/compaction.md)
    while True:
        attempt += 1
        record.step_index += 1
        request: dict[str, Any] = {}
        options = StreamOptions(
            api_key=agent.registry.api_key(agent.model),
            thinking_level=agent.thinking_level,
            abort=agent.abort_event,
            on_request=request.update,
            session_id=agent.session.id,
        )
        final: AssistantMessage | None = None
        error: Any = None
        events_iter: Any = stream(agent.model, agent.build_context(), options)
        async with contextlib.aclosing(events_iter) as events:
            async for ev in events:
                if isinstance(ev, StartEvent):
                    agent.emit(event("message_start", message=plain(ev.partial)))
                elif isinstance(ev, DoneEvent):
                    final = ev.message
                elif isinstance(ev, ErrorEvent):
                    final, error = ev.message, ev.error
                else:
                    agent.emit(event("message_update", assistantMessageEvent=plain(ev)))
        assert final is not None, "the provider stream ended without done or error"
        entry = agent.session.append_message(final)
        agent.emit(event("message_end", message=plain(final)))
        if request:
            agent.session.append_custom("ama.request", {"purpose": "turn", **request, "attempt": attempt})
        if final.stop_reason == "error" and getattr(error, "code", None) == "context_overflow":
            err_text = final.error_message if isinstance(final.error_message, str) else str(error)
            if overflowed:
                overflow_failed(agent, err_text)
            elif not agent.abort_event.is_set() and await recover_overflow(agent, entry.id, err_text):
                overflowed = True
                continue
            return final, retried
        retryable = bool(getattr(error, "retryable", False))
        if final.stop_reason == "error" and retryable and attempt < agent.max_attempts and not agent.abort_event.is_set():
            agent.session.append_context_edit(entry.id, None, "retry")
            delay = backoff_delay(attempt, getattr(error, "retry_after", None), base=agent.retry_base_s)
            agent.emit(
                event(
                    "auto_retry_start",
                    attempt=attempt,
                    maxAttempts=agent.max_attempts,
                    delayMs=int(delay * 1000),
                    errorMessage=final.error_message if isinstance(final.error_message, str) else str(error),
                )
            )
            retried = True
            if await _sleep_or_abort(agent, delay):
                agent.emit(event("auto_retry_end", success=False, attempt=attempt, finalError="aborted"))
                return final, retried
            continue
        if retried:
            ok = final.stop_reason != "error"
            msg = final.error_message if isinstance(final.error_message, str) else None
            agent.emit(event("auto_retry_end", success=ok, attempt=attempt, finalError=None if ok else msg))
        return final, retried


def _deliver(agent: AgentSession, items: list[tuple[str, list[ImageContent] | None]], origin: str) -> None:
    for text, images in items:
        msg = user_message(text, images, origin)
        agent.session.append_message(msg)
        agent.emit(event("message_start", message=plain(msg)))
        agent.emit(event("message_end", message=plain(msg)))


async def run_loop(agent: AgentSession, record: RunRecord) -> RunResult:
    from ama.agent.compaction import maybe_compact
    from ama.hooks import run_hooks

    last: AssistantMessage | None = None
    warning: str | None = None
    turns = 0
    while True:
        if agent.max_turns is not None and turns >= agent.max_turns:
            record.transition("COMPLETED", reason="max_steps")
            warning = "max_turns"
            break
        turns += 1
        if turns > 1:  # run_prompt announced the first turn before the user message
            agent.emit(event("turn_start"))
        await maybe_compact(agent)  # tier 2 at the threshold (agent/compaction.py)
        last, retried = await model_call(agent, record)
        calls = [b for b in last.content if isinstance(b, ToolCall)]
        results: list[ToolResultMessage] = []
        if last.stop_reason == "aborted" or agent.abort_event.is_set():
            for call in calls:
                results.append(agent.append_skipped(call, SKIPPED_ABORT))
            agent.emit(event("turn_end", message=plain(last), toolResults=plain(results)))
            record.transition("CANCELLED", reason="aborted")
            break
        if last.stop_reason == "error":
            agent.emit(event("turn_end", message=plain(last), toolResults=[]))
            code = "max_retries" if retried else "error"
            overflow = agent.context_state.take_failure()
            record.error_message = overflow or (last.error_message if isinstance(last.error_message, str) else None)
            record.transition("FAILED", reason=code, error_code="context_overflow" if overflow else "provider_error")
            break
        for i, call in enumerate(calls):
            if agent.abort_event.is_set():
                results.append(agent.append_skipped(call, SKIPPED_ABORT))
            elif agent.steering and i > 0:
                results.append(agent.append_skipped(call, SKIPPED_STEER))
            else:
                msg, _denied = await execute_call(agent, call)
                results.append(msg)
        agent.emit(event("turn_end", message=plain(last), toolResults=plain(results)))
        if agent.abort_event.is_set():
            record.transition("CANCELLED", reason="aborted")
            break
        if agent.steering:
            _deliver(agent, agent.take_steering(), "steer")
            continue
        if calls:
            continue
        if agent.follow_up:
            _deliver(agent, agent.take_follow_up(), "followUp")
            continue
        if agent.hooks:
            stop = await run_hooks("Stop", {"sessionId": agent.session.id}, agent.hooks, cwd=agent.cwd)
            agent.emit_hook_records(stop)
            if stop.blocked and stop.reason and turns < (agent.max_turns or 10_000):
                _deliver(agent, [(stop.reason, None)], "host")
                continue
        record.transition("COMPLETED", reason="length" if last.stop_reason == "length" else "stop")
        break
    if record.status == "CANCELLED":
        agent.session.append_custom_message("ama.aborted", ABORTED_NOTE, display=False)
    return RunResult(record, last, warning)


async def run_prompt(
    agent: AgentSession,
    text: str,
    images: list[ImageContent] | None = None,
    origin: str | None = None,
    started: Callable[[], None] | None = None,
) -> RunResult:
    """The whole run of one prompt (the caller has checked the session is idle).
    ``started`` is called synchronously once the run has begun (right after the first
    ``turn_start``, before the user message), e.g. to answer an RPC ``prompt`` in order."""
    return await _run_prompt(agent, text, images, origin, started)


async def _run_prompt(
    agent: AgentSession,
    text: str,
    images: list[ImageContent] | None,
    origin: str | None,
    started: Callable[[], None] | None,
) -> RunResult:
    from ama.hooks import run_hooks

    record = RunRecord(prompt=text, model=agent.model.ref)
    extra = ""
    if agent.hooks:
        outcome = await run_hooks(
            "UserPromptSubmit", {"sessionId": agent.session.id, "prompt": text}, agent.hooks, cwd=agent.cwd
        )
        agent.emit_hook_records(outcome)
        if outcome.blocked:
            from ama.errors import AmaError

            raise AmaError("blocked", f"the UserPromptSubmit hook blocked this prompt: {outcome.reason or 'no reason given'}")
        extra = outcome.additional_context
    agent.ensure_started()
    agent.emit(event("before_agent_start", prompt=text))
    agent.emit(event("agent_start"))
    agent.emit(event("turn_start"))
    if started is not None:
        started()
    for note in agent.pending_notes:
        agent.session.append_custom_message("ama.rewind-note", note, display=False)
    agent.pending_notes.clear()
    _deliver(agent, [(text, images)], origin or "")
    tracker = agent.checkpoints
    user_id = agent.session.leaf_id  # the user message just appended
    if tracker is not None and tracker.enabled and not origin and user_id is not None:
        if tracker.mode == "shadow-git":  # git runs: keep the loop responsive
            await asyncio.get_running_loop().run_in_executor(None, tracker.checkpoint, user_id)
        else:
            tracker.checkpoint(user_id)
    if extra:
        agent.session.append_custom_message("ama.hook_context", extra, display=False)
    record.transition("RUNNING")
    agent.session.append_custom(RUN_TYPE, record.to_data())
    result: RunResult | None = None
    try:
        result = await run_loop(agent, record)
    except asyncio.CancelledError:
        if record.status == "RUNNING":
            record.transition("CANCELLED", reason="aborted")
        raise
    except Exception as exc:
        if record.status == "RUNNING":
            record.error_message = f"{type(exc).__name__}: {exc}"
            record.transition("FAILED", reason="error", error_code=getattr(exc, "code", "internal_error"))
        result = RunResult(record, None, None)
        agent.emit(event("notification", level="error", message=f"run failed: {record.error_message}"))
    finally:
        agent.session.append_custom(RUN_TYPE, record.to_data())
        last = result.message if result else None
        agent.emit(event("agent_end", stopReason=last.stop_reason if last else "error", willRetry=False))
        agent.emit(event("agent_before_settle"))
        agent.session.sync()
        agent.emit(event("agent_settled", warning=result.warning if result else None))
    return result


__all__ = ["RunResult", "now_iso", "run_prompt", "user_message"]
