"""Plain data of the permission pipeline: modes, the context, decisions, answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from ama.errors import InvalidArguments
from ama.permission_modes import PERMISSION_MODES
from ama.permissions._rules import Rule, Rules

Mode = Literal["plan", "allowlist", "default", "auto-edit", "auto", "full-auto"]
MODES: tuple[str, ...] = PERMISSION_MODES
Action = Literal["allow", "deny", "ask"]
Source = Literal[
    "mode", "rule", "dangerous", "secret", "protected", "sandbox", "hook", "session", "unattended", "user",
    "static", "classifier",
]  # fmt: skip


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise InvalidArguments(f"unknown permission mode {mode!r}; expected one of {', '.join(MODES)}")
    return mode


class SandboxStatus(Protocol):
    """What the pipeline needs to know of the session's bash sandbox (``ama.sandbox``)."""

    @property
    def active(self) -> bool: ...  # bash calls are wrapped in an OS sandbox that limits writes

    @property
    def isolates_network(self) -> bool: ...  # ... and that sandbox denies network


@dataclass(frozen=True)
class SandboxInfo:
    """A plain ``SandboxStatus`` (tests, or a composition root that copies the fields)."""

    active: bool
    isolates_network: bool


class HookVerdict(Protocol):
    """What the pipeline needs of a PreToolUse hook outcome (``ama.hooks.HookOutcome`` fits)."""

    @property
    def decision(self) -> str | None: ...  # "allow" | "deny" | "ask" | None

    @property
    def reason(self) -> str: ...


@dataclass(frozen=True)
class HookDecision:
    """A plain ``HookVerdict``."""

    decision: str | None
    reason: str = ""


@dataclass(frozen=True)
class PermissionContext:
    mode: str
    cwd: str
    home: str
    rules: Rules = field(default_factory=Rules)
    sandbox: SandboxStatus | None = None
    session_allows: frozenset[Rule] = frozenset()
    unattended: bool = False
    config_dir: str = ""  # ama's config directory: its auth.json is a secret
    data_dir: str = ""  # ama's data directory: an auth.json there is a secret too

    def __post_init__(self) -> None:
        check_mode(self.mode)

    @property
    def auth_dirs(self) -> tuple[str, ...]:
        return tuple(d for d in dict.fromkeys((self.config_dir, self.data_dir)) if d)


@dataclass(frozen=True)
class AutoDecision:
    """Why ``auto`` mode decided a call: the layer (``rule`` | ``static`` | ``classifier``), its
    verdict (``allow`` | ``ask`` | ``deny``), the reason, and whether the classifier's verdict
    came from the session's cache.  RPC ``autoDecision`` (docs/permissions.md "auto mode")."""

    layer: Literal["rule", "static", "classifier"]
    decision: Action
    reason: str
    cached: bool = False

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"layer": self.layer, "decision": self.decision, "reason": self.reason}
        if self.cached:
            out["cached"] = True
        return out


@dataclass(frozen=True)
class Decision:
    """The verdict on one tool call.

    ``sandboxed``: the call is a bash call that will run in the OS sandbox (whatever decided
    it).  ``session_rules``: what "allow for session" remembers if the user gives that answer
    to this "ask" (e.g. ``bash(npm test:*)``).  ``auto``: in ``auto`` mode, the layer that
    decided.  ``pending``: an ``auto`` "ask" that the classifier has yet to judge
    (``PermissionSession.settle``).
    """

    action: Action
    reason: str
    source: Source
    rule: str | None = None
    sandboxed: bool = False
    session_rules: tuple[Rule, ...] = ()
    auto: AutoDecision | None = None
    pending: bool = False

    @property
    def request_reason(self) -> Literal["mode", "dangerous", "hook"]:
        """The ``reason`` of an RPC ``permission_request``."""
        if self.source == "hook":
            return "hook"
        if self.source in ("dangerous", "secret", "protected"):
            return "dangerous"
        return "mode"


@dataclass(frozen=True)
class Answer:
    """The user's answer to an "ask": ``allow_once``, ``allow_session`` or ``deny``."""

    kind: Literal["allow_once", "allow_session", "deny"]
    feedback: str = ""  # with deny: text passed on to the model

    @classmethod
    def parse(cls, value: str, feedback: str = "") -> Answer:
        """From an RPC ``decision`` (``allow`` means ``allow_once``)."""
        kind = {"allow": "allow_once", "allow_once": "allow_once", "allow_session": "allow_session",
                "deny": "deny"}.get(value)  # fmt: skip
        if kind is None:
            raise InvalidArguments(f"unknown answer {value!r}; expected allow, allow_session or deny")
        return cls(kind, feedback)  # type: ignore[arg-type]


ALLOW_ONCE = Answer("allow_once")
ALLOW_SESSION = Answer("allow_session")
DENY = Answer("deny")
