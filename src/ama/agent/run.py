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
from ama.agent.guard import (
    REPEAT_REMIND,
    REPEAT_STOP,
    LimitHit,
    Limits,
    RunGuard,
    repeat_reminder,
    repeat_stop_message,
)
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
SKIPPED_REPEAT = "Not run: the run was stopped because the model repeated a tool call."
REPEAT_TYPE = "ama.repeat-reminder"


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


@dataclass
class ModelReply:
    """The outcome of one model request (with its retries and fallback)."""

    message: AssistantMessage  # already in the session
    error: Any = None  # the provider error of a failed reply
    retried: bool = False
    error_message: str | None = None  # set when main and fallback both failed


async def _attempt(agent: AgentSession, record: RunRecord, attempt: int, guard: RunGuard | None) -> tuple[Any, Any, Any]:
    """One streamed request to ``agent.model``: (final message, error, its entry)."""
    from ama.ai import DoneEvent, ErrorEvent, StartEvent, StreamOptions, stream

    record.step_index += 1
    request: dict[str, Any] = {}
    options = StreamOptions(
        api_key=agent.registry.api_key(agent.model),
        thinking_level=agent.thinking_level,
        abort=agent.abort_event,
        on_request=request.update,
        session_id=agent.session.id,
        timeout=agent.request_timeout_s,
    )
    final: AssistantMessage | None = None
    error: Any = None
    from ama.agent import cache_care

    context = agent.build_context()
    sent = cache_care.before_request(agent)
    events_iter: Any = stream(agent.model, context, options)
    meter = agent.telemetry  # agent/telemetry.py: this is a purpose "turn" request
    meter.start("turn")
    try:
        async with contextlib.aclosing(events_iter) as events:
            async for ev in events:
                if isinstance(ev, StartEvent):
                    agent.emit(event("message_start", message=plain(ev.partial)))
                elif isinstance(ev, DoneEvent):
                    final = ev.message
                elif isinstance(ev, ErrorEvent):
                    final, error = ev.message, ev.error
                else:
                    if isinstance(getattr(ev, "delta", None), str):
                        meter.delta(ev.delta)  # type: ignore[union-attr]
                    agent.emit(event("message_update", assistantMessageEvent=plain(ev)))
    finally:
        meter.done(final.usage.output if final is not None else None)
    assert final is not None, "the provider stream ended without done or error"
    entry = agent.session.append_message(final)
    agent.emit(event("message_end", message=plain(final)))
    cache_care.after_response(agent, context, sent, final)  # cache_miss (agent/cache_care.py)
    if guard is not None:
        guard.add_usage(final)
    if request:
        agent.session.append_custom("ama.request", {"purpose": "turn", **request, "attempt": attempt})
    return final, error, entry


async def model_call(agent: AgentSession, record: RunRecord, guard: RunGuard | None = None) -> ModelReply:
    """One model request with retries, and the fallback model when the main one is
    overloaded or still failing after the last retry (agent/fallback.py)."""
    from ama.agent.compaction import overflow_failed, recover_overflow
    from ama.agent.fallback import answer_with_fallback, both_errors, error_text, should_fall_back
    from ama.ai import backoff_delay

    attempt = 0
    retried = False
    overflowed = False  # a context overflow was recovered once (docs/compaction.md)
    while True:
        attempt += 1
        final, error, entry = await _attempt(agent, record, attempt, guard)
        if final.stop_reason == "error" and getattr(error, "code", None) == "context_overflow":
            if overflowed:
                overflow_failed(agent, error_text(final, error))
            elif not agent.abort_event.is_set() and await recover_overflow(agent, entry.id, error_text(final, error)):
                overflowed = True
                continue
            return ModelReply(final, error, retried)
        retryable = bool(getattr(error, "retryable", False))
        failed = final.stop_reason == "error" and not agent.abort_event.is_set()
        if failed and should_fall_back(agent, error, attempt):
            agent.session.append_context_edit(entry.id, None, "retry")
            main_ref, fb_ref, reason = agent.model.ref, agent.fallback_model.ref, error_text(final, error)

            async def once(n: int = attempt + 1) -> tuple[AssistantMessage, Any]:
                fb_final, fb_error, _ = await _attempt(agent, record, n, guard)
                return fb_final, fb_error

            fb_final, fb_error = await answer_with_fallback(agent, final, error, once)
            record.note_fallback(main_ref, fb_ref, reason)
            if retried:
                agent.emit(event("auto_retry_end", success=fb_final.stop_reason != "error", attempt=attempt))
            if fb_final.stop_reason == "error":
                both = both_errors(main_ref, reason, fb_ref, fb_final, fb_error)
                return ModelReply(fb_final, fb_error, True, both)
            return ModelReply(fb_final, None, True)
        if failed and retryable and attempt < agent.max_attempts:
            agent.session.append_context_edit(entry.id, None, "retry")
            delay = backoff_delay(attempt, getattr(error, "retry_after", None), base=agent.retry_base_s)
            agent.emit(
                event(
                    "auto_retry_start",
                    attempt=attempt,
                    maxAttempts=agent.max_attempts,
                    delayMs=int(delay * 1000),
                    errorMessage=error_text(final, error),
                )
            )
            retried = True
            if await _sleep_or_abort(agent, delay):
                agent.emit(event("auto_retry_end", success=False, attempt=attempt, finalError="aborted"))
                return ModelReply(final, error, retried)
            continue
        if retried:
            ok = final.stop_reason != "error"
            msg = final.error_message if isinstance(final.error_message, str) else None
            agent.emit(event("auto_retry_end", success=ok, attempt=attempt, finalError=None if ok else msg))
        return ModelReply(final, error if final.stop_reason == "error" else None, retried)


def _deliver(agent: AgentSession, items: list[tuple[str, list[ImageContent] | None]], origin: str) -> None:
    for text, images in items:
        msg = user_message(text, images, origin)
        agent.session.append_message(msg)
        agent.emit(event("message_start", message=plain(msg)))
        agent.emit(event("message_end", message=plain(msg)))


def _limit_reached(agent: AgentSession, record: RunRecord, hit: LimitHit, guard: RunGuard) -> None:
    """End the run at a budget: COMPLETED/max_steps (exit 0), or FAILED/timeout for the
    wall-time budget (seeds/003: a timeout budget is a failure); the record names the limit."""
    if guard.first_report(hit):
        agent.emit(event("limit_reached", **hit.to_data()))
    record.limit = hit.to_data()
    if hit.kind == "wallTime":
        record.error_message = f"the run took longer than its wall-time limit of {hit.limit:g}s"
        record.transition("FAILED", reason="timeout", error_code="timeout_budget_exceeded")
    else:
        record.transition("COMPLETED", reason="max_steps")


def _provider_failure(record: RunRecord, reply: ModelReply) -> None:
    """FAILED with the provider's error kept: code, category, HTTP status (seeds/003 §8)."""
    from ama.agent.runs import terminal_reason_for

    err = reply.error
    last = reply.message
    record.error_message = reply.error_message or (last.error_message if isinstance(last.error_message, str) else None)
    record.set_provider_error(err)
    code = getattr(err, "code", None) or "provider_error"
    record.transition("FAILED", reason=terminal_reason_for(code, reply.retried), error_code=code)


async def run_loop(agent: AgentSession, record: RunRecord, limits: Limits | None = None) -> RunResult:
    from ama.agent.compaction import maybe_compact
    from ama.hooks import run_hooks

    last: AssistantMessage | None = None
    warning: str | None = None
    guard = RunGuard(agent.limits.over(limits))
    agent.run_guard = guard  # task sub-agents count against it (agent/subagents/caps.py)
    if agent.tasks is not None:  # sub-agents' usage left over from an ended run counts here
        agent.tasks.bind_run(guard)
    timer = _wall_timer(agent, guard)
    try:
        while True:
            hit = guard.exceeded()
            if hit is not None:
                _limit_reached(agent, record, hit, guard)
                warning = "limit_reached"
                break
            guard.turns += 1
            if guard.turns > 1:  # run_prompt announced the first turn before the user message
                agent.session.append_custom(RUN_TYPE, record.progress())  # stepIndex while it runs
                agent.emit(event("turn_start"))
            await maybe_compact(agent)  # tier 2 at the threshold (agent/compaction.py)
            reply = await model_call(agent, record, guard)
            last = reply.message
            calls = [b for b in last.content if isinstance(b, ToolCall)]
            results: list[ToolResultMessage] = []
            if last.stop_reason == "aborted" or agent.abort_event.is_set():
                for call in calls:
                    results.append(agent.append_skipped(call, SKIPPED_ABORT))
                agent.emit(event("turn_end", message=plain(last), toolResults=plain(results)))
                if guard.wall_time_expired and (hit := guard.exceeded()) is not None:
                    _limit_reached(agent, record, hit, guard)
                    warning = "limit_reached"
                else:
                    record.transition("CANCELLED", reason="aborted")
                break
            if last.stop_reason == "error":
                agent.emit(event("turn_end", message=plain(last), toolResults=[]))
                overflow = agent.context_state.take_failure()  # the overflow that compaction could not fix
                if overflow:
                    reply.error_message = overflow
                _provider_failure(record, reply)
                break
            stopped_at: ToolCall | None = None
            reminders: list[str] = []
            agent.reminders.guard = guard  # ama.reminder on the batch's last result (agent/reminders.py)
            agent.batch_tail_id = calls[-1].id if calls else None
            if agent.tasks is not None:  # parallel task calls start together (agent/subagents)
                agent.tasks.prefetch(calls)
            for i, call in enumerate(calls):
                if agent.abort_event.is_set():
                    results.append(agent.append_skipped(call, SKIPPED_ABORT))
                elif agent.steering and i > 0:
                    results.append(agent.append_skipped(call, SKIPPED_STEER))
                elif stopped_at is not None:
                    results.append(agent.append_skipped(call, SKIPPED_REPEAT))
                else:
                    count = guard.note_call(call, agent.tools_by_name.get(call.name))
                    if count >= REPEAT_STOP:
                        stopped_at = call
                        results.append(agent.append_skipped(call, f"Not run: {repeat_stop_message(call)}."))
                        continue
                    msg, _denied = await execute_call(agent, call)
                    results.append(msg)
                    if count >= REPEAT_REMIND:
                        reminders.append(repeat_reminder(call, count))
            agent.batch_tail_id = None
            if agent.tasks is not None:
                await agent.tasks.discard_prefetched()
            agent.emit(event("turn_end", message=plain(last), toolResults=plain(results)))
            if agent.abort_event.is_set():
                if guard.wall_time_expired and (hit := guard.exceeded()) is not None:
                    _limit_reached(agent, record, hit, guard)
                    warning = "limit_reached"
                else:
                    record.transition("CANCELLED", reason="aborted")
                break
            if stopped_at is not None:
                record.error_message = repeat_stop_message(stopped_at)
                record.transition("FAILED", reason="error", error_code="repeated_tool_call")
                agent.emit(event("notification", level="error", message=f"run {record.error_message}"))
                warning = "repeated_tool_call"
                break
            for text in reminders:
                agent.session.append_custom_message(REPEAT_TYPE, text, display=False)
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
                if stop.blocked and stop.reason and guard.turns < 10_000:
                    _deliver(agent, [(stop.reason, None)], "host")
                    continue
            record.transition("COMPLETED", reason="length" if last.stop_reason == "length" else "stop")
            break
    finally:
        if timer is not None:
            timer.cancel()
        if agent.tasks is not None:
            agent.tasks.unbind_run(guard)
    if record.status == "CANCELLED":
        agent.session.append_custom_message("ama.aborted", ABORTED_NOTE, display=False)
    return RunResult(record, last, warning)


def _wall_timer(agent: AgentSession, guard: RunGuard) -> asyncio.TimerHandle | None:
    """The wall-time budget also interrupts a model call or tool in flight."""
    left = guard.wall_time_left()
    if left is None:
        return None
    abort = agent.abort_event

    def expire() -> None:
        guard.wall_time_expired = True
        abort.set()

    return asyncio.get_running_loop().call_later(left, expire)


async def run_prompt(
    agent: AgentSession,
    text: str,
    images: list[ImageContent] | None = None,
    origin: str | None = None,
    started: Callable[[], None] | None = None,
    limits: Limits | None = None,
) -> RunResult:
    """The whole run of one prompt (the caller has checked the session is idle).
    ``started`` is called synchronously once the run has begun (right after the first
    ``turn_start``, before the user message), e.g. to answer an RPC ``prompt`` in order.
    ``limits`` override the agent's limits for this run (agent/guard.py)."""
    return await _run_prompt(agent, text, images, origin, started, limits)


async def _run_prompt(
    agent: AgentSession,
    text: str,
    images: list[ImageContent] | None,
    origin: str | None,
    started: Callable[[], None] | None,
    limits: Limits | None = None,
) -> RunResult:
    from ama.hooks import run_hooks

    record = RunRecord(prompt=text, model=agent.model.ref)
    agent.ensure_started()
    agent.session.append_custom(RUN_TYPE, record.to_data())  # CREATED, before anything can refuse the run
    extra = ""
    from ama.agent import cache_care

    cache_care.on_busy(agent)  # no keep-warm while working
    if agent.hooks:
        outcome = await run_hooks(
            "UserPromptSubmit", {"sessionId": agent.session.id, "prompt": text}, agent.hooks, cwd=agent.cwd
        )
        agent.emit_hook_records(outcome)
        if outcome.blocked:
            from ama.agent.runs import refuse

            raise refuse(agent, record, f"the UserPromptSubmit hook blocked this prompt: {outcome.reason or 'no reason given'}")
        extra = outcome.additional_context
    agent.emit(event("before_agent_start", prompt=text))
    agent.emit(event("agent_start"))
    agent.emit(event("turn_start"))
    if started is not None:
        started()
    for note in agent.pending_notes:
        agent.session.append_custom_message("ama.rewind-note", note, display=False)
    agent.pending_notes.clear()
    from ama.agent.reminders import before_prompt

    before_prompt(agent)  # ama.reminder entry (agent/reminders.py)
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
        result = await run_loop(agent, record, limits)
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
        cache_care.on_idle(agent)  # keep-warm, when cache.warm is on
    return result


__all__ = ["RunResult", "now_iso", "run_prompt", "user_message"]
