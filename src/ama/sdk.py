"""Embed ama in a Python program: the same ``AgentSession`` the CLI uses.

    import asyncio
    from ama.sdk import create_agent

    async def main():
        agent = await create_agent(cwd=".", model="anthropic/claude-sonnet-4-5")
        result = await agent.prompt("list the files here")
        print(result.text)
        await agent.close()

    asyncio.run(main())

``create_agent`` takes the CLI's choices as keywords: ``model``, ``session`` (``"new"``,
``"memory"``, ``"continue"``, or an id / path to resume), ``permission_mode``, ``thinking``,
``tools`` (extra tools: objects with ``name``, ``description``, ``parameters``, ``read_only``,
``validate(args)`` and ``async execute(call_id, args, ctx, on_update)`` — see
``ama.tools.BuiltinTool``), ``approve`` (an async callback answering permission asks with
``"allow"``, ``"allow_session"`` or ``"deny"``; without it every ask is denied),
``session_dir``, ``system_prompt``, the budgets ``max_turns``, ``max_cost`` (USD),
``max_tokens`` and ``max_wall_time`` (seconds), ``fallback_model``, and ``sandbox`` (``"off"``,
the default: bash runs unsandboxed whatever ``sandbox.bash`` says in the config; ``"auto"``: bash
runs in the OS sandbox when bwrap / sandbox-exec works, as with ``sandbox.bash: auto``; the
``sandbox.network`` / ``writable`` / ``env`` settings still apply).  One prompt can override the
budgets with ``agent.prompt(text, limits=Limits(max_cost=0.5))``.  To drive ama in another process, use
``ama.rpc.client.RpcClient`` (same method names).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from typing import Literal as _Literal

from ama.agent.compose import AgentOptions, build_agent
from ama.agent.guard import Limits
from ama.agent.run import RunResult
from ama.agent.session import AgentSession
from ama.errors import AmaError
from ama.tools import BuiltinTool, ToolContext, ToolError, ToolResult

__all__ = [
    "AgentSession",
    "AmaError",
    "BuiltinTool",
    "create_agent",
    "Limits",
    "RunResult",
    "ToolContext",
    "ToolError",
    "ToolResult",
]


async def create_agent(
    *,
    cwd: str = ".",
    model: str | None = None,
    session: str = "new",
    permission_mode: str | None = None,
    thinking: str | None = None,
    tools: list[Any] | None = None,
    approve: Callable[[dict[str, Any]], Awaitable[Any]] | None = None,
    session_dir: str | None = None,
    system_prompt: str | None = None,
    max_turns: int | None = None,
    max_cost: float | None = None,
    max_tokens: int | None = None,
    max_wall_time: float | None = None,
    fallback_model: str | None = None,
    config: Any = None,
    sandbox: _Literal["auto", "off"] = "off",
) -> AgentSession:
    """Build an agent (call from a running event loop); configuration warnings are in
    ``agent.warnings``."""
    from ama.agent.approvals import CallbackBroker

    agent, warnings = build_agent(
        AgentOptions(
            cwd=cwd,
            model=model,
            thinking=thinking,
            permission_mode=permission_mode,
            session=session,
            session_dir=session_dir,
            broker=CallbackBroker(approve) if approve is not None else None,
            max_turns=max_turns,
            limits=Limits.checked(max_cost=max_cost, max_tokens=max_tokens, max_wall_time=max_wall_time, source="py"),
            fallback_model=fallback_model,
            extra_tools=list(tools or []),
            system_prompt=system_prompt,
            config=config,
            sandbox=sandbox,
        )
    )
    agent.warnings = warnings
    return agent
