"""One ACP session = one ``AgentSession``: its updates in order, its approvals, its prompts.

Agent events arrive synchronously; ``Outbox`` queues the mapped updates and one task sends
them (``session/update`` notifications) in order.  Before a permission request and before a
prompt's response the outbox is drained, so the client has seen every update of the turn.
Consecutive output updates of one running tool call are merged while they wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ama.agent.events import plain
from ama.permissions import Answer
from ama.rpc import acp_config, acp_history, acp_map, acp_plan, acp_prompt, acp_usage

if TYPE_CHECKING:
    from ama.agent.session import AgentSession

log = logging.getLogger("ama.acp")
CLOSE_DRAIN_S = 5.0


class Outbox:
    def __init__(self, send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        self._send = send
        self._items: deque[dict[str, Any]] = deque()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task = asyncio.ensure_future(self._run())

    def put(self, update: dict[str, Any]) -> None:
        last = self._items[-1] if self._items else None
        if (
            last is not None
            and update.get("sessionUpdate") == "tool_call_update" == last.get("sessionUpdate")
            and update.get("toolCallId") == last.get("toolCallId")
            and "status" not in update
        ):
            last.update(update)  # a newer "output so far" replaces the waiting one
            return
        self._items.append(update)
        self._idle.clear()
        self._wake.set()

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._items:
                item = self._items.popleft()
                try:
                    await self._send(item)
                except asyncio.CancelledError:
                    raise
                except ConnectionError:
                    pass  # the client is gone; the session is closing
                except Exception as exc:  # a bad update must not stop the rest
                    log.warning("session/update %s not sent: %s", item.get("sessionUpdate"), exc)
            self._idle.set()

    async def drain(self) -> None:
        await self._idle.wait()

    def close(self) -> None:
        self._task.cancel()
        self._items.clear()
        self._idle.set()  # nobody waits forever on a closed outbox


class AcpBroker:
    """ama approval asks -> ``session/request_permission``."""

    def __init__(self) -> None:
        self.session: AcpSession | None = None

    async def ask(self, request: dict[str, Any]) -> Answer:
        s = self.session
        if s is None:
            return Answer("deny", "No client is connected to approve this call.")
        await s.outbox.drain()  # the client knows the tool call before it is asked about it
        try:
            resp = await s.conn.request_permission(
                session_id=s.acp_id,
                tool_call=s.schema.ToolCallUpdate.model_validate(s.mapper.permission_tool_call(request)),
                options=[s.schema.PermissionOption.model_validate(o) for o in acp_map.PERMISSION_OPTIONS],
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("session/request_permission failed: %s", exc)
            return Answer("deny", f"The approval request failed: {exc}")
        outcome = resp.outcome
        if getattr(outcome, "outcome", None) == "selected":
            kind = acp_map.ANSWERS.get(outcome.option_id)
            if kind is not None:
                return Answer(kind)  # type: ignore[arg-type]
        return Answer("deny")


class AcpSession:
    def __init__(self, acp_id: str, agent: AgentSession, conn: Any, broker: AcpBroker) -> None:
        import acp.schema as schema

        self.acp_id = acp_id
        self.agent = agent
        self.conn = conn
        self.schema = schema
        self.mapper = acp_map.EventMapper(cwd=agent.cwd)
        self.outbox = Outbox(self._send)
        self.cancelled = False
        #: a plan was proposed in the running prompt: the client is asked when it settles
        self.proposed = False
        #: the client is being asked about a proposed plan (the prompt is still open)
        self.asking = False
        #: opens a new ama session for this ACP session (a plan approved into a fresh session)
        self.opener: Callable[[], AgentSession] | None = None
        self.usage_mark = 0  # entries before the running prompt (acp_usage)
        broker.session = self
        self._unsubscribe = agent.subscribe(self._on_event)
        agent.plans.client_answers = lambda: True  # acp_plan.py asks the client

    async def _send(self, update: dict[str, Any]) -> None:
        note = self.schema.SessionNotification.model_validate({"sessionId": self.acp_id, "update": update})
        await self.conn.session_update(session_id=self.acp_id, update=note.update)

    def _on_event(self, ev: dict[str, Any]) -> None:
        if ev.get("type") == "plan_proposed":
            self.proposed = True
        for update in self.mapper.on_event(ev):
            self.outbox.put(update)
        if ev.get("type") in acp_config.CHANGE_EVENTS:
            self.outbox.put({"sessionUpdate": "config_option_update", "configOptions": acp_config.config_options(self.agent)})
        if ev.get("type") == "auto_retry_start":
            log.warning("%s; retrying in %.1fs", ev.get("errorMessage"), (ev.get("delayMs") or 0) / 1000)

    def modes(self) -> Any:
        return self.schema.SessionModeState.model_validate(
            {"currentModeId": self.agent.permissions.mode, "availableModes": acp_map.MODES}
        )

    async def replay(self) -> None:
        """Send the session's conversation as updates (``session/load``)."""
        messages = plain(self.agent.session.context().messages)
        todo = self.agent.session.latest_custom("ama.todo")
        for update in acp_history.history_updates(messages, self.agent.cwd, todo):
            self.outbox.put(update)
        await self.outbox.drain()

    async def prompt(self, blocks: list[dict[str, Any]]) -> str:
        """Run one prompt to its end; returns the ACP stop reason (raises for a failure)."""
        from ama.errors import AmaError, Busy
        from ama.messages import ImageContent

        if self.agent.busy or self.asking:  # asking: the prompt waits for the plan's answer
            raise Busy("a prompt is already running in this session; cancel it first")
        text, images = acp_prompt.prompt_input(blocks)
        imgs = [ImageContent(data=i["data"], mime_type=i["mimeType"]) for i in images]
        self.cancelled = False
        self.proposed = False
        self.usage_mark = acp_usage.mark(self.agent.session)
        task = self.agent.start(text, imgs or None)
        assert task is not None
        try:
            result = await asyncio.shield(task)
            result = await acp_plan.settle(self, result)  # a proposed plan: ask, then execute it
        except asyncio.CancelledError:  # the connection is closing: stop the run
            self.agent.abort()
            await self.agent.wait_idle()
            raise
        finally:
            await self.outbox.drain()
        rec, last = result.record, result.message
        error = last.error_message if last is not None and isinstance(last.error_message, str) else None
        reason = acp_prompt.stop_reason(
            rec.status,
            rec.terminal_reason,
            last.stop_reason if last else None,
            error,
            cancelled=self.cancelled,
        )
        if reason is None:
            raise AmaError(rec.error_code or "run_failed", rec.error_message or error or "the run failed")
        return reason

    async def fresh_agent(self) -> None:
        """Put a new ama session behind this ACP session (the old one is closed)."""
        from ama.errors import AmaError

        if self.opener is None:
            raise AmaError("unsupported", "this ACP session cannot open a new session")
        agent = self.opener()
        old = self.agent
        self._unsubscribe()
        self.agent = agent
        self.usage_mark = 0  # the prompt's usage goes on in the new session's entries
        self._unsubscribe = agent.subscribe(self._on_event)
        agent.plans.client_answers = lambda: True
        await old.close()

    def cancel(self) -> None:
        if self.asking:  # a plan approval is open: it counts as not answered
            self.cancelled = True
        if self.agent.busy:
            self.cancelled = True
            self.agent.abort()

    async def close(self) -> None:
        """Stop a running prompt (it answers ``cancelled``), then release the session."""
        self.cancel()
        await self.agent.wait_idle()
        with contextlib.suppress(TimeoutError):  # a client that stopped reading must not hold us
            await asyncio.wait_for(self.outbox.drain(), CLOSE_DRAIN_S)
        self._unsubscribe()
        self.outbox.close()
        await self.agent.close()
