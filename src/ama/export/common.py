"""What every export format shares: choosing the entries, size limits, the usage summary."""

from __future__ import annotations

from typing import Any

from ama.errors import AmaError
from ama.messages import AssistantMessage
from ama.session.entries import AnyEntry, BranchSummaryEntry, CompactionEntry, MessageEntry, UsageEntry
from ama.session.reader import SessionData
from ama.session.tree import SessionTree

ITEM_LIMIT = 64 * 1024  # one item (a message text, a tool result ...) is cut beyond this
TOTAL_LIMIT = 16 * 1024 * 1024  # a whole export beyond this fails instead of being cut


class ExportTooLarge(AmaError):
    def __init__(self, size: int) -> None:
        super().__init__(
            "too_large",
            f"the export would be {size / 1048576:.1f} MiB, over the limit of {TOTAL_LIMIT // 1048576} MiB; "
            "nothing was written (try --branch leaf, or --format md, which shortens tool output)",
        )


def cut(text: str, limit_bytes: int = ITEM_LIMIT) -> str:
    """``text`` cut to ``limit_bytes`` of UTF-8, with a marker saying how much was cut."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= limit_bytes:
        return text
    kept = raw[:limit_bytes].decode("utf-8", "ignore")
    return f"{kept}\n… [cut: {len(raw) - len(kept.encode('utf-8', 'surrogatepass'))} more bytes]"


def cut_chars(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [cut: {len(text) - limit} more characters]"


def check_total(size: int) -> None:
    if size > TOTAL_LIMIT:
        raise ExportTooLarge(size)


def choose(data: SessionData, branch: str) -> tuple[list[int], str | None]:
    """Indexes (into ``data.entries``) of the exported entries, and the leaf id:
    ``leaf`` = root to the current leaf, ``all`` = every entry in file order."""
    tree = SessionTree(data.entries, data.leaf_id)
    if branch == "all":
        return list(range(len(data.entries))), tree.leaf_id
    ids = set(tree.path_ids())
    return [i for i, e in enumerate(data.entries) if e.id in ids], tree.leaf_id


def usage_summary(entries: list[AnyEntry]) -> dict[str, Any]:
    """Requests, tokens and cost of the exported entries, in total and per model."""
    by: dict[str, dict[str, Any]] = {}

    def add(model: str, u: Any) -> None:
        row = by.setdefault(
            model,
            {
                "model": model,
                "requests": 0,
                "input": 0,
                "output": 0,
                "cacheRead": 0,
                "cacheWrite": 0,
                "cost": None,
            },
        )
        row["requests"] += 1
        row["input"] += u.input
        row["output"] += u.output
        row["cacheRead"] += u.cache_read
        row["cacheWrite"] += u.cache_write
        cost = getattr(u, "cost", None)
        if cost is not None and not isinstance(cost, type(None)) and hasattr(cost, "total"):
            row["cost"] = round((row["cost"] or 0.0) + cost.total, 10)

    for e in entries:
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage):
            m = e.message
            add(f"{m.provider}/{m.model}" if m.provider or m.model else "(unknown)", m.usage)
        elif isinstance(e, UsageEntry):
            add(f"{e.provider}/{e.model}" if e.provider or e.model else "(unknown)", e.usage)
        elif isinstance(e, CompactionEntry | BranchSummaryEntry) and hasattr(e.usage, "input"):
            add(f"({e.type})", e.usage)
    rows = sorted(by.values(), key=lambda r: (-r["requests"], r["model"]))
    total = {k: sum(r[k] for r in rows) for k in ("requests", "input", "output", "cacheRead", "cacheWrite")}
    costs = [r["cost"] for r in rows if r["cost"] is not None]
    total["cost"] = round(sum(costs), 10) if costs else None
    return {**total, "byModel": rows}
