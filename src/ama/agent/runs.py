"""Run records (SPEC D3): one run = one prompt to ``agent_settled``.

Each transition is appended as ``custom{customType:"ama.run"}``; the index projects them
into the ``runs`` table.  States ``CREATED -> RUNNING -> COMPLETED | FAILED | CANCELLED``;
a terminal state never goes back.  Exit codes (seeds/003 §3): COMPLETED 0 (also
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
        if self.completed_at is not None:
            out["completedAt"] = self.completed_at
        return out
