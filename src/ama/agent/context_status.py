"""What an interface shows about the context: the one-line compaction notice and the data of
a status line (docs/compaction.md "Notices and the status line").

    compaction_notice(result)  # "Compacted 142k → 18k tokens; kept the last 6 turns; `/context` shows the summary"
    context_status(agent)      # ContextStatus(tokens, contextWindow, percent, remainingTokens, ...)

Both are plain functions over data the agent already has: the notice over a
``CompactionResult`` (``compaction_end.result``, RPC ``compact``), the status over
``AgentSession.context_state`` as updated before every model request (the same numbers as
the latest ``context_pressure`` check), so a status line costs nothing per keystroke.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ama.agent.session import AgentSession


def short_tokens(n: int) -> str:
    """142,310 -> "142k"; 1,499 -> "1.5k"; 980 -> "980"."""
    if n >= 10_000:
        return f"{round(n / 1000)}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return str(n)


def compaction_notice(result: dict[str, Any]) -> str:
    """The one line to show after a compaction."""
    before, after = int(result.get("tokensBefore") or 0), int(result.get("tokensAfter") or 0)
    turns = result.get("keptTurns")
    if turns is None or turns < 0:
        kept = "kept the newest messages"
    elif turns == 0:
        kept = "kept only the turn in progress"
    else:
        kept = f"kept the last {turns} turn{'s' if turns != 1 else ''}"
    return f"Compacted {short_tokens(before)} → {short_tokens(after)} tokens; {kept}; `/context` shows the summary"


@dataclass(frozen=True)
class ContextStatus:
    tokens: int  # the size of the latest request measured before sending it
    contextWindow: int
    percent: float
    remainingTokens: int
    #: 0, 70 or 90: the ``context_pressure`` level last reported
    level: int
    estimatedTurnsLeft: int | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def context_status(agent: AgentSession) -> ContextStatus | None:
    """The context as of the latest model request (None before the first one)."""
    st = agent.context_state
    if st.last_tokens is None:
        return None
    window = agent.model.context_window
    tokens = st.last_tokens
    remaining = max(0, window - tokens)
    turns = int(remaining // st.growth) if st.growth > 0 else None
    percent = round(tokens * 100 / window, 1) if window > 0 else 0.0
    return ContextStatus(tokens, window, percent, remaining, st.pressure_level, turns)


__all__ = ["ContextStatus", "compaction_notice", "context_status", "short_tokens"]
