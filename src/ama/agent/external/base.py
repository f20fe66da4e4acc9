"""The seam between the task host (sub-agents) and the external runners, and what every
runner shares: usage in ama's shape, the session and usage records, the first-run
confirmation (docs/external-agents.md)."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class ExternalTaskRequest:
    agent: str  # "acp:<program>" | "claude" | "codex"   (e.g. "acp:ama")
    prompt: str
    cwd: str
    task_id: str
    description: str = ""
    session_id: str | None = None  # continue an existing external session
    model: str | None = None


@dataclass
class ExternalTaskResult:
    status: str  # "completed" | "failed" | "aborted"
    text: str  # final answer text (becomes the task tool result)
    session_id: str | None  # the external agent's session id
    usage: dict[str, Any]  # {"input","output","cacheRead","cacheWrite","cost":{"total"}}
    error: str | None = None


class ExternalTaskHost(Protocol):
    """Implemented by the sub-agents side. The first-run confirmation is remembered per
    :func:`confirm_scope` of the host (its ``confirm_scope`` or ``parent`` attribute when it
    has one, else the host object): the parent session."""

    def update(self, payload: dict[str, Any]) -> None: ...

    async def ask_permission(self, request: dict[str, Any]) -> str: ...

    def record(self, custom_type: str, data: dict[str, Any]) -> None: ...


SESSION_RECORD = "ama.agent-session"
USAGE_RECORD = "ama.agent-usage"


@dataclass
class Usage:
    """Token and cost counts of one turn; ``cost`` None when the agent reports none."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float | None = None
    known: bool = False  # the agent reported tokens

    def add(self, other: Usage) -> None:
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write
        if other.cost is not None:
            self.cost = (self.cost or 0.0) + other.cost
        self.known = self.known or other.known

    @property
    def tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    def to_result(self) -> dict[str, Any]:
        return {
            "input": self.input,
            "output": self.output,
            "cacheRead": self.cache_read,
            "cacheWrite": self.cache_write,
            "cost": {"total": round(self.cost or 0.0, 10)},
        }

    def record_data(self, agent: str, session_id: str) -> dict[str, Any]:
        """The ``ama.agent-usage`` data: USD when priced, else tokens, else one request."""
        data: dict[str, Any] = {"agent": agent, "sessionId": session_id}
        if self.cost is not None:
            data.update(unit="usd", amount=round(self.cost, 10))
        elif self.known:
            data.update(unit="tokens", amount=self.tokens)
        else:
            data.update(unit="requests", amount=1)
        if self.known:
            data["tokens"] = {
                "input": self.input,
                "output": self.output,
                "cacheRead": self.cache_read,
                "cacheWrite": self.cache_write,
            }
        return data


@dataclass
class Turn:
    """What a runner collects during one prompt."""

    text: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    session_id: str | None = None

    def answer(self) -> str:
        return "".join(self.text).strip()


def record_session(host: ExternalTaskHost, req: ExternalTaskRequest, session_id: str) -> None:
    host.record(
        SESSION_RECORD,
        {"agent": req.agent, "runner": req.agent, "sessionId": session_id, "cwd": req.cwd, "taskId": req.task_id},
    )


def record_usage(host: ExternalTaskHost, req: ExternalTaskRequest, session_id: str, usage: Usage) -> None:
    host.record(USAGE_RECORD, usage.record_data(req.agent, session_id))


def result(status: str, turn: Turn, error: str | None = None) -> ExternalTaskResult:
    return ExternalTaskResult(
        status=status, text=turn.answer(), session_id=turn.session_id, usage=turn.usage.to_result(), error=error
    )


def failed(req: ExternalTaskRequest, message: str) -> ExternalTaskResult:
    return ExternalTaskResult(
        status="failed", text=message, session_id=req.session_id, usage=Usage().to_result(), error=message
    )


# --- first-run confirmation -----------------------------------------------------------

CONFIRM_OPTIONS = [
    {"optionId": "allow", "name": "Run it", "kind": "allow_once"},
    {"optionId": "reject", "name": "Don't run", "kind": "reject_once"},
]

_confirmed: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
_confirmed_by_id: dict[int, set[str]] = {}  # hosts that cannot be weakly referenced


def confirm_scope(host: Any) -> Any:
    """What the first-run confirmation is remembered for: the host's ``confirm_scope`` or
    ``parent`` (the parent session, when the host is made per task), else the host itself."""
    for attr in ("confirm_scope", "parent"):
        scope = getattr(host, attr, None)
        if scope is not None:
            return scope
    return host


def _seen(host: Any) -> set[str]:
    scope = confirm_scope(host)
    try:
        return _confirmed.setdefault(scope, set())
    except TypeError:
        return _confirmed_by_id.setdefault(id(scope), set())


async def confirm_first_run(host: ExternalTaskHost, req: ExternalTaskRequest, mode: str, note: str) -> bool:
    """Ask once per parent session (:func:`confirm_scope`) and agent before the agent first
    runs; True to go on.
    A continued external session was confirmed when it started."""
    seen = _seen(host)
    if req.agent in seen or req.session_id is not None:
        return True
    answer = await host.ask_permission(
        {
            "toolName": "task",
            "input": {"agent": req.agent, "mode": mode, "note": note},
            "context": {"taskId": req.task_id},
            "options": CONFIRM_OPTIONS,
        }
    )
    if not answer or answer.startswith("reject") or answer == "deny":
        return False
    seen.add(req.agent)
    return True
