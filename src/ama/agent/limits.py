"""``Limits``: the budgets of one run (turns, cost in USD, tokens, wall time in seconds).

The CLI (``--max-*``), the config (``limits.*``), RPC ``prompt`` options and the SDK all make
one; ``RunGuard`` (``agent/guard.py``, which re-exports ``Limits``) enforces it in the run loop.
Apart from the guard because every start validates the budgets, before anything runs (RPC's
first answer included), and the guard's other classes are not needed then.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

from ama.errors import InvalidArguments


@dataclass(frozen=True)
class Limits:
    """Budgets of one run; ``None`` is no limit."""

    max_turns: int | None = None
    max_cost: float | None = None  # USD, from the model registry's prices
    max_tokens: int | None = None  # input + output + cache tokens of the run's model requests
    max_wall_time: float | None = None  # seconds from the prompt to the end of the run

    def over(self, other: Limits | None) -> Limits:
        """These limits with every limit ``other`` sets taking precedence."""
        if other is None:
            return self
        return replace(self, **{f.name: v for f in fields(other) if (v := getattr(other, f.name)) is not None})

    def limit_for(self, kind: str) -> float | int | None:
        return {"turns": self.max_turns, "cost": self.max_cost, "tokens": self.max_tokens, "wallTime": self.max_wall_time}[kind]

    @property
    def empty(self) -> bool:
        return all(getattr(self, f.name) is None for f in fields(self))

    @classmethod
    def from_config(cls, config: Any) -> Limits:
        """``limits.*`` of the config; 0 means no limit."""

        def get(key: str) -> Any:
            value = config.get(key) if config is not None else None
            return value or None

        return cls.checked(
            max_turns=get("limits.maxTurns"),
            max_cost=get("limits.maxCost"),
            max_tokens=get("limits.maxTokens"),
            max_wall_time=get("limits.maxWallTime"),
            source="config limits.",
        )

    @classmethod
    def from_options(cls, p: dict[str, Any]) -> Limits | None:
        """RPC ``prompt`` options ``maxTurns``, ``maxCost``, ``maxTokens``, ``maxWallTime``."""
        keys = {"maxTurns": "max_turns", "maxCost": "max_cost", "maxTokens": "max_tokens", "maxWallTime": "max_wall_time"}
        given = {py: p[k] for k, py in keys.items() if p.get(k) is not None}
        return cls.checked(**given, source="") if given else None

    @classmethod
    def checked(cls, *, source: str = "--", **values: Any) -> Limits:
        """Validated limits: positive numbers (integers for turns and tokens)."""
        names = {"max_turns": "maxTurns", "max_cost": "maxCost", "max_tokens": "maxTokens", "max_wall_time": "maxWallTime"}
        out: dict[str, Any] = {}
        for key, value in values.items():
            if value is None:
                continue
            if source == "--":
                label = f"--{key.replace('_', '-')}"
            elif source == "py":
                label = key
            else:
                label = f"{source}{names[key]}"
            integral = key in ("max_turns", "max_tokens")
            ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0
            if ok and integral and not float(value).is_integer():
                ok = False
            if not ok:
                kind = "a positive integer" if integral else "a positive number"
                raise InvalidArguments(f"{label} must be {kind}, got {value!r}")
            out[key] = int(value) if integral else float(value)
        return cls(**out)
