"""Agent options from the command line, shared by every interface (print, interactive, RPC,
ACP): which session to open and the options :func:`ama.agent.compose.build_agent` takes."""

from __future__ import annotations

import os
from typing import Any, Protocol

from ama.agent.compose import AgentOptions
from ama.agent.guard import Limits
from ama.errors import InvalidArguments


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
