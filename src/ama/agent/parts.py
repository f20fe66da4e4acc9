"""The seams of ``AgentSession``: what it needs from each part, as types mypy checks.

``AgentSession(session=, model=, tools=, parts=AgentParts(...), settings=AgentSettings(...))``.
The composition root (``agent/compose.py``) builds the real parts; a test or an embedding
program can hand in anything with the same shape.  A new part (compaction, plans, task
sub-agents) is one more optional field of ``AgentParts`` with its own Protocol here, so the
constructor never grows.

The Protocols name only what the agent and its helpers (``run.py``, ``tool_exec.py``,
``session_rewind.py``, ``preview.py``) use; each real class is checked against its Protocol
where ``compose.py`` builds the parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ama.tools.context import BashSandboxLike

if TYPE_CHECKING:
    from ama.agent.approvals import ApprovalBroker
    from ama.agent.catalog import PromptCatalog
    from ama.agent.guard import Limits
    from ama.ai.types import Model
    from ama.checkpoints.records import CodeRestoreResult
    from ama.hooks import HookTable
    from ama.permissions import Answer, Decision, HookVerdict
    from ama.sandbox.detect import SandboxStatus
    from ama.tools import ReadFiles


class ModelRegistry(Protocol):
    """Models by reference (``provider/id``) and their keys (``ama.ai.ModelRegistry``)."""

    def get(self, ref: str) -> Model: ...

    def list(self) -> list[Model]: ...

    def api_key(self, model: Model) -> str | None: ...


class Permissions(Protocol):
    """The permission pipeline of one session (``ama.permissions.PermissionSession``)."""

    @property
    def mode(self) -> str: ...

    def set_mode(self, mode: str) -> None: ...

    def decide(
        self, tool_name: str, args: dict[str, Any] | None, *, read_only: bool | None = None,
        hook: HookVerdict | None = None,
    ) -> Decision: ...  # fmt: skip

    async def settle(
        self, tool_name: str, args: dict[str, Any] | None, decision: Decision, *, intent: str = ""
    ) -> Decision: ...  # auto mode: the classifier's verdict on a pending "ask"

    def resolve(self, decision: Decision, answer: Answer) -> Decision: ...


class Checkpoints(Protocol):
    """File checkpoints of one session (``ama.checkpoints.CheckpointTracker``)."""

    @property
    def enabled(self) -> bool: ...
    @property
    def mode(self) -> str: ...

    def before_write(self, path: str) -> None: ...

    def after_write(self, path: str, data: bytes) -> None: ...

    def after_command(self) -> None: ...

    def checkpoint(self, user_entry_id: str) -> Any: ...

    def has_checkpoint(self, user_entry_id: str) -> bool: ...

    def git_hint(self, user_entry_id: str) -> dict | None: ...

    def differing_files(self, user_entry_id: str) -> list[str]: ...

    def restore(
        self, user_entry_id: str, *, dry_run: bool = False, on_conflict: str = "skip", read_files: Any = None
    ) -> CodeRestoreResult: ...


class Jobs(Protocol):
    """Background commands of one session (``ama.tools.BackgroundJobs``)."""

    def running(self) -> Sequence[object]: ...

    def kill_all(self) -> None: ...


class BashSandbox(BashSandboxLike, Protocol):
    """The session's OS sandbox for bash (``ama.sandbox.BashSandbox``): what the bash tool
    needs, plus what a permission preview shows and ``close()``."""

    @property
    def status(self) -> SandboxStatus: ...
    @property
    def network(self) -> str: ...

    def close(self) -> None: ...


class Tasks(Protocol):
    """Task sub-agents of one session (``ama.agent.subagents.TaskManager``)."""

    def prefetch(self, calls: list[Any]) -> None: ...

    async def discard_prefetched(self) -> None: ...

    def view(self) -> list[dict[str, Any]]: ...

    def agents(self) -> list[dict[str, Any]]: ...

    def rollup(self) -> dict[str, Any]: ...

    def begin_close(self) -> None: ...

    async def close(self) -> None: ...

    def bind_run(self, guard: Any) -> None: ...

    def unbind_run(self, guard: Any) -> None: ...


@dataclass
class AgentParts:
    """The collaborators of an ``AgentSession``; all but the registry and the permissions
    are optional (None: the session has no such part)."""

    registry: ModelRegistry
    permissions: Permissions
    hooks: HookTable | None = None
    #: who answers permission asks (None: unattended, the pipeline denies every ask)
    broker: ApprovalBroker | None = None
    bash_sandbox: BashSandbox | None = None
    #: the files read in this session (None: a fresh, empty set)
    read_files: ReadFiles | None = None
    jobs: Jobs | None = None
    checkpoints: Checkpoints | None = None
    #: the loaded configuration (``ama.config.Config``), for parts that read settings late
    config: Any = None
    #: prompt templates and skills (None: none)
    prompts: PromptCatalog | None = None
    #: task sub-agents (``ama.agent.subagents.TaskManager``; None: no task tool)
    tasks: Tasks | None = None


@dataclass
class AgentSettings:
    """The scalar options of an ``AgentSession``."""

    #: where tools put full outputs (truncated results, background job logs)
    output_dir: str
    thinking_level: str = "off"
    system_prompt: str = ""
    max_turns: int | None = None
    #: budgets of every run (``ama.agent.guard.Limits``; None: only ``max_turns``)
    limits: Limits | None = None
    #: the model answering when the main one is overloaded (``ama.agent.fallback``)
    fallback_model: Any = None
    #: model calls per turn, retries included (at least 1)
    max_attempts: int = 3
    retry_base_s: float = 2.0
    #: a model request fails with ``timeout`` when no byte arrives for this long
    request_timeout_s: float = 600.0
    #: the permission mode was asked for explicitly (not read from the config): resume does
    #: not put the session back into plan mode
    explicit_mode: bool = False
