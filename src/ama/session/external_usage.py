"""``SessionStats.external``: the roll-up of a session's ``ama.agent-session`` and
``ama.agent-usage`` entries (docs/external-agents.md, "Records").

Pure functions over entry data; both the session view (``get_session_stats``) and ``ama stats``
use :func:`usage_row` so that one record counts the same everywhere. Cost is summed in
integer units of 1e-10 USD (as the stats index does) so sums do not depend on their order.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms: `ama stats`); mypy knows it
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

SESSION_RECORD = "ama.agent-session"
USAGE_RECORD = "ama.agent-usage"
COST_SCALE = 10**10

#: the columns of :func:`usage_row`
COLUMNS = ("turns", "costUnits", "input", "output", "cacheRead", "cacheWrite", "requests")


#: amounts at or beyond these are damaged records (they would not fit 64-bit sums)
_LIMITS = {"usd": 10**8, "tokens": 10**18, "requests": 10**18}


def _count(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < _LIMITS["tokens"] else 0


def usage_row(data: Any) -> tuple[str, list[int]] | None:
    """``(agent, [turns, cost units, input, output, cacheRead, cacheWrite, requests])`` of one
    ``ama.agent-usage`` record; None for a damaged one (no agent, unknown unit, bad amount)."""
    if not isinstance(data, dict) or not isinstance(data.get("agent"), str) or not data["agent"]:
        return None
    unit, amount = data.get("unit"), data.get("amount")
    if unit not in ("usd", "tokens", "requests") or isinstance(amount, bool) or not isinstance(amount, int | float):
        return None
    if not 0 <= amount < _LIMITS[unit]:
        return None
    row = [1, 0, 0, 0, 0, 0, 0]
    tokens = data.get("tokens")
    if isinstance(tokens, dict):
        row[2:6] = [_count(tokens.get(k)) for k in ("input", "output", "cacheRead", "cacheWrite")]
    if unit == "usd":
        row[1] = round(amount * COST_SCALE)
    elif unit == "tokens" and not isinstance(tokens, dict):
        row[2] = int(amount)  # a total without its split counts as input
    elif unit == "requests":
        row[6] = int(amount)
    return data["agent"], row


def _block(row: list[int], sessions: int) -> dict[str, Any]:
    return {
        "sessions": sessions,
        "turns": row[0],
        "cost": round(row[1] / COST_SCALE, 10),
        "tokens": {"input": row[2], "output": row[3], "cacheRead": row[4], "cacheWrite": row[5]},
        "requests": row[6],
    }


def summarize(rows: Iterable[tuple[str, list[int]]], sessions: dict[str, set[str]] | None = None) -> dict[str, Any]:
    """``{sessions, turns, cost, tokens, requests, agents: [{agent, ...}]}`` of usage rows
    (and the external session ids seen per agent)."""
    per: dict[str, list[int]] = {}
    for agent, row in rows:
        acc = per.setdefault(agent, [0] * len(COLUMNS))
        for i, v in enumerate(row):
            acc[i] += v
    sessions = sessions or {}
    total = [0] * len(COLUMNS)
    agents = []
    for agent in sorted(set(per) | set(sessions)):
        row = per.get(agent, [0] * len(COLUMNS))
        for i, v in enumerate(row):
            total[i] += v
        agents.append({"agent": agent, **_block(row, len(sessions.get(agent, ())))})
    return {**_block(total, sum(len(s) for s in sessions.values())), "agents": agents}


def session_external(entries: Iterable[Any]) -> dict[str, Any]:
    """``SessionStats.external`` of a session's entries (``invalid``: damaged usage records)."""
    rows: list[tuple[str, list[int]]] = []
    sessions: dict[str, set[str]] = {}
    invalid = 0
    for e in entries:
        ct = getattr(e, "custom_type", None)
        if getattr(e, "type", None) != "custom" or ct not in (SESSION_RECORD, USAGE_RECORD):
            continue
        data = e.data
        if isinstance(data, dict) and isinstance(data.get("agent"), str) and isinstance(data.get("sessionId"), str):
            sessions.setdefault(data["agent"], set()).add(data["sessionId"])
        if ct == USAGE_RECORD:
            row = usage_row(data)
            if row is None:
                invalid += 1
            else:
                rows.append(row)
    out = summarize(rows, sessions)
    out["invalid"] = invalid
    return out
