"""``RpcClient``: drive an ``ama --mode rpc`` subprocess with the SDK's method names.

    async with RpcClient(cwd=".", args=["--model", "anthropic/claude-sonnet-4-5"]) as client:
        reply = await client.prompt("list the files here")   # waits for agent_settled
        print(reply["text"])

Events arrive on ``client.events()``; ``approve`` (an async callback, as in the SDK) answers
permission requests (the client then declares the ``approvals`` capability).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from ama.errors import AmaError


class RpcClient:
    def __init__(
        self,
        *,
        cwd: str = ".",
        args: list[str] | None = None,
        approve: Callable[[dict[str, Any]], Awaitable[str]] | None = None,
        command: list[str] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.cwd = cwd
        self.argv = (command or [sys.executable, "-m", "ama"]) + ["--mode", "rpc", *(args or [])]
        self.approve = approve
        self.env = env
        self.proc: asyncio.subprocess.Process | None = None
        self.hello: dict[str, Any] = {}
        self.session: dict[str, Any] = {}
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future] = {}
        self._queues: list[asyncio.Queue] = []
        self._settled = asyncio.Event()
        self._reader: asyncio.Task | None = None
        self._started = asyncio.Event()

    async def start(self) -> RpcClient:
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv, cwd=self.cwd, env=self.env, limit=64 * 1024 * 1024,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        self._reader = asyncio.create_task(self._read())
        await self._started.wait()
        if self.approve is not None:
            await self.call("set_client_capabilities", capabilities=["approvals"])
        return self

    async def __aenter__(self) -> RpcClient:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _read(self) -> None:
        assert self.proc and self.proc.stdout
        async for raw in self.proc.stdout:
            msg = json.loads(raw)
            t = msg.get("type")
            if t == "hello":
                self.hello = msg
            elif t == "session_start":
                self.session = msg
                self._started.set()
            elif t == "response":
                fut = self._pending.pop(str(msg.get("id")), None)
                if fut is not None and not fut.done():
                    fut.set_result(msg)
            elif t == "agent_settled":
                self._settled.set()
            elif t == "permission_request" and self.approve is not None:
                asyncio.create_task(self._answer(msg))
            for q in self._queues:
                q.put_nowait(msg)
        self._started.set()
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(AmaError("closed", "the ama process exited"))
        for q in self._queues:
            q.put_nowait(None)

    async def _answer(self, req: dict[str, Any]) -> None:
        assert self.approve is not None
        decision = await self.approve(req)
        await self.call("permission_response", requestId=req["requestId"], decision=str(decision))

    async def call(self, command: str, **params: Any) -> dict[str, Any]:
        """Send one command; its ``data``, or AmaError with the response's code."""
        assert self.proc and self.proc.stdin
        rid = f"c{next(self._ids)}"
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        self.proc.stdin.write(json.dumps({"type": command, "id": rid, **params}).encode() + b"\n")
        await self.proc.stdin.drain()
        resp = await fut
        if not resp.get("success"):
            err = resp.get("error") or {}
            raise AmaError(err.get("code", "error"), err.get("message", "request failed"))
        return resp.get("data") or {}

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        q: asyncio.Queue = asyncio.Queue()
        self._queues.append(q)
        try:
            while (ev := await q.get()) is not None:
                yield ev
        finally:
            self._queues.remove(q)

    # --- the SDK's names ----------------------------------------------------------------

    async def prompt(self, text: str, images: list[dict] | None = None) -> dict[str, Any]:
        """Run a prompt to ``agent_settled``; returns ``{text}`` (the last assistant text)."""
        self._settled.clear()
        params: dict[str, Any] = {"message": text}
        if images:
            params["images"] = images
        await self.call("prompt", **params)
        await self._settled.wait()
        return await self.call("get_last_assistant_text")

    async def steer(self, text: str) -> dict[str, Any]:
        return await self.call("steer", message=text)

    async def follow_up(self, text: str) -> dict[str, Any]:
        return await self.call("follow_up", message=text)

    async def abort(self) -> dict[str, Any]:
        return await self.call("abort")

    async def rewind_points(self) -> list[dict[str, Any]]:
        return (await self.call("get_rewind_points"))["points"]

    async def rewind(self, entry_id: str, mode: str = "both", **kw: Any) -> dict[str, Any]:
        return await self.call("rewind", entryId=entry_id, mode=mode, **kw)

    async def fork(self, entry_id: str) -> dict[str, Any]:
        return await self.call("fork", entryId=entry_id)

    async def entries(self, since: str | None = None) -> dict[str, Any]:
        return await self.call("get_entries", **({"since": since} if since else {}))

    async def tree(self) -> dict[str, Any]:
        return await self.call("get_tree")

    async def stats(self) -> dict[str, Any]:
        return await self.call("get_session_stats")

    async def state(self) -> dict[str, Any]:
        return await self.call("get_state")

    async def get_tasks(self) -> list[dict[str, Any]]:
        return list((await self.call("get_tasks"))["tasks"])

    async def get_agents(self) -> list[dict[str, Any]]:
        return list((await self.call("get_agents"))["agents"])

    async def close(self) -> int:
        """Close stdin (the server finishes a running prompt) and wait for the exit code."""
        if self.proc is None:
            return 0
        if self.proc.stdin and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        code = await self.proc.wait()
        if self._reader is not None:
            await self._reader
        return code
