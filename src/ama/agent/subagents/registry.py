"""The task registry of one session: ``TaskInfo`` records, kept in memory and as
``ama.task`` entries of the parent session (docs/agents.md, seeds/000 session-format).

The parent appends a ``TaskInfo`` entry when a task starts, at every continuation and when
it ends; the last entry of a ``taskId`` on the branch wins.  ``rebuild`` reads them back on
resume: a task still ``running`` there belonged to a process that is gone, so it reads as
``interrupted``.  A child session's own first ``ama.task`` entry has no ``status``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

TASK_TYPE = "ama.task"
STATUSES = ("running", "completed", "failed", "aborted", "max_turns", "interrupted")
FINAL = frozenset(STATUSES) - {"running"}


@dataclass
class TaskInfo:
    task_id: str
    agent: str
    runner: str
    description: str
    background: bool
    status: str
    started_at: str
    parent_tool_call_id: str
    cwd: str
    ended_at: str | None = None
    turns: int | None = None
    usage: dict | None = None
    cost_usd: float | None = None
    output_file: str | None = None
    #: ``{sessionId, sessionFile}`` of the child session (ama runner) or the external session
    session_ref: dict | None = None
    model: str | None = None
    error: str | None = None
    #: the cap that ended it: ``{kind, value, limit}``
    limit: dict | None = None
    worktree: dict | None = None
    depth: int = 1
    #: the final text (not written to the entry: the output file holds it)
    result: str = field(default="", repr=False)
    #: the last thing the child did, for live views
    last_action: str | None = None

    def to_data(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "taskId": self.task_id,
            "agent": self.agent,
            "runner": self.runner,
            "description": self.description,
            "background": self.background,
            "status": self.status,
            "startedAt": self.started_at,
            "parentToolCallId": self.parent_tool_call_id,
            "cwd": self.cwd,
            "depth": self.depth,
        }
        optional = {
            "endedAt": self.ended_at,
            "turns": self.turns,
            "usage": self.usage,
            "costUsd": self.cost_usd,
            "outputFile": self.output_file,
            "sessionRef": self.session_ref,
            "model": self.model,
            "error": self.error,
            "limit": self.limit,
            "worktree": self.worktree,
        }
        out.update({k: v for k, v in optional.items() if v is not None})
        return out

    def to_json(self) -> dict[str, Any]:
        out = self.to_data()
        if self.last_action:
            out["lastAction"] = self.last_action
        return out

    @classmethod
    def from_data(cls, d: dict[str, Any]) -> TaskInfo | None:
        """A ``TaskInfo`` entry's data, or None when it is not one (a child's own header
        entry, or damaged data)."""
        if not isinstance(d, dict) or d.get("status") not in STATUSES or not isinstance(d.get("taskId"), str):
            return None

        def s(key: str, default: str = "") -> str:
            v = d.get(key)
            return v if isinstance(v, str) else default

        def opt(key: str, kind: type | tuple[type, ...]) -> Any:
            v = d.get(key)
            return None if isinstance(v, bool) or not isinstance(v, kind) else v

        return cls(
            task_id=d["taskId"],
            agent=s("agent"),
            runner=s("runner", "ama"),
            description=s("description"),
            background=bool(d.get("background")),
            status=d["status"],
            started_at=s("startedAt"),
            parent_tool_call_id=s("parentToolCallId"),
            cwd=s("cwd"),
            ended_at=opt("endedAt", str),
            turns=opt("turns", int),
            usage=opt("usage", dict),
            cost_usd=opt("costUsd", (int, float)),
            output_file=opt("outputFile", str),
            session_ref=opt("sessionRef", dict),
            model=opt("model", str),
            error=opt("error", str),
            limit=opt("limit", dict),
            worktree=opt("worktree", dict),
            depth=int(d["depth"]) if isinstance(d.get("depth"), int) else 1,
        )


class TaskRegistry:
    """Tasks of one session by id, in start order."""

    def __init__(self) -> None:
        self.tasks: dict[str, TaskInfo] = {}

    def add(self, info: TaskInfo) -> None:
        self.tasks[info.task_id] = info

    def get(self, task_id: str) -> TaskInfo | None:
        return self.tasks.get(task_id)

    def running(self) -> list[TaskInfo]:
        return [t for t in self.tasks.values() if t.status == "running"]

    def view(self) -> list[dict[str, Any]]:
        return [t.to_json() for t in self.tasks.values()]

    def rebuild(self, entries: Iterable[Any]) -> None:
        """From the ``ama.task`` entries of a branch (last one per ``taskId`` wins);
        ``running`` reads as ``interrupted``."""
        for e in entries:
            if getattr(e, "type", None) != "custom" or getattr(e, "custom_type", None) != TASK_TYPE:
                continue
            info = TaskInfo.from_data(e.data)
            if info is None:
                continue
            if info.status == "running":
                info.status = "interrupted"
            self.tasks[info.task_id] = info


def sum_usage(total: dict[str, Any], usage: Any) -> None:
    """Add one assistant message's ``Usage`` into ``total`` ({input, output, cacheRead,
    cacheWrite, cost: {total}})."""
    if usage is None:
        return
    total["input"] = total.get("input", 0) + int(getattr(usage, "input", 0) or 0)
    total["output"] = total.get("output", 0) + int(getattr(usage, "output", 0) or 0)
    total["cacheRead"] = total.get("cacheRead", 0) + int(getattr(usage, "cache_read", 0) or 0)
    total["cacheWrite"] = total.get("cacheWrite", 0) + int(getattr(usage, "cache_write", 0) or 0)
    cost = getattr(usage, "cost", None)
    value = float(getattr(cost, "total", 0) or 0) if cost is not None and not isinstance(cost, str) else 0.0
    total.setdefault("cost", {"total": 0.0})
    total["cost"]["total"] = round(total["cost"]["total"] + value, 8)


def empty_usage() -> dict[str, Any]:
    return {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.0}}


def cache_of(usage: dict[str, Any]) -> dict[str, Any]:
    """``subagent_end.cache``: cache tokens read / written and the hit ratio of the input."""
    read, write, inp = usage.get("cacheRead", 0), usage.get("cacheWrite", 0), usage.get("input", 0)
    denom = read + write + inp
    return {"read": read, "write": write, "hitRatio": round(read / denom, 4) if denom else 0.0}


def merge_usage(into: dict[str, Any], other: dict[str, Any] | None) -> None:
    if not other:
        return
    for k in ("input", "output", "cacheRead", "cacheWrite"):
        into[k] = into.get(k, 0) + int(other.get(k, 0) or 0)
    into.setdefault("cost", {"total": 0.0})
    extra = (other.get("cost") or {}).get("total", 0) if isinstance(other.get("cost"), dict) else 0
    into["cost"]["total"] = round(into["cost"]["total"] + float(extra or 0), 8)


__all__ = ["FINAL", "STATUSES", "TASK_TYPE", "TaskInfo", "TaskRegistry", "cache_of", "empty_usage", "merge_usage", "sum_usage"]
