"""Token accounting: how big the next request's context is, and how much room the model has.

One module owns this for every tier (SPEC D10): the threshold check before a request,
the cut point of a compaction, and the numbers of ``compaction_end``.

The size of the next request is the last usable response's usage (input + cache read +
cache write + output: everything the provider counted for that request plus the reply
itself, which the next request resends) plus an estimate of every context message that
came after that response.  A response is usable when it ended normally (not ``error`` /
``aborted``), reported a non-zero usage and was written after the latest ``compaction``
on the branch (kept entries carry the usage of the pre-compaction context).  Without
such a response the whole context, tool definitions included, is estimated.

The estimator (documented in docs/compaction.md) is deliberately pessimistic:

* text, thinking, tool-call names and arguments (as JSON), tool results, summaries:
  ``ceil(characters / 4)`` (``CHARS_PER_TOKEN``);
* an image: ``IMAGE_TOKENS`` (1,600: Anthropic's cap for an image scaled to ~1.15
  megapixels; OpenAI's high-detail tiles land below it);
* every message: ``MESSAGE_OVERHEAD`` (4) for the role and framing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ama.messages import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    ContextMessage,
    CustomMessage,
    ImageContent,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ama.session.entries import AnyEntry, CompactionEntry, ContextEditEntry, MessageEntry

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1600
MESSAGE_OVERHEAD = 4


def _chars(n: int) -> int:
    return -(-n // CHARS_PER_TOKEN)


def _block_tokens(block: Any) -> int:
    if isinstance(block, TextContent):
        return _chars(len(block.text))
    if isinstance(block, ImageContent):
        return IMAGE_TOKENS
    if isinstance(block, ThinkingContent):
        return _chars(len(block.thinking))
    if isinstance(block, ToolCall):
        return _chars(len(block.name) + len(json.dumps(block.arguments, ensure_ascii=False)))
    if isinstance(block, str):
        return _chars(len(block))
    return 0


def _content_tokens(content: Any) -> int:
    if isinstance(content, str):
        return _chars(len(content))
    if isinstance(content, list):
        return sum(_block_tokens(b) for b in content)
    return 0


def estimate_message(msg: ContextMessage) -> int:
    """Estimated tokens of one context message (see the module docstring)."""
    if isinstance(msg, UserMessage | SystemMessage | CustomMessage | ToolResultMessage | AssistantMessage):
        n = _content_tokens(msg.content)
        if isinstance(msg, ToolResultMessage):
            n += _chars(len(msg.tool_name))
        return n + MESSAGE_OVERHEAD
    if isinstance(msg, CompactionSummaryMessage | BranchSummaryMessage):
        return _chars(len(msg.summary)) + MESSAGE_OVERHEAD
    if isinstance(msg, BashExecutionMessage):
        return _chars(len(msg.command) + len(msg.output)) + MESSAGE_OVERHEAD
    return MESSAGE_OVERHEAD


def estimate_entry(entry: AnyEntry) -> int:
    """Estimated tokens an entry adds to the context (0 for entries that stay out)."""
    from ama.session.projection import _to_message

    m = _to_message(entry)
    return 0 if m is None else estimate_message(m)


def estimate_tools(tools: list[Any]) -> int:
    """Tool definitions (``ToolSpec`` objects or dicts with name/description/parameters)."""
    total = 0
    for t in tools:
        name = getattr(t, "name", None) or (t.get("name") if isinstance(t, dict) else "")
        desc = getattr(t, "description", None) or (t.get("description") if isinstance(t, dict) else "")
        params = getattr(t, "parameters", None) or (t.get("parameters") if isinstance(t, dict) else {})
        total += _chars(len(name or "") + len(desc or "") + len(json.dumps(params or {}))) + MESSAGE_OVERHEAD
    return total


def usage_tokens(msg: AssistantMessage) -> int:
    u = msg.usage
    return u.input + u.cache_read + u.cache_write + u.output


@dataclass
class ContextSize:
    tokens: int  # the estimated size of the next request
    from_usage: int  # the part known from the last usable response (0: all estimated)
    estimated: int  # the part estimated (messages after that response, or everything)


def measure(branch: list[AnyEntry], messages: list[ContextMessage], entry_ids: list[tuple[str, ...]], tools: list[Any]) -> ContextSize:
    """The size of the next request built from ``messages`` (the projection of ``branch``)."""
    compaction_at = -1
    for i, e in enumerate(branch):
        if isinstance(e, CompactionEntry):
            compaction_at = i
    anchor_id: str | None = None
    anchor_tokens = 0
    anchor_at = -1
    for k in range(len(branch) - 1, compaction_at, -1):
        e = branch[k]
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage):
            am = e.message
            if am.stop_reason not in ("error", "aborted") and usage_tokens(am) > 0:
                anchor_id, anchor_tokens, anchor_at = e.id, usage_tokens(am), k
                break
    if anchor_id is not None:
        anchor_tokens = max(0, anchor_tokens - _edited_since(branch, anchor_at))
    start = 0
    if anchor_id is not None:
        for i, ids in enumerate(entry_ids):
            if anchor_id in ids:
                start = i + 1
                break
        else:
            anchor_id, anchor_tokens = None, 0  # the response was edited out of the context
    rest = sum(estimate_message(m) for m in messages[start:])
    if anchor_id is None:
        rest += estimate_tools(tools)
    return ContextSize(anchor_tokens + rest, anchor_tokens, rest)


def _edited_since(branch: list[AnyEntry], anchor_at: int) -> int:
    """Tokens that ``context_edit`` entries written after the anchor response took out of
    messages the anchor's usage still counts (a prune batch, an image budget)."""
    edits = [e for e in branch[anchor_at + 1 :] if isinstance(e, ContextEditEntry)]
    if not edits:
        return 0
    before = {e.id: e for e in branch[: anchor_at + 1]}
    saved = 0
    for ed in edits:
        target = before.get(ed.target_id)
        if target is None:
            continue
        old = estimate_entry(target)
        new = 0 if ed.replacement is None else _chars(len(ed.replacement)) + MESSAGE_OVERHEAD
        saved += max(0, old - new)
    return saved


@dataclass(frozen=True)
class Window:
    """The model's limits (from the model registry) and the configured headroom."""

    context_window: int
    max_tokens: int
    threshold: float
    reserve_tokens: int

    @property
    def limit(self) -> int:
        """Compact when the next request would be larger than this: the smaller of
        ``threshold × window`` and ``window − reserveTokens`` (the latter only when it
        leaves at least half the window, so a small window is not compacted constantly)."""
        by_fraction = int(self.context_window * self.threshold)
        by_reserve = self.context_window - self.reserve_tokens
        if by_reserve >= self.context_window // 2:
            return min(by_fraction, by_reserve)
        return by_fraction


__all__ = [
    "CHARS_PER_TOKEN",
    "IMAGE_TOKENS",
    "MESSAGE_OVERHEAD",
    "ContextSize",
    "Window",
    "estimate_entry",
    "estimate_message",
    "estimate_tools",
    "measure",
    "usage_tokens",
]
