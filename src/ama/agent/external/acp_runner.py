"""Run a task on an ACP agent (``acp:<program>``; ``acp:ama`` is this ama in ``--mode acp``)
through the agent-client-protocol package's client side: start the program over stdio,
``initialize``, ``session/new`` or ``session/load``, ``session/prompt``; stream its updates to
the host, hand its permission requests to the host, ``session/cancel`` on the cancel event,
and stop the process (group) at the end whatever happened."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from ama.agent.external import acp_events
from ama.agent.external.base import (
    ExternalTaskHost,
    ExternalTaskRequest,
    ExternalTaskResult,
    Turn,
    Usage,
    failed,
    record_session,
    record_usage,
    result,
)
from ama.agent.external.proc import Child, race
from ama.agent.external.settings import AgentSpec

INIT_TIMEOUT = 60.0  # a child ama on a loaded machine takes a few seconds to start
CANCEL_GRACE = 10.0  # after session/cancel, how long the prompt may take to answer


class _Client:
    """The ACP client side: forwards updates of our session and asks the host."""

    def __init__(self, req: ExternalTaskRequest, host: ExternalTaskHost, cancel: asyncio.Event) -> None:
        self.req = req
        self.host = host
        self.cancel = cancel
        self.session_id: str | None = None
        self.forward = False  # off while session/load replays the history
        self.turn = Turn()
        self.cost_seen: float | None = None  # the latest cumulative session cost (usage_update)
        self.cost_before: float | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        u = update.model_dump(mode="json", by_alias=True, exclude_none=True)
        if session_id != self.session_id and self.session_id is not None:
            return
        if u.get("sessionUpdate") == "usage_update":
            cost = (u.get("cost") or {}).get("amount")
            if isinstance(cost, int | float):
                self.cost_seen = float(cost)
            return
        if not self.forward:
            return
        payload = acp_events.update_payload(u)
        if payload is None:
            return
        if payload["kind"] == "text":
            self.turn.text.append(payload["text"])
        self.host.update(payload)

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        call = tool_call.model_dump(mode="json", by_alias=True, exclude_none=True)
        opts = [o.model_dump(mode="json", by_alias=True, exclude_none=True) for o in options]
        ask = acp_events.permission_request(self.req.agent, self.req.task_id, session_id, call, opts)
        answered, answer = await race(self.host.ask_permission(ask), self.cancel)
        chosen = acp_events.chosen_option(answer or "", opts) if answered else None
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=chosen))


async def run_acp(
    req: ExternalTaskRequest, spec: AgentSpec, argv: list[str], host: ExternalTaskHost, cancel: asyncio.Event
) -> ExternalTaskResult:
    try:
        import acp  # noqa: F401
    except ImportError:
        return failed(req, f"{req.agent} needs the agent-client-protocol package: install ama[acp]")
    if spec.is_self and req.model:
        argv = [*argv, "--model", req.model]
    try:
        child = await Child.start(argv, cwd=req.cwd, env=spec.environ())
    except OSError as e:
        return failed(req, f"{req.agent}: cannot start {argv[0]}: {e.strerror or e}")
    client = _Client(req, host, cancel)
    try:
        return await _drive(req, spec, child, client, cancel)
    finally:
        await child.stop()


async def _drive(
    req: ExternalTaskRequest, spec: AgentSpec, child: Child, client: _Client, cancel: asyncio.Event
) -> ExternalTaskResult:
    from acp.client.connection import ClientSideConnection
    from acp.exceptions import RequestError
    from acp.meta import PROTOCOL_VERSION
    from acp.schema import ClientCapabilities, Implementation

    assert child.proc.stdin is not None and child.proc.stdout is not None
    conn = ClientSideConnection(client, child.proc.stdin, child.proc.stdout)  # type: ignore[arg-type]
    turn = client.turn
    turn.session_id = req.session_id
    step = "initialize"
    try:
        async with asyncio.timeout(INIT_TIMEOUT):
            ok, init = await race(
                conn.initialize(
                    protocol_version=PROTOCOL_VERSION,
                    client_capabilities=ClientCapabilities(),
                    client_info=Implementation(name="ama", version=_version()),
                ),
                cancel,
            )
            if not ok:
                return result("aborted", turn, "cancelled before the agent started")
            step = "session/load" if req.session_id else "session/new"
            ok, sid, options = await _open_session(conn, init, req, cancel)
            if not ok:
                return result("aborted", turn, "cancelled before the agent started")
            if spec.is_self:  # another ama: the parent's permission mode, so that it asks as this one would
                step = "session/set_mode"
                await _follow_mode(conn, sid, getattr(client.host, "permission_mode", None), options)
        turn.session_id = client.session_id = sid
        record_session(client.host, req, sid)
        if req.model and not spec.is_self:
            step = "session/set_config_option"
            await _set_model(conn, sid, req, options)
        client.cost_before = client.cost_seen
        client.forward = True
        step = "session/prompt"
        from acp.helpers import text_block

        prompt = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block(req.prompt)]))
        stopper = asyncio.ensure_future(cancel.wait())
        try:
            await asyncio.wait({prompt, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopper.cancel()
        if not prompt.done():
            with contextlib.suppress(Exception):
                await conn.cancel(session_id=sid)
            try:
                await asyncio.wait_for(asyncio.shield(prompt), CANCEL_GRACE)
            except Exception:
                prompt.cancel()
            _finish_usage(client, prompt)
            return result("aborted", turn, "cancelled")
        resp = prompt.result()
        _finish_usage(client, prompt)
    except TimeoutError:
        return result("failed", turn, f"{req.agent} did not answer {step} within {INIT_TIMEOUT:g} s")
    except _Refused as e:
        return result("failed", turn, str(e))
    except RequestError as e:
        detail = f" ({e.data})" if e.data else ""
        return result("failed", turn, f"{req.agent} refused {step}: {e}{detail}")
    except (ConnectionError, BrokenPipeError):
        await child.wait(2.0)
        where = "mid-turn" if step == "session/prompt" else f"during {step}"
        return result("failed", turn, f"{req.agent} {child.exit_note()} {where}")
    except Exception as e:  # a reply the protocol models cannot read: the agent's fault, not ama's
        return result("failed", turn, f"{req.agent} sent an unreadable reply to {step}: {type(e).__name__}: {e}")
    finally:
        with contextlib.suppress(Exception):
            await conn.close()
    reason = resp.stop_reason
    if reason == "cancelled":
        return result("aborted", turn, "cancelled by the agent")
    if reason in ("end_turn", "max_tokens"):
        return result("completed", turn)
    if reason == "max_turn_requests":
        return result("failed", turn, f"{req.agent} stopped at its turn limit")
    return result("failed", turn, f"{req.agent} stopped: {reason}")


class _Refused(Exception):
    pass


async def _open_session(conn: Any, init: Any, req: ExternalTaskRequest, cancel: asyncio.Event) -> tuple[bool, str, list[dict[str, Any]]]:
    caps = init.agent_capabilities
    if req.session_id is None:
        ok, resp = await race(conn.new_session(cwd=req.cwd, mcp_servers=[]), cancel)
        if not ok:
            return False, "", []
        sid = resp.session_id
    elif caps is not None and caps.load_session:
        ok, resp = await race(conn.load_session(cwd=req.cwd, session_id=req.session_id, mcp_servers=[]), cancel)
        if not ok:
            return False, "", []
        sid = req.session_id
    elif caps is not None and caps.session_capabilities is not None and caps.session_capabilities.resume is not None:
        ok, resp = await race(conn.resume_session(cwd=req.cwd, session_id=req.session_id), cancel)
        if not ok:
            return False, "", []
        sid = req.session_id
    else:
        raise _Refused(f"{req.agent} cannot continue a session (it offers neither session/load nor session/resume)")
    dumped = resp.model_dump(mode="json", by_alias=True, exclude_none=True) if resp is not None else {}
    return True, sid, list(dumped.get("configOptions") or [])


async def _follow_mode(conn: Any, sid: str, mode: str | None, options: list[dict[str, Any]]) -> None:
    """Set the child's session mode to ``mode`` when its mode option offers it."""
    if not mode:
        return
    for opt in options:
        if opt.get("category") == "mode" or opt.get("id") == "mode":
            values = {o.get("value") for o in opt.get("options") or [] if isinstance(o, dict)}
            if mode in values and opt.get("currentValue") != mode:
                await conn.set_session_mode(session_id=sid, mode_id=mode)
            return


async def _set_model(conn: Any, sid: str, req: ExternalTaskRequest, options: list[dict[str, Any]]) -> None:
    for opt in options:
        if opt.get("category") == "model":
            await conn.set_config_option(config_id=opt["id"], session_id=sid, value=req.model)
            return
    raise _Refused(f"{req.agent} offers no model option; set its model in agents.external.agents[{req.agent!r}].args")


def _finish_usage(client: _Client, prompt: asyncio.Future[Any]) -> None:
    """Usage of the turn and its record: tokens from the response's ``usage``; cost from the
    ``usage_update`` notifications (their cumulative cost's change), else the response's
    ``_meta.cost``."""
    usage = Usage()
    resp = prompt.result() if prompt.done() and not prompt.cancelled() and prompt.exception() is None else None
    u = getattr(resp, "usage", None)
    if u is not None:
        usage = Usage(
            input=u.input_tokens,
            output=u.output_tokens,
            cache_read=u.cached_read_tokens or 0,
            cache_write=u.cached_write_tokens or 0,
            known=True,
        )
    meta = getattr(resp, "field_meta", None) or {}
    cost = meta.get("cost") if isinstance(meta, dict) else None
    if client.cost_seen is not None:
        usage.cost = max(0.0, client.cost_seen - (client.cost_before or 0.0))
    elif isinstance(cost, dict) and isinstance(cost.get("amount"), int | float):
        usage.cost = float(cost["amount"])  # ama's own prompt responses (rpc/acp_usage.py)
    client.turn.usage.add(usage)
    if client.session_id is not None:
        record_usage(client.host, client.req, client.session_id, usage)


def _version() -> str:
    from ama import __version__

    return str(__version__)
