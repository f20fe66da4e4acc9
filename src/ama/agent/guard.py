"""Run guards (SPEC D13): one budget and one loop guard for every kind of run.

``Limits`` is the typed set of budgets (turns, cost in USD, tokens, wall time in seconds; in
agent/limits.py, re-exported here); the CLI (``--max-*``), the config (``limits.*``), RPC
``prompt`` options and the SDK all produce one, and ``RunGuard`` enforces it inside the run
loop, fail closed:

- before every model call, a limit already reached stops the run (no call is made past
  it); the wall-time limit is also a timer that interrupts a model call or tool in flight;
- each kind is reported once per run as ``limit_reached{kind, value, limit}``.

The repeated-call guard counts calls by tool name and arguments within one run: the 3rd
identical call gets a reminder for the model, the 5th is not run and ends the run.  Tools
whose repetition is expected (polling ``bash_output``) opt out with ``repeat_ok = True``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from ama.agent.limits import Limits
from ama.messages import AssistantMessage, ToolCall

REPEAT_REMIND = 3
REPEAT_STOP = 5
#: tools that may be called again with the same arguments (polling is not a loop)
REPEAT_OK_TOOLS = frozenset({"bash_output"})
#: limit kinds, in the order they are checked
KINDS = ("turns", "cost", "tokens", "wallTime")


def call_key(call: ToolCall) -> str:
    args = call.arguments if isinstance(call.arguments, dict) else call.arguments
    return f"{call.name}({json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)})"


def describe_call(call: ToolCall, width: int = 160) -> str:
    key = call_key(call)
    return key if len(key) <= width else key[: width - 1] + "…"


@dataclass
class LimitHit:
    kind: str
    value: float | int
    limit: float | int

    def to_data(self) -> dict[str, Any]:
        value = round(self.value, 6) if isinstance(self.value, float) else self.value
        return {"kind": self.kind, "value": value, "limit": self.limit}


@dataclass
class RunGuard:
    """The budget and loop counters of one run."""

    limits: Limits
    clock: Any = time.monotonic
    started: float = 0.0
    turns: int = 0
    cost: float = 0.0
    tokens: int = 0
    reported: set[str] = field(default_factory=set)
    calls: dict[str, int] = field(default_factory=dict)
    #: set when the wall-time timer fired (the run was interrupted by the budget, not the user)
    wall_time_expired: bool = False
    #: False once the run ended: sub-agents' usage then counts against the next run
    open: bool = True
    #: sub-agents' usage charged since the last check (carried over if the run ends first)
    unchecked_cost: float = 0.0
    unchecked_tokens: int = 0

    def __post_init__(self) -> None:
        self.started = self.clock()

    # --- budgets ----------------------------------------------------------------------

    def add_usage(self, message: AssistantMessage) -> None:
        usage = message.usage
        if usage is None:
            return
        cost = getattr(usage, "cost", None)
        if cost is not None:
            self.cost += float(getattr(cost, "total", 0) or 0)
        total = int(getattr(usage, "total_tokens", 0) or 0)
        if not total:
            total = sum(int(getattr(usage, k, 0) or 0) for k in ("input", "output", "cache_read", "cache_write"))
        self.tokens += total

    def charge(self, cost: float, tokens: int) -> None:
        """Usage made outside the run's own model calls (a sub-agent's request): it counts
        against the budget at the next check."""
        self.cost += cost
        self.tokens += tokens
        self.unchecked_cost += cost
        self.unchecked_tokens += tokens

    def close(self) -> tuple[float, int]:
        """The run ended: returns the charged usage no check has seen (it belongs to the next run)."""
        self.open = False
        left = (self.unchecked_cost, self.unchecked_tokens)
        self.unchecked_cost, self.unchecked_tokens = 0.0, 0
        return left

    def elapsed(self) -> float:
        return self.clock() - self.started

    def value_of(self, kind: str) -> float | int:
        return {"turns": self.turns, "cost": self.cost, "tokens": self.tokens, "wallTime": round(self.elapsed(), 3)}[kind]

    def exceeded(self) -> LimitHit | None:
        """The first limit reached (checked before each model call), else None."""
        self.unchecked_cost, self.unchecked_tokens = 0.0, 0  # this check sees every charge so far
        for kind in KINDS:
            limit = self.limits.limit_for(kind)
            if limit is None:
                continue
            value = self.value_of(kind)
            if value >= limit or (kind == "wallTime" and self.wall_time_expired):
                return LimitHit(kind, value, limit)
        return None

    def first_report(self, hit: LimitHit) -> bool:
        """True the first time ``hit.kind`` is reported in this run."""
        if hit.kind in self.reported:
            return False
        self.reported.add(hit.kind)
        return True

    def wall_time_left(self) -> float | None:
        if self.limits.max_wall_time is None:
            return None
        return max(0.0, self.limits.max_wall_time - self.elapsed())

    def may_continue(self) -> bool:
        """For a Stop hook asking to go on: only while no limit is reached."""
        return self.exceeded() is None

    # --- repeated calls ---------------------------------------------------------------

    def note_call(self, call: ToolCall, tool: Any = None) -> int:
        """Count ``call``; returns how many times this exact call was made in the run
        (0 for tools that opt out)."""
        if call.name in REPEAT_OK_TOOLS or getattr(tool, "repeat_ok", False):
            return 0
        key = call_key(call)
        self.calls[key] = self.calls.get(key, 0) + 1
        return self.calls[key]


def repeat_reminder(call: ToolCall, count: int) -> str:
    return (
        f"You have now made the same call {count} times in this run: {describe_call(call)}. "
        "Repeating it will not give a different result. Change your approach (different "
        f"arguments, another tool, or ask the user); at the {REPEAT_STOP}th identical call the run is stopped."
    )


def repeat_stop_message(call: ToolCall) -> str:
    return f"stopped: the model made the same tool call {REPEAT_STOP} times in this run: {describe_call(call)}"


def guard_notice(ev: dict[str, Any]) -> str | None:
    """The one-line text the terminal shows for a guard event, else None."""
    t = ev.get("type")
    if t == "limit_reached":
        units = {"cost": "USD", "tokens": "tokens", "turns": "turns", "wallTime": "s"}.get(ev.get("kind", ""), "")
        return f"limit reached: {ev.get('kind')} {ev.get('value')} of {ev.get('limit')} {units}; the run stops here"
    if t == "model_fallback":
        src, dst = ev.get("from") or {}, ev.get("to") or {}
        return (
            f"{src.get('provider')}/{src.get('id')} failed ({ev.get('reason')}); "
            f"answering this request with the fallback {dst.get('provider')}/{dst.get('id')}"
        )
    return None


__all__ = ["KINDS", "LimitHit", "Limits", "REPEAT_REMIND", "REPEAT_STOP", "RunGuard", "call_key", "guard_notice", "repeat_reminder"]
