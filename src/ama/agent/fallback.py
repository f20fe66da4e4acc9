"""Model fallback (``fallbackModel`` / ``--fallback-model``).

When the main model is overloaded (HTTP 529 / 503, Anthropic ``overloaded_error``), or a
retryable error is still there after the last retry, the same request is sent once to the
fallback model.  The switch is never silent: ``model_fallback{from, to, reason}`` and two
``model_changed`` events (to the fallback and back), and two ``model_change`` entries in the
session, one before the fallback's request and one after its reply.  The next request is on
the main model again.  A fallback that fails too ends the run with both errors named.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ama.agent.events import event
from ama.messages import AssistantMessage

if TYPE_CHECKING:
    from ama.agent.session import AgentSession

OVERLOADED_STATUS = frozenset({503, 529})
FALLBACK_TYPE = "ama.fallback"

Attempt = Callable[[], Awaitable[tuple[AssistantMessage, Any]]]


def is_overloaded(error: Any) -> bool:
    return getattr(error, "code", None) == "overloaded" or getattr(error, "http_status", None) in OVERLOADED_STATUS


def should_fall_back(agent: AgentSession, error: Any, attempt: int) -> bool:
    """A retryable failure of the main model that the fallback should answer now."""
    fb = getattr(agent, "fallback_model", None)
    if fb is None or fb.ref == agent.model.ref or agent.abort_event.is_set():
        return False
    if not getattr(error, "retryable", False):
        return False
    return is_overloaded(error) or attempt >= agent.max_attempts


def error_text(message: AssistantMessage, error: Any) -> str:
    return message.error_message if isinstance(message.error_message, str) else str(error)


def _model_json(model: Any) -> dict[str, Any]:
    out = {"provider": model.provider, "id": model.id}
    if getattr(model, "channel", None):
        out["channel"] = model.channel
    return out


def _switch(agent: AgentSession, model: Any) -> None:
    agent.model = model
    if agent.session.entries:
        agent.session.append_model_change(model.provider, model.id, model.channel)
    agent.emit(event("model_changed", model=agent.model_json()))


async def answer_with_fallback(
    agent: AgentSession, failed: AssistantMessage, error: Any, attempt: Attempt
) -> tuple[AssistantMessage, Any]:
    """Send the failed request once to the fallback model; returns its reply and error."""
    main = agent.model
    fb = agent.fallback_model
    reason = error_text(failed, error)
    agent.emit(event("model_fallback", **{"from": _model_json(main), "to": _model_json(fb), "reason": reason}))
    agent.session.append_custom(
        FALLBACK_TYPE, {"from": main.ref, "to": fb.ref, "reason": reason[:500], "errorCode": getattr(error, "code", None)}
    )
    _switch(agent, fb)
    try:
        final, fb_error = await attempt()
    finally:
        _switch(agent, main)
    return final, fb_error


def both_errors(main_ref: str, main_reason: str, fb_ref: str, fb_message: AssistantMessage, fb_error: Any) -> str:
    return f"{main_ref}: {main_reason}; fallback {fb_ref}: {error_text(fb_message, fb_error)}"


__all__ = ["FALLBACK_TYPE", "answer_with_fallback", "both_errors", "is_overloaded", "should_fall_back"]
