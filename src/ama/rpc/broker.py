"""Approvals answered by the RPC client.

The client declares ``set_client_capabilities{capabilities:["approvals"]}`` to answer asks;
otherwise (or after stdin closed) every ask is denied at once.  ``permission_response`` for
an id not being asked yet is held and applied when that ask comes ("early answers").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # made before the event loop runs (rpc/start.py): imports on first use
    import asyncio

    from ama.permissions import Answer


class RpcBroker:
    def __init__(self) -> None:
        self.capabilities: set[str] = set()
        self.closed = False
        self._waiting: dict[str, asyncio.Future[Answer]] = {}
        self._early: dict[str, Answer] = {}

    @property
    def answers(self) -> bool:
        return "approvals" in self.capabilities and not self.closed

    async def ask(self, request: dict[str, Any]) -> Answer:
        import asyncio

        from ama.permissions import Answer

        rid = request["requestId"]
        if rid in self._early:
            return self._early.pop(rid)
        if not self.answers:
            why = "the client did not declare the approvals capability" if not self.closed else "the client disconnected"
            return Answer("deny", f"No one can approve this call ({why}).")
        fut: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = fut
        try:
            return await fut
        finally:
            self._waiting.pop(rid, None)

    def respond(self, request_id: str, answer: Answer) -> bool:
        """True if an ask was waiting for it; otherwise the answer is held."""
        fut = self._waiting.get(request_id)
        if fut is not None and not fut.done():
            fut.set_result(answer)
            return True
        self._early[request_id] = answer
        return False

    def close(self) -> None:
        """stdin closed: deny what is pending and every later ask."""
        from ama.permissions import Answer

        self.closed = True
        for fut in self._waiting.values():
            if not fut.done():
                fut.set_result(Answer("deny", "The client disconnected."))
