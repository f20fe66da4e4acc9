"""``ama --mode acp``: ama as an Agent Client Protocol agent (editors such as Zed host it).

JSON-RPC 2.0 over newline-delimited JSON on stdin/stdout, spoken through the
``agent-client-protocol`` package (the ``acp`` extra; imported only in this mode).

- ``initialize``: protocol version 1, ``loadSession`` (unless ``--no-session``), images and
  embedded context in prompts, ``session/list``.
- ``session/new`` -> a new ama session in the given cwd (its id is the ACP session id);
  ``mcpServers`` are ignored (ama has no MCP client).
- ``session/load`` -> an ama session (id, unique prefix or path), its conversation replayed
  as ``session/update`` notifications before the response.
- ``session/prompt`` -> ``AgentSession.start``; events stream as updates (acp_map.py; history: acp_history.py); the
  response's ``stopReason`` says how the run ended; a failed run is a JSON-RPC error.
- ``session/cancel`` -> ``abort()``; ``session/set_mode`` -> the permission mode.
- Permission asks -> ``session/request_permission`` (acp_session.py).

stdout carries protocol messages only: the process's fd 1 is pointed at stderr before
anything else runs, and the protocol writes to a private duplicate of the original stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from typing import Any

from ama.errors import AmaError, InvalidArguments

PROTOCOL_VERSION = 1
STDIO_LIMIT = 50 * 1024 * 1024  # a prompt with images is one line
log = logging.getLogger("ama.acp")


def _request_error(err: AmaError) -> Exception:
    from acp import RequestError

    code = {"invalid_arguments": -32602, "ambiguous": -32602, "not_found": -32002}.get(err.code, -32603)
    return RequestError(code, err.message, {"code": err.code})


class AcpAgent:
    """The ACP agent side: one object per connection, any number of sessions."""

    def __init__(self, args: argparse.Namespace) -> None:
        from ama.config.paths import sessions_dir

        self.args = args
        self.conn: Any = None
        self.sessions: dict[str, Any] = {}  # ACP session id -> AcpSession
        self.sessions_dir = str(sessions_dir(args.session_dir))

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # --- set-up -------------------------------------------------------------------------

    async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
        from acp.schema import InitializeResponse

        from ama import __version__

        return InitializeResponse.model_validate(
            {
                "protocolVersion": min(protocol_version, PROTOCOL_VERSION),
                "agentCapabilities": {
                    "loadSession": not self.args.no_session,
                    "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
                    "sessionCapabilities": {} if self.args.no_session else {"list": {}},
                },
                "agentInfo": {"name": "ama", "title": "ama", "version": __version__},
                "authMethods": [],
            }
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None  # no auth methods: providers take their keys from the environment/config

    def _open(self, cwd: str, session: str, acp_id: str | None = None) -> Any:
        from ama.agent.compose import build_agent
        from ama.agent.options import agent_options
        from ama.rpc.acp_session import AcpBroker, AcpSession

        if not os.path.isabs(cwd):
            raise InvalidArguments(f"cwd must be an absolute path, got {cwd!r}")
        if not os.path.isdir(cwd):
            raise InvalidArguments(f"cwd {cwd!r} is not a directory")
        broker = AcpBroker()
        opts = agent_options(self.args, broker=broker)
        opts.cwd = cwd
        opts.session = session
        agent, warnings = build_agent(opts)
        for w in warnings:
            log.warning("%s", w)
        s = AcpSession(acp_id or agent.session.id, agent, self.conn, broker)
        self.sessions[s.acp_id] = s
        return s

    def _note_mcp(self, mcp_servers: Any) -> None:
        if mcp_servers:
            log.warning("ignoring %d MCP server(s) from the client: ama has no MCP client", len(mcp_servers))

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> Any:
        from acp.schema import NewSessionResponse

        self._note_mcp(mcp_servers)
        try:
            s = self._open(cwd, "memory" if self.args.no_session else "new")
        except AmaError as err:
            raise _request_error(err) from None
        return NewSessionResponse(session_id=s.acp_id, modes=s.modes())

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any) -> Any:
        from acp.schema import LoadSessionResponse

        from ama.session.catalog import resolve

        self._note_mcp(mcp_servers)
        if self.args.no_session:
            raise _request_error(
                AmaError("unsupported", "sessions are not stored (--no-session): nothing to load")
            )
        try:
            found = resolve(self.sessions_dir, session_id)
            s = next((x for x in self.sessions.values() if x.agent.session.id == found.id), None)
            if s is None:  # the session's own directory, where its files and tools live
                s = self._open(found.cwd if os.path.isdir(found.cwd) else cwd, found.path, session_id)
            elif s.agent.busy:
                raise AmaError("busy", f"session {found.id} is running a prompt")
            else:  # already open here: the same agent; its updates now go to this id
                s.acp_id = session_id
                self.sessions[session_id] = s
        except AmaError as err:
            raise _request_error(err) from None
        await s.replay()
        return LoadSessionResponse(modes=s.modes())

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any) -> Any:
        from acp.schema import ListSessionsResponse

        from ama.session.catalog import list_page, scan

        try:
            page = list_page(scan(self.sessions_dir), cwd=cwd, cursor=cursor, limit=50)
        except AmaError as err:
            raise _request_error(err) from None
        sessions = [
            {
                "sessionId": x.id,
                "cwd": x.cwd,
                "title": x.name or x.first_message or None,
                "updatedAt": x.last_message_time,
            }
            for x in page.sessions
        ]
        return ListSessionsResponse.model_validate({"sessions": sessions, "nextCursor": page.next_cursor})

    # --- a session ----------------------------------------------------------------------

    def _session(self, session_id: str) -> Any:
        s = self.sessions.get(session_id)
        if s is None:
            raise _request_error(
                AmaError("not_found", f"unknown session {session_id!r}: create or load it first")
            )
        return s

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> Any:
        from acp.schema import SetSessionModeResponse

        s = self._session(session_id)
        try:
            s.agent.set_permission_mode(mode_id)
        except AmaError as err:
            raise _request_error(err) from None
        await s.outbox.drain()
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        from acp.schema import PromptResponse

        s = self._session(session_id)
        blocks = [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in prompt]
        try:
            reason = await s.prompt(blocks)
        except AmaError as err:
            raise _request_error(err) from None
        return PromptResponse(stop_reason=reason)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        s = self.sessions.get(session_id)
        if s is not None:
            s.cancel()

    async def close(self) -> None:
        for s in {id(s): s for s in self.sessions.values()}.values():
            try:
                await s.close()
            except Exception as exc:
                log.warning("closing session %s: %s", s.acp_id, exc)
        self.sessions.clear()


async def _stdio(proto_out: Any) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=STDIO_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, proto_out)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


async def _serve(args: argparse.Namespace, proto_out: Any) -> int:
    from acp import run_agent

    reader, writer = await _stdio(proto_out)
    agent = AcpAgent(args)
    try:
        await run_agent(agent, writer, reader)  # type: ignore[arg-type]  # a structural Agent
    finally:
        await agent.close()
    return 0


def acp_main(args: argparse.Namespace) -> int:
    """Serve ACP on stdin/stdout until the client closes stdin."""
    try:
        import acp  # noqa: F401
    except ImportError:
        raise InvalidArguments(
            "--mode acp needs the agent-client-protocol package: install ama[acp] (pip install 'ama[acp]')"
        ) from None
    if args.print or args.prompt:
        raise InvalidArguments(
            "--mode acp takes its prompts from the client, not from -p or a PROMPT argument"
        )
    if args.resume is not None or args.continue_ or args.from_:
        raise InvalidArguments(
            "--mode acp opens sessions on the client's request (session/new, session/load)"
        )
    logging.basicConfig(level=logging.WARNING, format="ama: acp: %(message)s", stream=sys.stderr)
    sys.stdout.flush()
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # anything else written to stdout (a stray print, a child) goes to stderr
    try:
        return asyncio.run(_serve(args, proto_out))
    finally:
        proto_out.close()
