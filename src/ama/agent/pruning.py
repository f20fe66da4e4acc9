"""Tier 1 of context management (SPEC D10, docs/compaction.md "Pruning"): no model call.

Two kinds of ``context_edit`` that shrink the next request without a summary:

* ``prune``: large tool results outside the recent window are replaced by a one-line
  placeholder.  They are pruned in **batches**: nothing happens until the next request
  passes half the compaction limit *and* the results that could go are worth at least
  ``compaction.pruneMinTokens``; then all of them go at once.  The prefix of the request
  changes once per batch and stays byte-identical afterwards, so the prompt cache is
  broken once, not on every turn (a result leaving the recent window does not trigger an
  edit by itself).
* ``image_budget``: when one request would carry more than ``compaction.imageBudget``
  images or ``compaction.imageBudgetBytes`` bytes of (base64) image data, the oldest
  images are replaced by a placeholder until the request holds at most **half** of each
  budget (again: one prefix change per batch, not one per new image).  This one runs even
  with compaction off: a provider refuses such a request outright.

The decision is a plain function over the projected context (``plan_prune``,
``plan_image_budget``); ``prune_context`` applies it before a model request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ama.agent.context_budget import _chars, estimate_message
from ama.messages import (
    ContextMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    ToolResultMessage,
    UserMessage,
)

if TYPE_CHECKING:
    from ama.agent.session import AgentSession

DEFAULTS: dict[str, Any] = {
    "prune": True,
    "pruneKeepTokens": 40_000,
    "pruneMinTokens": 20_000,
    "imageBudget": 20,
    "imageBudgetBytes": 20 * 1024 * 1024,
}
#: a tool result smaller than this (estimated tokens) is never pruned: the placeholder
#: would save almost nothing and the model would lose the detail
LARGE_RESULT_TOKENS = 500
PRUNED_TEXT = "[{tool} result pruned from the context ({chars:,} characters); call the tool again if you need it]"
IMAGE_TEXT = "[image removed from the context: the request's image budget was reached]"


@dataclass(frozen=True)
class PruneSettings:
    enabled: bool
    keep_tokens: int
    min_tokens: int
    image_budget: int
    image_budget_bytes: int


def prune_settings(config: Any) -> PruneSettings:
    def get(key: str) -> Any:
        value = config.get(f"compaction.{key}") if config is not None else None
        return DEFAULTS[key] if value is None else value

    on = bool(get("prune")) and (config is None or config.get("compaction.enabled") is not False)
    return PruneSettings(
        on,
        max(0, int(get("pruneKeepTokens"))),
        max(1, int(get("pruneMinTokens"))),
        max(0, int(get("imageBudget"))),
        max(0, int(get("imageBudgetBytes"))),
    )


@dataclass(frozen=True)
class Edit:
    """One ``context_edit`` to append: target entry, replacement text, reason."""

    target_id: str
    replacement: str
    reason: str
    saved_tokens: int


def _result_text(m: ToolResultMessage) -> str:
    return "".join(b.text for b in m.content if isinstance(b, TextContent))


def plan_prune(messages: list[ContextMessage], entry_ids: list[tuple[str, ...]], s: PruneSettings) -> list[Edit]:
    """The ``prune`` edits of one batch (empty: not worth a prefix change yet).  The newest
    ``keep_tokens`` of the context are protected; older tool results of at least
    ``LARGE_RESULT_TOKENS`` are candidates; the batch happens only when the candidates
    together save at least ``min_tokens``."""
    if not s.enabled:
        return []
    acc = 0
    protected_from = len(messages)
    for i in range(len(messages) - 1, -1, -1):
        acc += estimate_message(messages[i])
        if acc > s.keep_tokens:
            break
        protected_from = i
    edits: list[Edit] = []
    saved = 0
    for i in range(protected_from):
        m = messages[i]
        if not isinstance(m, ToolResultMessage) or len(entry_ids[i]) != 1:
            continue
        tokens = estimate_message(m)
        if tokens < LARGE_RESULT_TOKENS:
            continue
        chars = len(_result_text(m)) + sum(len(b.data) for b in m.content if isinstance(b, ImageContent))
        text = PRUNED_TEXT.format(tool=m.tool_name or "tool", chars=chars)
        gain = tokens - (_chars(len(text)) + _chars(len(m.tool_name)) + 4)
        if gain <= 0:
            continue
        edits.append(Edit(entry_ids[i][0], text, "prune", gain))
        saved += gain
    return edits if saved >= s.min_tokens else []


def _images(m: ContextMessage) -> list[ImageContent]:
    content = getattr(m, "content", None)
    if not isinstance(m, UserMessage | ToolResultMessage | CustomMessage) or not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, ImageContent)]


def _without_images(m: ContextMessage) -> str:
    parts: list[str] = []
    for b in getattr(m, "content", []):
        if isinstance(b, TextContent):
            parts.append(b.text)
        elif isinstance(b, ImageContent):
            parts.append(IMAGE_TEXT)
    return "\n".join(parts)


def plan_image_budget(messages: list[ContextMessage], entry_ids: list[tuple[str, ...]], s: PruneSettings) -> list[Edit]:
    """``image_budget`` edits when the request's images pass a budget: the messages with
    the oldest images lose them (text kept) until at most half of each budget is left."""
    per = [(i, _images(m)) for i, m in enumerate(messages)]
    per = [(i, imgs) for i, imgs in per if imgs and len(entry_ids[i]) == 1]
    count = sum(len(imgs) for _, imgs in per)
    size = sum(len(b.data) for _, imgs in per for b in imgs)
    over_count = s.image_budget > 0 and count > s.image_budget
    over_bytes = s.image_budget_bytes > 0 and size > s.image_budget_bytes
    if not (over_count or over_bytes):
        return []
    edits: list[Edit] = []
    for i, imgs in per:
        count_ok = s.image_budget <= 0 or count <= s.image_budget // 2
        bytes_ok = s.image_budget_bytes <= 0 or size <= s.image_budget_bytes // 2
        if count_ok and bytes_ok:
            break
        m = messages[i]
        text = _without_images(m)
        edits.append(Edit(entry_ids[i][0], text, "image_budget", max(0, estimate_message(m) - _chars(len(text)))))
        count -= len(imgs)
        size -= sum(len(b.data) for b in imgs)
    return edits


def prune_context(agent: AgentSession, tokens: int, limit: int) -> int:
    """Before a model request: apply the image budget, and a prune batch when the next
    request (``tokens``) passes half of the compaction ``limit``.  Returns the tokens saved
    (0: the context, and so the prefix, is unchanged)."""
    s = prune_settings(agent.config)
    ctx = agent.session.context()
    edits: list[Edit] = []
    if s.enabled and tokens > limit // 2:
        edits += plan_prune(ctx.messages, ctx.entry_ids, s)
    edits += plan_image_budget(ctx.messages, ctx.entry_ids, s)
    seen: set[str] = set()
    saved = 0
    for e in edits:
        if e.target_id in seen:  # pruned already: the placeholder has no image either
            continue
        seen.add(e.target_id)
        agent.session.append_context_edit(e.target_id, e.replacement, e.reason)
        saved += e.saved_tokens
    return saved


__all__ = [
    "DEFAULTS",
    "LARGE_RESULT_TOKENS",
    "Edit",
    "PruneSettings",
    "plan_image_budget",
    "plan_prune",
    "prune_context",
    "prune_settings",
]
