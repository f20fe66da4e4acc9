"""Drive `ama --mode acp` as a subprocess through the agent-client-protocol package's client side."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp.meta import PROTOCOL_VERSION
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse
from acp.stdio import spawn_agent_process


class Client:
    """An ACP client that records every update and answers permission requests in order
    from ``answers`` (option ids; ``"cancelled"`` for the cancelled outcome)."""

    def __init__(self, answers: list[str] | None = None) -> None:
        self.updates: list[tuple[str, dict[str, Any]]] = []
        self.asks: list[dict[str, Any]] = []
        self.answers = list(answers or [])
        self.on_update: Callable[[dict[str, Any]], None] | None = None
        self.on_ask: Callable[[dict[str, Any]], Any] | None = None
        self.init: Any = None  # the initialize response

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        u = update.model_dump(mode="json", by_alias=True, exclude_none=True)
        self.updates.append((session_id, u))
        if self.on_update is not None:
            self.on_update(u)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> Any:
        ask = {
            "sessionId": session_id,
            "toolCall": tool_call.model_dump(mode="json", by_alias=True, exclude_none=True),
            "options": [o.model_dump(mode="json", by_alias=True) for o in options],
        }
        self.asks.append(ask)
        if self.on_ask is not None:
            await self.on_ask(ask)
        answer = self.answers.pop(0)
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))

    def take(self) -> list[dict[str, Any]]:
        """The updates so far (and forget them)."""
        out = [u for _, u in self.updates]
        self.updates.clear()
        return out


def of_kind(updates: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] == kind]


def text_of(updates: list[dict[str, Any]], kind: str = "agent_message_chunk") -> str:
    return "".join(u["content"]["text"] for u in of_kind(updates, kind))


def tool_calls(updates: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """toolCallId -> its tool_call and tool_call_update updates, in order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for u in updates:
        if u["sessionUpdate"] in ("tool_call", "tool_call_update"):
            out.setdefault(u["toolCallId"], []).append(u)
    return out


def statuses(updates: list[dict[str, Any]]) -> list[str]:
    return [u["status"] for u in updates if "status" in u]


@asynccontextmanager
async def ama_acp(client: Client, cwd: Path, *args: str, timeout: float = 60) -> AsyncIterator[Any]:
    """An initialized connection to `python -m ama --mode acp ARGS` started in ``cwd``."""
    log = open(cwd / "ama-acp.stderr", "ab")  # noqa: SIM115 - closed below
    try:
        async with asyncio.timeout(timeout):
            async with spawn_agent_process(
                client, sys.executable, "-m", "ama", "--mode", "acp", *args,
                cwd=cwd, env=dict(os.environ),
                # ama exits when stdin closes; on a loaded machine that can take over the default 2 s
                transport_kwargs={"stderr": log, "shutdown_timeout": 30},
            ) as (conn, _proc):  # fmt: skip
                client.init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
                yield conn
    finally:
        log.close()
