"""The limits of sub-agents, read from ``tasks.*`` (docs/agents.md "Limits").

``maxParallel`` children run at once (more wait their turn), ``maxDepth`` levels of
children (1: a child has no ``task`` tool), ``maxPerSession`` tasks started per session
(continuations do not count), and per-task budgets: turns, cost (USD), wall time (s).
A per-task budget is further capped by what the parent's run has left.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ama.agent.guard import Limits

DEFAULTS = {
    "maxParallel": 4,
    "maxDepth": 1,
    "maxPerSession": 20,
    "maxTurns": 40,
    "maxCost": 2.0,
    "maxWallTime": 1800.0,
}


@dataclass(frozen=True)
class TaskCaps:
    max_parallel: int = 4
    max_depth: int = 1
    max_per_session: int = 20
    max_turns: int | None = 40
    max_cost: float | None = 2.0
    max_wall_time: float | None = 1800.0

    @classmethod
    def from_config(cls, config: Any) -> TaskCaps:
        def get(key: str) -> Any:
            value = config.get(f"tasks.{key}") if config is not None else None
            return DEFAULTS[key] if value is None else value

        return cls(
            max_parallel=max(1, int(get("maxParallel"))),
            max_depth=max(0, int(get("maxDepth"))),
            max_per_session=max(0, int(get("maxPerSession"))),
            max_turns=int(get("maxTurns")) or None,
            max_cost=float(get("maxCost")) or None,
            max_wall_time=float(get("maxWallTime")) or None,
        )

    def limits(self) -> Limits:
        """The per-task budgets as run ``Limits`` (0 in the config: no limit)."""
        return Limits(max_turns=self.max_turns, max_cost=self.max_cost, max_wall_time=self.max_wall_time)


def within_parent(caps: Limits, parent_guard: Any) -> Limits:
    """``caps`` lowered to what the parent's running run (its ``RunGuard``) has left: a
    child's cost, tokens and time count against the parent's budget."""
    if parent_guard is None:
        return caps
    pl = parent_guard.limits
    values: dict[str, Any] = {}
    if pl.max_cost is not None:
        left = max(pl.max_cost - parent_guard.cost, 1e-9)
        values["max_cost"] = left if caps.max_cost is None else min(caps.max_cost, left)
    if pl.max_tokens is not None:
        left_t = max(pl.max_tokens - parent_guard.tokens, 1)
        values["max_tokens"] = left_t if caps.max_tokens is None else min(caps.max_tokens, left_t)
    wall = parent_guard.wall_time_left()
    if wall is not None:
        wall = max(wall, 0.001)
        values["max_wall_time"] = wall if caps.max_wall_time is None else min(caps.max_wall_time, wall)
    return caps.over(Limits(**values)) if values else caps


__all__ = ["DEFAULTS", "TaskCaps", "within_parent"]
