"""Requests, tokens and cost of one session file by kind of request (docs/stats.md).

The same definitions as ``ama stats`` (``index/facts.py``), for one session: every
assistant message is a request of kind ``conversation``; a ``compaction`` or
``branch_summary`` that carries ``usage`` one of kind ``compaction`` / ``branch_summary``;
every ``usage`` entry one of its ``kind`` (``cache_warm``, ``permission_classify``, and any
later kind).  All branches of the file count.  Cost is the sum of ``usage.cost.total``
where the request has one, added in integer units of 1e-10 USD (as ``ama stats``) so the
three views — ``ama stats``, ``/session`` and RPC ``get_session_stats`` — agree to the cent.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ama.messages import AssistantMessage, Cost, Usage
from ama.session.entries import BranchSummaryEntry, CompactionEntry, MessageEntry, UsageEntry

CONVERSATION = "conversation"
COST_UNIT = 1e10  # cost is added in units of 1e-10 USD


def _kind_and_usage(e: Any) -> tuple[str, Usage] | None:
    if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage):
        return CONVERSATION, e.message.usage
    if isinstance(e, CompactionEntry | BranchSummaryEntry) and isinstance(e.usage, Usage):
        return e.type, e.usage
    if isinstance(e, UsageEntry):
        return e.kind or "usage", e.usage
    return None


def usage_by_kind(entries: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """``kind -> {requests, input, output, cacheRead, cacheWrite, cost, pricedRequests}``;
    ``conversation`` first, the other kinds in the order they first appear."""
    out: dict[str, dict[str, Any]] = {}
    units: dict[str, int] = {}
    for e in entries:
        ku = _kind_and_usage(e)
        if ku is None:
            continue
        kind, u = ku
        row = out.get(kind)
        if row is None:
            row = out[kind] = {"requests": 0, "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": None, "pricedRequests": 0}
            units[kind] = 0
        row["requests"] += 1
        row["input"] += u.input
        row["output"] += u.output
        row["cacheRead"] += u.cache_read
        row["cacheWrite"] += u.cache_write
        if isinstance(u.cost, Cost):
            units[kind] += round(u.cost.total * COST_UNIT)
            row["pricedRequests"] += 1
    for kind, row in out.items():
        if row["pricedRequests"]:
            row["cost"] = units[kind] / COST_UNIT
    if CONVERSATION in out:
        out = {CONVERSATION: out[CONVERSATION], **{k: v for k, v in out.items() if k != CONVERSATION}}
    return out


def totals(by_kind: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Sums over every kind: ``{requests, tokens{input, output, cacheRead, cacheWrite, total}, cost}``
    (``cost`` None when no request has a price)."""
    tokens = {k: sum(r[k] for r in by_kind.values()) for k in ("input", "output", "cacheRead", "cacheWrite")}
    tokens["total"] = sum(tokens.values())
    priced = [r for r in by_kind.values() if r["cost"] is not None]
    cost = sum(round(r["cost"] * COST_UNIT) for r in priced) / COST_UNIT if priced else None
    return {"requests": sum(r["requests"] for r in by_kind.values()), "tokens": tokens, "cost": cost}


def describe(by_kind: dict[str, dict[str, Any]]) -> list[str]:
    """The lines ``/session`` prints (requests by kind, tokens, cost)."""
    t = totals(by_kind)
    kinds = " · ".join(f"{k} {r['requests']}" for k, r in by_kind.items())
    tok = t["tokens"]
    lines = [f"requests {t['requests']}" + (f" ({kinds})" if kinds else "")]
    lines.append(f"tokens   {tok['input']:,} in · {tok['output']:,} out · {tok['cacheRead']:,} cache read · {tok['cacheWrite']:,} cache write")
    if t["cost"] is not None:
        lines.append(f"cost     ${t['cost']:.4f}" + "".join(f" · {k} ${r['cost']:.4f}" for k, r in by_kind.items() if r["cost"]))
    return lines


__all__ = ["CONVERSATION", "describe", "totals", "usage_by_kind"]
