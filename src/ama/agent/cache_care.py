"""Prompt-cache care (docs/compaction.md "Prompt cache"): say when the cache missed, and
optionally keep it warm while the user is idle.

**``cache_miss{missedTokens, missedCost?, reason, detail?, idleMs}``** after a model
response whose request should have read the prompt cache and did not: the endpoint reports
caching (some earlier response had cache read/write tokens) and the response read at least
``MIN_CACHED`` (1,024) tokens and 10 % fewer than the previous request's whole prompt (which
the provider cached after answering it).
``missedTokens`` = previous prompt − cache read; ``missedCost`` = that × (input price −
cache-read price) when the model has prices.  ``reason``, the first that applies:

* ``model_changed`` — another model answered (``detail``: ``old → new``);
* ``prefix_changed`` — the request's prefix differs from the previous request's;
  ``detail`` names the first differing message (index, role, tool, and the
  ``context_edit`` reason when an edit changed it), or says the tool definitions changed;
* ``ttl_expired`` — idle longer than ``cache.ttlSeconds`` since the previous response;
* ``unknown`` — none of these: the provider evicted the entry early.

A compaction or a rewind/navigation since the previous request makes the request a reset
point (rewind-plan §7): no attribution, and a pending keep-warm is dropped.

**Keep-warm** (``cache.warm``, off by default: each warm request costs): when a run has
settled, a minimal request (the same context plus a one-word user note, ``maxTokens`` 1,
thinking off) is sent ``min(30 s, 10 %)`` before the TTL runs out, recorded as
``usage{kind:"cache_warm"}`` (never as messages), with ``cache_warm{phase: scheduled |
sent | stopped, nextWarmAt?, usage?, cost?, reason?}``.  It stops after ``cache.warmMax``
requests in a row (``reason: "max"``), when a prompt starts (``"prompt"``), on an error
(``"error"``), a context change (``"context_changed"``) or when the session closes
(``"closed"``).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ama.agent.events import event, plain
from ama.messages import (
    AssistantMessage,
    CompactionSummaryMessage,
    ContextMessage,
    ToolResultMessage,
    UserMessage,
)
from ama.session.entries import ContextEditEntry

if TYPE_CHECKING:
    from ama.agent.session import AgentSession

MIN_CACHED = 1024  # Anthropic's smallest cacheable prefix; below it a miss means nothing
WARM_TEXT = "(keep-alive request: reply with one word)"


@dataclass
class Snapshot:
    """What the previous request sent, and when its response ended."""

    messages: list[ContextMessage]
    entry_ids: list[tuple[str, ...]]
    tools: tuple[str, ...]
    model: str
    ended_ms: float
    prompt_tokens: int


@dataclass
class CacheState:
    last: Snapshot | None = None
    reports_cache: bool = False
    warms: int = 0
    timer: asyncio.TimerHandle | None = None
    task: asyncio.Task | None = None
    misses: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class CacheSettings:
    ttl_s: float
    warm: bool
    warm_max: int


def cache_settings(config: Any) -> CacheSettings:
    def get(key: str, default: Any) -> Any:
        value = config.get(key) if config is not None else None
        return default if value is None else value

    return CacheSettings(max(0.05, float(get("cache.ttlSeconds", 300))), bool(get("cache.warm", False)), max(0, int(get("cache.warmMax", 3))))


def _now_ms() -> float:
    return time.time() * 1000


def _prompt_tokens(m: AssistantMessage) -> int:
    u = m.usage
    return u.input + u.cache_read + u.cache_write


def _describe(m: ContextMessage) -> str:
    role = type(m).__struct_config__.tag
    if isinstance(m, ToolResultMessage):
        return f"{role} {m.tool_name}".strip()
    return str(role)


def _first_difference(agent: AgentSession, prev: Snapshot, messages: list[ContextMessage], ids: list[tuple[str, ...]], tools: tuple[str, ...]) -> str | None:
    if prev.tools != tools:
        return "the tool definitions changed"
    for k, old in enumerate(prev.messages):
        if k >= len(messages):
            return f"message {k} ({_describe(old)}) is no longer sent"
        if messages[k] != old:
            text = f"message {k} ({_describe(messages[k])}) differs"
            target = ids[k][0] if k < len(ids) and ids[k] else None
            if target is not None:
                reason = next(
                    (e.reason for e in reversed(agent.session.branch()) if isinstance(e, ContextEditEntry) and e.target_id == target),
                    None,
                )
                if reason:
                    text += f": replaced by context_edit{{reason: {reason}}}"
            return text
    return None


def _reset_point(prev: Snapshot, messages: list[ContextMessage], ids: list[tuple[str, ...]]) -> bool:
    """A compaction or a rewind since ``prev``: the prefix changed on purpose."""
    now_ids = {i for t in ids for i in t}
    if prev.entry_ids and prev.entry_ids[-1] and not set(prev.entry_ids[-1]) <= now_ids:
        return True  # the previous request's newest message is not on the branch (rewind, navigation)
    old_ids = {i for t in prev.entry_ids for i in t}
    return any(isinstance(m, CompactionSummaryMessage) and ids[k] and ids[k][0] not in old_ids for k, m in enumerate(messages))


def before_request(agent: AgentSession) -> tuple[list[tuple[str, ...]], float]:
    """Right before a model request: the entry ids of its messages and its start time."""
    return list(agent.session.context().entry_ids), _now_ms()


def _miss_event(
    agent: AgentSession,
    prev: Snapshot,
    messages: list[ContextMessage],
    ids: list[tuple[str, ...]],
    tools: tuple[str, ...],
    cache_read: int,
    started_ms: float,
) -> dict[str, Any]:
    idle = max(0, int(started_ms - prev.ended_ms))
    ttl_ms = cache_settings(agent.config).ttl_s * 1000
    detail: str | None
    if prev.model != agent.model.ref:
        reason, detail = "model_changed", f"{prev.model} → {agent.model.ref}"
    elif (detail := _first_difference(agent, prev, messages, ids, tools)) is not None:
        reason = "prefix_changed"
    elif idle > ttl_ms:
        reason, detail = "ttl_expired", f"idle {idle / 1000:.1f}s > TTL {ttl_ms / 1000:g}s"
    else:
        reason, detail = "unknown", "the provider did not reuse the cached prefix"
    missed = max(0, prev.prompt_tokens - cache_read)
    ev = event("cache_miss", missedTokens=missed, reason=reason, detail=detail, idleMs=idle)
    price = agent.model.cost
    if price is not None:
        ev["missedCost"] = round(missed * (price.input - price.cache_read) / 1_000_000, 6)
    return ev


def after_response(agent: AgentSession, ctx: Any, sent: tuple[list[tuple[str, ...]], float], final: AssistantMessage) -> dict[str, Any] | None:
    """After a model response (``run._attempt``; ``sent`` from ``before_request``): the
    ``cache_miss`` event when one is due."""
    st: CacheState = agent.cache
    if final.stop_reason in ("error", "aborted"):
        return None
    u = final.usage
    if u.cache_read or u.cache_write:
        st.reports_cache = True
    ids, started_ms = sent
    if len(ids) != len(ctx.messages):
        ids = [()] * len(ctx.messages)
    tools = tuple(t.name for t in ctx.tools)
    prev = st.last
    ev = None
    due = (
        prev is not None
        and st.reports_cache
        and prev.prompt_tokens - u.cache_read >= max(MIN_CACHED, prev.prompt_tokens // 10)
    )
    if prev is not None and due and not _reset_point(prev, ctx.messages, ids):
        ev = _miss_event(agent, prev, ctx.messages, ids, tools, u.cache_read, started_ms)
        st.misses.append(ev)
        agent.emit(ev)
    st.last = Snapshot(list(ctx.messages), list(ids), tools, agent.model.ref, _now_ms(), _prompt_tokens(final))
    return ev


# --- keep-warm ---------------------------------------------------------------------------


def _cancel(st: CacheState) -> bool:
    pending = st.timer is not None
    if st.timer is not None:
        st.timer.cancel()
        st.timer = None
    return pending


def stop(agent: AgentSession, reason: str) -> None:
    """Drop a scheduled keep-warm (``cache_warm{phase:"stopped"}`` when one was pending)
    and cancel a warm request still in flight."""
    st: CacheState = agent.cache
    in_flight = st.task is not None and not st.task.done()
    if in_flight and st.task is not None:
        st.task.cancel()
    if _cancel(st) or in_flight:
        agent.emit(event("cache_warm", phase="stopped", reason=reason))


def on_busy(agent: AgentSession) -> None:
    """A run starts: no keep-warm while the session works."""
    stop(agent, "prompt")
    agent.cache.warms = 0


def on_idle(agent: AgentSession) -> None:
    """A run settled: schedule the first keep-warm when ``cache.warm`` is on."""
    st: CacheState = agent.cache
    s = cache_settings(agent.config)
    if not s.warm or s.warm_max <= 0 or st.last is None:
        return
    st.warms = 0
    _schedule(agent, s)


def _schedule(agent: AgentSession, s: CacheSettings) -> None:
    st: CacheState = agent.cache
    _cancel(st)
    assert st.last is not None
    delay_s = max(0.01, s.ttl_s - min(30.0, s.ttl_s * 0.1) - (_now_ms() - st.last.ended_ms) / 1000)
    loop = asyncio.get_running_loop()

    def fire() -> None:
        st.timer = None
        st.task = asyncio.ensure_future(_warm(agent, s))

    st.timer = loop.call_later(delay_s, fire)
    agent.emit(event("cache_warm", phase="scheduled", nextWarmAt=int(_now_ms() + delay_s * 1000)))


async def _warm(agent: AgentSession, s: CacheSettings) -> None:
    from ama.ai import Context, StreamOptions, complete

    st: CacheState = agent.cache
    if agent.busy or st.last is None:
        return
    base = agent.build_context()
    ids = agent.session.context().entry_ids
    if _reset_point(st.last, base.messages, ids) or base.messages[: len(st.last.messages)] != st.last.messages:
        agent.emit(event("cache_warm", phase="stopped", reason="context_changed"))
        return
    ctx = Context(system_prompt=base.system_prompt, messages=[*base.messages, UserMessage(content=WARM_TEXT)], tools=base.tools)
    request: dict[str, Any] = {}
    opts = StreamOptions(
        api_key=agent.registry.api_key(agent.model),
        max_tokens=1,
        on_request=request.update,
        session_id=agent.session.id,
    )
    msg = await complete(agent.model, ctx, opts)
    if request:
        agent.session.append_custom("ama.request", {"purpose": "cache_warm", **request, "attempt": 1})
    if msg.stop_reason == "error":
        agent.emit(event("cache_warm", phase="stopped", reason="error"))
        return
    agent.session.append_usage("cache_warm", agent.model.provider, agent.model.id, msg.usage)
    st.warms += 1
    st.last.ended_ms = _now_ms()
    cost = getattr(msg.usage.cost, "total", None)
    agent.emit(event("cache_warm", phase="sent", usage=plain(msg.usage), cost=cost))
    if st.warms >= s.warm_max:
        agent.emit(event("cache_warm", phase="stopped", reason="max"))
        return
    if not agent.busy:
        _schedule(agent, s)


__all__ = ["CacheSettings", "CacheState", "after_response", "before_request", "cache_settings", "on_busy", "on_idle", "stop"]
