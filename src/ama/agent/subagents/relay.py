"""A child's events as the parent's ``subagent_update`` events (seeds/004 rpc.md).

``kind: "turn"`` at each child turn (with the usage so far), ``kind: "tool"`` when a tool call
starts (``toolName``), ``kind: "text"`` with ``textDelta``: text deltas are merged and sent at
most every ``TEXT_INTERVAL_S`` (250 ms) and once more at the end.  The child's
``permission_request`` / ``permission_resolved`` are re-emitted on the parent unchanged (their
``context {depth, taskId}`` names the task).  Usage of the child's assistant messages and its
denied calls are collected for ``subagent_end`` and the task result.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from ama.agent.events import event
from ama.agent.subagents.registry import TaskInfo, empty_usage, merge_usage

TEXT_INTERVAL_S = 0.25
RELAYED = frozenset({"permission_request", "permission_resolved"})


def _usage_add(total: dict[str, Any], u: Any) -> None:
    if not isinstance(u, dict):
        return
    for src, dst in (("input", "input"), ("output", "output"), ("cacheRead", "cacheRead"), ("cacheWrite", "cacheWrite")):
        total[dst] += int(u.get(src) or 0)
    cost = u.get("cost")
    if isinstance(cost, dict):
        total["cost"]["total"] = round(total["cost"]["total"] + float(cost.get("total") or 0), 8)


def _summary(name: str, args: Any) -> str:
    if not isinstance(args, dict):
        return name
    for key in ("command", "path", "pattern", "query", "description"):
        v = args.get(key)
        if isinstance(v, str) and v:
            v = v.splitlines()[0] if v.strip() else v
            return f"{name} {v[:80]}"
    return name


class Relay:
    def __init__(
        self,
        emit: Callable[[dict], None],
        info: TaskInfo,
        clock: Callable[[], float] = time.monotonic,
        on_usage: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.emit = emit
        #: called with the usage of each of the child's replies (the parent's budget)
        self.on_usage = on_usage
        self.info = info
        self.clock = clock
        self.turns = 0
        #: this run's usage; ``info.usage`` is the task's total over its continuations
        self.usage = empty_usage()
        self._base = json.loads(json.dumps(info.usage)) if info.usage else empty_usage()
        self._base_turns = info.turns or 0
        self.denied: list[str] = []
        self._text: list[str] = []
        self._last_text = -1e9
        self._timer: asyncio.TimerHandle | None = None

    def __call__(self, ev: dict[str, Any]) -> None:
        t = ev.get("type")
        if t in RELAYED:
            self.emit(ev)
        elif t == "turn_start":
            self.flush()
            self.turns += 1
            self.info.turns = self._base_turns + self.turns
            self._update("turn", usage=dict(self.usage, cost=dict(self.usage["cost"])))
        elif t == "tool_execution_start":
            self.flush()
            name = str(ev.get("toolName") or "")
            self.info.last_action = _summary(name, ev.get("args"))
            self._update("tool", toolName=name)
        elif t == "tool_execution_end" and ev.get("denied"):
            self.denied.append(str(ev.get("toolName") or ""))
        elif t == "message_end":
            msg = ev.get("message") or {}
            if msg.get("role") == "assistant":
                _usage_add(self.usage, msg.get("usage"))
                if self.on_usage is not None:
                    one = empty_usage()
                    _usage_add(one, msg.get("usage"))
                    self.on_usage(one)
                total = json.loads(json.dumps(self._base))
                merge_usage(total, self.usage)
                self.info.usage = total
                self.info.cost_usd = total["cost"]["total"]
        elif t == "message_update":
            inner = ev.get("assistantMessageEvent") or {}
            if inner.get("type") == "text_delta" and inner.get("delta"):
                self._text.append(str(inner["delta"]))
                self._schedule()

    def _update(self, kind: str, **fields: Any) -> None:
        self.emit(event("subagent_update", taskId=self.info.task_id, kind=kind, turn=self.turns, **fields))

    def _schedule(self) -> None:
        wait = self._last_text + TEXT_INTERVAL_S - self.clock()
        if wait <= 0:
            self.flush()
        elif self._timer is None:
            try:
                self._timer = asyncio.get_running_loop().call_later(wait, self.flush)
            except RuntimeError:  # no loop: flush at the next event
                pass

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._text:
            return
        text, self._text = "".join(self._text), []
        self._last_text = self.clock()
        self._update("text", textDelta=text)


__all__ = ["Relay", "TEXT_INTERVAL_S"]
