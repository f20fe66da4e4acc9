"""Agent options, shared by every interface (print, interactive, RPC, ACP, the SDK): which
session to open and the options :func:`ama.agent.compose.build_agent` takes.

Light on purpose: the command line imports it before it knows which interface runs, so it
imports nothing of the agent itself (``ama --mode rpc`` answers its first commands before the
agent's tools load; see ``agent/compose.py``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Protocol

from ama.errors import InvalidArguments

if TYPE_CHECKING:
    from ama.agent.approvals import ApprovalBroker
    from ama.agent.limits import Limits
    from ama.tools import Tool


class AgentOptions:
    """What to build an agent with (:func:`ama.agent.compose.build_agent`).  (A plain class, not
    a dataclass: making one costs about a millisecond, on the way to RPC's first answer.)"""

    __slots__ = (
        "cwd", "model", "thinking", "permission_mode", "session", "session_dir", "broker", "max_turns", "limits",
        "fallback_model", "extra_tools", "system_prompt", "config", "sandbox", "task_depth",
    )  # fmt: skip

    def __init__(
        self,
        cwd: str,
        model: str | None = None,
        thinking: str | None = None,
        permission_mode: str | None = None,
        session: str = "new",
        session_dir: str | None = None,
        broker: ApprovalBroker | None = None,
        max_turns: int | None = None,
        limits: Limits | None = None,
        fallback_model: str | None = None,
        extra_tools: list[Tool] | None = None,
        system_prompt: str | None = None,
        config: Any = None,
        sandbox: str | None = None,
        task_depth: int = 0,
    ) -> None:
        self.cwd = cwd
        self.model = model
        self.thinking = thinking
        self.permission_mode = permission_mode
        #: "new", "continue" (latest session of cwd, else new), "memory" (no file), or a session
        #: id / id prefix / path to resume
        self.session = session
        self.session_dir = session_dir
        #: who answers permission asks; None: unattended (every "ask" is denied with a reason)
        self.broker = broker
        self.max_turns = max_turns
        #: budgets over the config's ``limits.*`` (agent/guard.py)
        self.limits = limits
        #: the fallback model over the config's ``fallbackModel``
        self.fallback_model = fallback_model
        self.extra_tools: list[Tool] = extra_tools if extra_tools is not None else []
        self.system_prompt = system_prompt
        self.config = config
        #: the OS sandbox for bash: "auto" or "off" replaces the config's ``sandbox.bash`` ("auto"
        #: also its ``sandbox.enabled``); None reads them (the CLI). The SDK passes "off" unless
        #: asked otherwise.
        self.sandbox = sandbox
        #: sub-agent depth of this session (0: top level; a task's child is 1) -- agent/subagents
        self.task_depth = task_depth

    def __repr__(self) -> str:
        return f"AgentOptions(cwd={self.cwd!r}, model={self.model!r}, session={self.session!r})"


class AgentArgs(Protocol):
    """The agent options of the command line (``ama [options]``), as argparse parses them."""

    model: str | None
    thinking: str | None
    permission_mode: str | None
    resume: str | None
    continue_: bool
    no_session: bool
    session_dir: str | None
    max_turns: int | None


def session_choice(args: AgentArgs) -> str:
    """``new``, ``continue``, ``memory``, or the session to resume (``""``: pick one)."""
    if args.no_session and (args.resume is not None or args.continue_):
        raise InvalidArguments("--no-session cannot be combined with --resume or --continue")
    if args.resume is not None and args.continue_:
        raise InvalidArguments("--resume and --continue are exclusive")
    if args.no_session:
        return "memory"
    if args.continue_:
        return "continue"
    if args.resume is not None:
        return args.resume
    return "new"


def agent_options(args: AgentArgs, *, broker: Any = None) -> AgentOptions:
    from ama.agent.limits import Limits

    choice = session_choice(args)
    if choice == "" and broker is None:
        raise InvalidArguments("--resume needs a session id in this mode (list them with: ama sessions list)")
    return AgentOptions(
        cwd=os.getcwd(),
        model=args.model,
        thinking=args.thinking,
        permission_mode=args.permission_mode,
        session=choice,
        session_dir=args.session_dir,
        broker=broker,
        max_turns=args.max_turns,
        limits=Limits.checked(
            max_cost=getattr(args, "max_cost", None),
            max_tokens=getattr(args, "max_tokens", None),
            max_wall_time=getattr(args, "max_wall_time", None),
        ),
        fallback_model=getattr(args, "fallback_model", None),
    )
