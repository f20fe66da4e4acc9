"""Summary requests for a compaction, never a dead end (docs/compaction.md "Summary request").

A compaction summarizes a transcript of the older conversation.  When that transcript does
not fit one summary request of the summarizing model, it is summarized **in parts**: split
at message boundaries into pieces that fit, then summarized oldest first, each request
getting the summary so far plus the next piece ("rolling" summary).  The last summary is
the compaction's; the usage of every part is added up.  Nothing of the history is dropped
to make it fit (a single message longer than a part is cut into part-sized pieces).

The summarizing model is ``compaction.model`` when configured (e.g. a cheaper model with a
large window), else the session's model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ama.errors import AmaError
from ama.messages import Cost, TextContent, Usage, UserMessage

if TYPE_CHECKING:
    from ama.agent.session import AgentSession
    from ama.ai.types import Model

SUMMARY_MAX_TOKENS = 8_192
EARLIER = "[Summary of the earlier conversation]\n"


def summary_model(agent: AgentSession) -> Model:
    """The model given for this session (``context_state.summary_model``), else
    ``compaction.model`` (provider/id) when set, else the session's model."""
    if agent.context_state.summary_model is not None:
        return agent.context_state.summary_model
    ref = agent.config.get("compaction.model") if agent.config is not None else None
    if isinstance(ref, str) and ref.strip():
        return agent.registry.get(ref.strip())
    return agent.model


def part_chars(model: Model) -> int:
    """Characters of transcript one summary request of ``model`` can take (~3 characters a
    token, with the reply and the instructions left out of the window)."""
    reply = min(model.max_tokens, SUMMARY_MAX_TOKENS)
    return max(4000, (model.context_window - reply - 2000) * 3)


def split_parts(head: str, blocks: list[str], limit_chars: int) -> list[str]:
    """``blocks`` (transcript messages, oldest first) grouped into parts that each fit
    ``limit_chars`` next to a summary as long as ``head`` (the summary so far)."""
    room = max(1000, limit_chars - max(len(head), min(SUMMARY_MAX_TOKENS * 4, limit_chars // 2)))
    parts: list[str] = []
    cur: list[str] = []
    size = 0
    for b in blocks:
        pieces = [b[i : i + room] for i in range(0, len(b), room)] or [""]
        for p in pieces:
            if cur and size + len(p) + 2 > room:
                parts.append("\n\n".join(cur))
                cur, size = [], 0
            cur.append(p)
            size += len(p) + 2
    if cur:
        parts.append("\n\n".join(cur))
    return parts


def _add(total: Usage, u: Usage) -> Usage:
    cost: Any = total.cost
    if isinstance(u.cost, Cost):
        base = cost if isinstance(cost, Cost) else Cost()
        cost = Cost(
            input=base.input + u.cost.input,
            output=base.output + u.cost.output,
            cache_read=base.cache_read + u.cost.cache_read,
            cache_write=base.cache_write + u.cost.cache_write,
            total=base.total + u.cost.total,
        )
    return Usage(
        input=total.input + u.input,
        output=total.output + u.output,
        cache_read=total.cache_read + u.cache_read,
        cache_write=total.cache_write + u.cache_write,
        total_tokens=total.total_tokens + u.total_tokens,
        cost=cost,
    )


async def _request(agent: AgentSession, model: Model, system: str, transcript: str, focus: str | None, part: str | None) -> tuple[str, Usage]:
    from ama.ai import Context, StreamOptions, complete

    body = f"Summarize this coding-agent conversation.\n\n<conversation>\n{transcript}\n</conversation>"
    if part:
        body += f"\n\nThis is part {part} of the conversation: merge it into the earlier summary; keep what still matters."
    if focus:
        body += f"\n\nFocus the summary on: {focus}"
    request: dict[str, Any] = {}
    ctx = Context(system_prompt=system, messages=[UserMessage(content=body)], tools=[])
    opts = StreamOptions(
        api_key=agent.registry.api_key(model),
        abort=agent.abort_event,
        on_request=request.update,
        session_id=agent.session.id,
        max_tokens=min(model.max_tokens, SUMMARY_MAX_TOKENS),
    )
    msg = await complete(model, ctx, opts)
    if request:
        extra = {"part": part} if part else {}
        agent.session.append_custom("ama.request", {"purpose": "compaction", **request, "attempt": 1, **extra})
    if msg.stop_reason == "aborted" or agent.abort_event.is_set():
        raise AmaError("aborted", "the compaction was aborted")
    if msg.stop_reason == "error":
        raise AmaError("summary_failed", f"the summary request failed: {msg.error_message or 'error'}")
    text = "".join(b.text for b in msg.content if isinstance(b, TextContent)).strip()
    if not text:
        raise AmaError("summary_failed", "the model returned an empty summary")
    return text, msg.usage


async def summarize(agent: AgentSession, system: str, head: str, blocks: list[str], focus: str | None) -> tuple[str, Usage, int]:
    """(summary text, usage of all its requests, number of parts) of ``head`` (the earlier
    summary, already a transcript block) followed by ``blocks``."""
    model = summary_model(agent)
    limit = part_chars(model)
    whole = "\n\n".join([head, *blocks] if head else blocks)
    if len(whole) <= limit:
        text, usage = await _request(agent, model, system, whole, focus, None)
        return text, usage, 1
    parts = split_parts(head, blocks, limit)
    summary_block = head
    total = Usage()
    text = ""
    for k, part in enumerate(parts, 1):
        transcript = f"{summary_block}\n\n{part}" if summary_block else part
        text, usage = await _request(agent, model, system, transcript, focus, f"{k}/{len(parts)}")
        total = _add(total, usage)
        summary_block = EARLIER + text
    return text, total, len(parts)


__all__ = ["SUMMARY_MAX_TOKENS", "part_chars", "split_parts", "summarize", "summary_model"]
