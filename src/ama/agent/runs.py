"""Run records (SPEC D3): one run = one prompt to ``agent_settled``.

Each transition is appended as ``custom{customType:"ama.run"}``; the index projects them
into the ``runs`` table.  States ``CREATED -> RUNNING -> COMPLETED | FAILED | CANCELLED``;
a terminal state never goes back.  Terminal reasons: ``stop``, ``length`` (the model hit its
output limit), ``max_steps`` (a budget: ``limit`` names it), ``aborted``, ``error``,
``max_retries``, ``rate_limit``, ``timeout`` (a provider timeout or the wall-time budget).
Exit codes (seeds/003 §3): COMPLETED 0 (also
``max_steps``), FAILED 1, CANCELLED 130.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from ama.errors import AmaError
from ama.session.entries import now_iso

RUN_TYPE = "ama.run"
TERMINAL = frozenset({"COMPLETED", "FAILED", "CANCELLED"})
TRANSITIONS = {
    "CREATED": {"RUNNING", "CANCELLED", "FAILED"},
    "RUNNING": {"COMPLETED", "FAILED", "CANCELLED"},
}
EXIT_CODES = {"COMPLETED": 0, "FAILED": 1, "CANCELLED": 130}


@dataclass
class RunRecord:
    execution_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    status: str = "CREATED"
    terminal_reason: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    step_index: int = 0
    created_at: str = field(default_factory=now_iso)
    updated_at: str = ""
    completed_at: str | None = None
    prompt: str = ""
    model: str = ""
    #: the budget that ended the run: {kind, value, limit} (agent/guard.py)
    limit: dict[str, Any] | None = None
    #: the provider's error package (seeds/003 §8): category, httpStatus, retryable, errorType
    error_detail: dict[str, Any] | None = None
    #: requests of this run answered by the fallback model: {from, to, reason, count}
    fallback: dict[str, Any] | None = None

    def note_fallback(self, main: str, fallback: str, reason: str) -> None:
        count = self.fallback["count"] if self.fallback else 0
        self.fallback = {"from": main, "to": fallback, "reason": reason[:200], "count": count + 1}

    def set_provider_error(self, error: Any) -> None:
        if error is None:
            return
        detail: dict[str, Any] = {"category": "provider"}
        for key, attr in (("httpStatus", "http_status"), ("retryable", "retryable"), ("errorType", "error_type"), ("provider", "provider")):
            value = getattr(error, attr, None)
            if value is not None:
                detail[key] = value
        self.error_detail = detail

    def transition(self, status: str, *, reason: str | None = None, error_code: str | None = None) -> None:
        if status not in TRANSITIONS.get(self.status, set()):
            raise AmaError(
                "invalid_transition", f"run {self.execution_id}: illegal transition {self.status} -> {status}"
            )
        self.status = status
        self.updated_at = now_iso()
        if status in TERMINAL:
            self.completed_at = self.updated_at
            self.terminal_reason = reason
            self.error_code = error_code

    def progress(self) -> dict[str, Any]:
        """The record of a run still going (its ``stepIndex`` moved on): RUNNING again."""
        self.updated_at = now_iso()
        return self.to_data()

    @property
    def exit_code(self) -> int:
        return EXIT_CODES.get(self.status, 1)

    def to_data(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "executionId": self.execution_id,
            "status": self.status,
            "stepIndex": self.step_index,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at or self.created_at,
            "prompt": self.prompt[:200],
            "model": self.model,
        }
        if self.terminal_reason is not None:
            out["terminalReason"] = self.terminal_reason
        if self.error_code is not None:
            out["errorCode"] = self.error_code
        if self.error_message is not None:
            out["errorMessage"] = self.error_message[:500]
        if self.error_detail is not None:
            out.update({k: v for k, v in self.error_detail.items() if k not in out})
        if self.limit is not None:
            out["limit"] = self.limit
        if self.fallback is not None:
            out["fallback"] = self.fallback
        if self.completed_at is not None:
            out["completedAt"] = self.completed_at
        return out


def refuse(agent: Any, record: RunRecord, message: str) -> AmaError:
    """A run refused before it started (a ``UserPromptSubmit`` hook blocked the prompt):
    its ``CREATED`` record ends ``FAILED`` / ``error`` with error code ``blocked`` and
    category ``hook`` (seeds/003: any other error is a failure, exit 1).  Returns the
    error for the caller to raise."""
    record.error_message = message
    record.error_detail = {"category": "hook"}
    record.transition("FAILED", reason="error", error_code="blocked")
    agent.session.append_custom(RUN_TYPE, record.to_data())
    agent.session.sync()
    return AmaError("blocked", message)


def terminal_reason_for(error_code: str, retried: bool) -> str:
    """seeds/003 §2: rate limits and timeouts have their own terminal reasons; a failure
    after retries is ``max_retries``; anything else ``error``."""
    if error_code == "rate_limited":
        return "rate_limit"
    if error_code == "timeout":
        return "timeout"
    return "max_retries" if retried else "error"
