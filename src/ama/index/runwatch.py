"""Follow one run in its session file (``ama runs watch``): a pure reader of new lines.

:class:`RunFollower` is fed the bytes appended to a session file (any chunking) and
returns what happened to the run ``execution_id``: ``state`` events for its ``ama.run``
records (a status or ``stepIndex`` change) and ``step`` events for the assistant messages
written while it runs.  ``end`` is set once the run is in a terminal state, or when a newer
run started in the same file while this one had not ended (it was cut off: interrupted).
"""

from __future__ import annotations

from typing import Any

import msgspec

from ama.index.runlog import DETAIL_KEYS, RUN_TYPE, TERMINAL

EXIT_CODES = {"COMPLETED": 0, "FAILED": 1, "CANCELLED": 130}


def _light(obj: Any) -> dict[str, Any]:
    return obj if isinstance(obj, dict) else {}


class RunFollower:
    def __init__(self, execution_id: str) -> None:
        self.execution_id = execution_id
        self._rest = b""
        self.k = 0  # entries read
        self.status: str | None = None
        self.step_index = -1
        self.steps = 0
        self.end: dict[str, Any] | None = None
        self.record: dict[str, Any] = {}

    @property
    def running(self) -> bool:
        return self.status == "RUNNING" and self.end is None

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        """Events for the complete lines in ``data`` (a partial last line waits for more)."""
        buf = self._rest + data
        lines = buf.split(b"\n")
        self._rest = lines.pop()
        out: list[dict[str, Any]] = []
        for line in lines:
            if not line.strip():
                continue
            self.k += 1
            if self.end is not None:
                continue
            try:
                obj = msgspec.json.decode(line)
            except msgspec.DecodeError:
                continue
            if not isinstance(obj, dict):
                continue
            if obj.get("type") == "custom" and obj.get("customType") == RUN_TYPE:
                out.extend(self._record(_light(obj.get("data")), obj.get("timestamp")))
            elif obj.get("type") == "message" and self.running:
                msg = _light(obj.get("message"))
                if msg.get("role") == "assistant":
                    out.append(self._step(obj, msg))
        return out

    def _record(self, data: dict[str, Any], ts: Any) -> list[dict[str, Any]]:
        eid = data.get("executionId")
        if eid != self.execution_id:
            if self.status is not None and self.status not in TERMINAL and isinstance(eid, str):
                return [self._finish("CANCELLED", "interrupted", ts)]  # a newer run began in this file
            return []
        status = data.get("status")
        raw = data.get("stepIndex")
        step = raw if isinstance(raw, int) and not isinstance(raw, bool) else self.step_index
        if status == self.status and step == self.step_index:
            return []
        if self.status in TERMINAL:
            return []  # a terminal state never changes (runs.md)
        self.status, self.step_index = status, max(step, self.step_index)
        self.record = data
        ev: dict[str, Any] = {
            "type": "state",
            "executionId": self.execution_id,
            "status": status,
            "stepIndex": self.step_index,
            "timestamp": data.get("updatedAt") or ts,
        }
        for key in ("terminalReason", "errorCode", *DETAIL_KEYS):
            if data.get(key) is not None:
                ev[key] = data[key]
        out = [ev]
        if status in TERMINAL:
            out.append(self._finish(str(status), data.get("terminalReason"), data.get("updatedAt") or ts))
        return out

    def _step(self, obj: dict[str, Any], msg: dict[str, Any]) -> dict[str, Any]:
        self.steps += 1
        raw = msg.get("content")
        content: list[Any] = raw if isinstance(raw, list) else []
        tools = [b.get("name") for b in content if isinstance(b, dict) and b.get("type") == "toolCall"]
        return {
            "type": "step",
            "step": self.steps,
            "entryId": obj.get("id"),
            "timestamp": obj.get("timestamp"),
            "stopReason": msg.get("stopReason"),
            "tools": [t for t in tools if isinstance(t, str)],
            "error": msg.get("errorMessage") if isinstance(msg.get("errorMessage"), str) else None,
        }

    def _finish(self, status: str, reason: Any, ts: Any) -> dict[str, Any]:
        self.end = {
            "type": "end",
            "executionId": self.execution_id,
            "status": status,
            "terminalReason": reason,
            "errorCode": self.record.get("errorCode") if status != "CANCELLED" or reason != "interrupted" else None,
            "stepIndex": max(self.step_index, 0),
            "exitCode": EXIT_CODES.get(status, 1),
            "timestamp": ts,
        }
        if reason == "interrupted":
            self.end["recordedStatus"] = self.status
        return self.end

    def interrupted(self) -> dict[str, Any]:
        """The end of a run whose writer is gone without a terminal record."""
        return self._finish("CANCELLED", "interrupted", None)


__all__ = ["RunFollower"]
