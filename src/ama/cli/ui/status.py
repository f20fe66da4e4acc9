"""The status line while the model works and the footer under the input.

- status: ``⠋ Working… 4s · ↓ 120 tokens · Esc to interrupt`` (the token count is the
  streamed text estimated at 4 characters per token until the reply reports its usage);
- footer: ``model · permissions MODE · context 12% · $0.0123`` (context use from
  ``agent/compaction.context_size`` against the model's window; the session cost summed
  over the assistant messages of the active branch).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ama.cli.ui.glyphs import G

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
ASCII_SPINNER = "|/-\\"


def elapsed_text(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 60}m {s % 60:02d}s" if s >= 60 else f"{s}s"


@dataclass
class Status:
    """What the spinner line shows during a run."""

    started: float = field(default_factory=time.monotonic)
    chars: int = 0  # streamed text and thinking of this run
    tokens: int = 0  # output tokens reported by finished replies of this run
    label: str = "Working…"
    ascii: bool = False

    def streamed_tokens(self) -> int:
        return self.tokens + self.chars // 4

    def line(self, now: float | None = None) -> str:
        now = time.monotonic() if now is None else now
        frames = ASCII_SPINNER if self.ascii else G.spinner
        frame = frames[int((now - self.started) * 10) % len(frames)]
        return (
            f"{frame} {self.label} {elapsed_text(now - self.started)} · ↓ {self.streamed_tokens()} tokens"
            " · Esc to interrupt"
        )


def session_cost(agent: Any) -> float | None:
    """The cost of the assistant replies on the active branch (None: no model priced)."""
    from ama.messages import AssistantMessage, Cost

    total = 0.0
    priced = False
    for e in agent.session.branch():
        m = getattr(e, "message", None)
        cost = m.usage.cost if isinstance(m, AssistantMessage) else None
        if isinstance(cost, Cost):
            priced = True
            total += cost.total
    return total if priced else None


def context_percent(agent: Any) -> float | None:
    from ama.agent.compaction import context_size

    window = agent.model.context_window
    if not window:
        return None
    try:
        return context_size(agent).tokens * 100 / window
    except Exception:  # a damaged branch must not break the prompt
        return None


#: the longest model ref the footer shows whole: a longer one (a scripted model's file path)
#: keeps its provider and its end, so the permission mode after it stays on screen
MODEL_REF_CHARS = 40


def short_ref(ref: str, limit: int = MODEL_REF_CHARS) -> str:
    if len(ref) <= limit:
        return ref
    provider, _, rest = ref.partition("/")
    keep = max(8, limit - len(provider) - 2)
    return f"{provider}/…{rest[-keep:]}"


def footer(agent: Any, percent: float | None, cost: float | None) -> str:
    parts = [short_ref(agent.model.ref), f"permissions {agent.permissions.mode}"]
    if percent is not None:
        parts.append(f"context {percent:.0f}%")
    if cost is not None:
        parts.append(f"${cost:.4f}")
    meter = getattr(agent, "telemetry", None)  # TTFT and rates (agent/telemetry.py)
    if meter is not None:
        from ama.agent.telemetry import format_footer

        try:
            rate = format_footer(meter.snapshot())
        except Exception:  # the footer never breaks the prompt
            rate = ""
        if rate:
            parts.append(rate)
    return " · ".join(parts)
