"""Token usage and cost of one ``session/prompt``, for its response: ``usage`` (ACP's
``Usage``: the run's assistant messages summed) and ``_meta.cost {amount, currency: "USD"}``
when any of them has a price. ama as an external agent (``acp:ama``) reports its usage to
the ama that runs it this way (docs/external-agents.md)."""

from __future__ import annotations

from typing import Any

from ama.messages import AssistantMessage


def mark(session: Any) -> int:
    """Where the next run's entries will start."""
    return len(session.entries) if session is not None else 0


def usage_since(session: Any, start: int) -> dict[str, Any] | None:
    """``{usage, _meta?}`` fields of a prompt response for the entries after ``start``;
    None when the run made no model request or its requests reported no usage."""
    if session is None:
        return None
    inp = out = cr = cw = 0
    cost: float | None = None
    seen = False
    for e in session.entries[start:]:
        if e.type != "message" or not isinstance(e.message, AssistantMessage):
            continue
        seen = True
        u = e.message.usage
        inp, out, cr, cw = inp + u.input, out + u.output, cr + u.cache_read, cw + u.cache_write
        total = getattr(u.cost, "total", None)
        if isinstance(total, int | float) and total:
            cost = (cost or 0.0) + float(total)
    if not seen or (inp + out + cr + cw == 0 and cost is None):
        return None  # nothing reported (a scripted model, a provider without usage)
    fields: dict[str, Any] = {
        "usage": {
            "totalTokens": inp + out + cr + cw,
            "inputTokens": inp,
            "outputTokens": out,
            "cachedReadTokens": cr,
            "cachedWriteTokens": cw,
        }
    }
    if cost is not None:
        fields["_meta"] = {"cost": {"amount": round(cost, 10), "currency": "USD"}}
    return fields
