"""``ama --mode acp``: ama as an Agent Client Protocol agent (editors such as Zed host it).

JSON-RPC 2.0 over newline-delimited JSON on stdin/stdout, spoken through the
``agent-client-protocol`` package (the ``acp`` extra; imported only in this mode).

- ``initialize``: protocol version 1, ``loadSession`` (unless ``--no-session``), images and
  embedded context in prompts, ``session/list``, ``fork``, ``resume`` and ``close``.
- ``authenticate``: no methods are advertised, so every method id is Invalid params.
- ``session/new`` -> a new ama session in the given cwd (its id is the ACP session id);
  ``mcpServers`` are ignored (ama has no MCP client).
- ``session/load`` -> an ama session (id, unique prefix or path), its conversation replayed
  as ``session/update`` notifications before the response; ``session/resume`` the same
  without the replay; ``session/fork`` a copy of a session's branch in a new file;
  ``session/close`` stops the session's prompt and releases its file.
- ``session/prompt`` -> ``AgentSession.start``; events stream as updates (acp_map.py; history: acp_history.py); the
  response's ``stopReason`` says how the run ended; a failed run is a JSON-RPC error.
- ``session/cancel`` -> ``abort()``; ``session/set_mode`` -> the permission mode;
  ``session/set_config_option`` -> model, thinking level, permission mode (acp_config.py).
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
from ama.rpc import acp_config

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

        stored = not self.args.no_session
        session_caps: dict[str, Any] = {"close": {}}
        if stored:  # list, fork and resume work on session files
            session_caps.update({"list": {}, "fork": {}, "resume": {}})
        return InitializeResponse.model_validate(
            {
                "protocolVersion": min(protocol_version, PROTOCOL_VERSION),
                "agentCapabilities": {
                    "loadSession": stored,
                    "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
                    "sessionCapabilities": session_caps,
                },
                "agentInfo": {"name": "ama", "title": "ama", "version": __version__},
                "authMethods": [],
            }
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        """No auth methods are advertised (providers take their keys from the environment or
        the config), so every method id is unknown: Invalid params, naming it."""
        from acp import RequestError

        raise RequestError.invalid_params(
            {
                "methodId": method_id,
                "message": f"unknown authentication method {method_id!r}: ama advertises none "
                "(provider keys come from the environment or ama's config)",
            }
        )

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
        s.opener = lambda: self._fresh(cwd, broker)
        self.sessions[s.acp_id] = s
        return s

    def _fresh(self, cwd: str, broker: Any) -> Any:
        """A new ama session in ``cwd`` for an ACP session (a plan approved into a fresh one)."""
        from ama.agent.compose import build_agent
        from ama.agent.options import agent_options

        opts = agent_options(self.args, broker=broker)
        opts.cwd, opts.session = cwd, "memory" if self.args.no_session else "new"
        agent, warnings = build_agent(opts)
        for w in warnings:
            log.warning("%s", w)
        return agent

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
        return NewSessionResponse.model_validate(self._setup(s, sessionId=s.acp_id))

    def _setup(self, s: Any, **fields: Any) -> dict[str, Any]:
        """The session-setup response fields: modes and config options."""
        modes = s.modes().model_dump(mode="json", by_alias=True, exclude_none=True)
        commands = s.agent.prompts.acp_commands()
        if commands:  # after the response: the client knows the session id by then
            update = {"sessionUpdate": "available_commands_update", "availableCommands": commands}
            asyncio.get_running_loop().call_soon(s.outbox.put, update)
        return {**fields, "modes": modes, "configOptions": acp_config.config_options(s.agent)}

    def _attach(self, cwd: str, session_id: str) -> Any:
        """The AcpSession of a stored session (opened here, or the one already open)."""
        from ama.session.catalog import resolve

        if self.args.no_session:
            raise AmaError("unsupported", "sessions are not stored (--no-session): nothing to load or resume")
        found = resolve(self.sessions_dir, session_id)
        s = next((x for x in self.sessions.values() if x.agent.session.id == found.id), None)
        if s is None:  # the session's own directory, where its files and tools live
            return self._open(found.cwd if os.path.isdir(found.cwd) else cwd, found.path, session_id)
        if s.agent.busy:
            raise AmaError("busy", f"session {found.id} is running a prompt")
        s.acp_id = session_id  # already open here: the same agent; its updates now go to this id
        self.sessions[session_id] = s
        return s

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any) -> Any:
        from acp.schema import LoadSessionResponse

        self._note_mcp(mcp_servers)
        try:
            s = self._attach(cwd, session_id)
        except AmaError as err:
            raise _request_error(err) from None
        await s.replay()
        return LoadSessionResponse.model_validate(self._setup(s))

    async def resume_session(self, session_id: str, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> Any:
        """``session/load`` without the replay: the client already shows the conversation."""
        from acp.schema import ResumeSessionResponse

        self._note_mcp(mcp_servers)
        try:
            s = self._attach(cwd, session_id)
        except AmaError as err:
            raise _request_error(err) from None
        return ResumeSessionResponse.model_validate(self._setup(s))

    async def fork_session(self, session_id: str, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> Any:
        """A new session file holding the source's active branch (``ama sessions fork``); the
        source stays as it is.  The fork works in the source's directory when it exists."""
        from acp.schema import ForkSessionResponse

        from ama.session.catalog import resolve
        from ama.session.fork import fork_session

        self._note_mcp(mcp_servers)
        try:
            if self.args.no_session:
                raise AmaError("unsupported", "sessions are not stored (--no-session): nothing to fork")
            src = self.sessions.get(session_id)
            if src is not None:
                if src.agent.busy:
                    raise AmaError("busy", f"session {session_id} is running a prompt; fork it when it ends")
                path, sid, where = src.agent.session.path, src.agent.session.id, src.agent.cwd
            else:
                found = resolve(self.sessions_dir, session_id)
                path, sid, where = found.path, found.id, found.cwd
            if path is None:
                raise AmaError("unsupported", f"session {session_id} is in memory: nothing to fork")
            _new_id, new_path = fork_session(path, self.sessions_dir, expected_id=sid)
            s = self._open(where if os.path.isdir(where) else cwd, new_path)
        except AmaError as err:
            raise _request_error(err) from None
        return ForkSessionResponse.model_validate(self._setup(s, sessionId=s.acp_id))

    async def close_session(self, session_id: str, **kwargs: Any) -> Any:
        """Stop the session's prompt (it answers ``cancelled``), release its file."""
        from acp.schema import CloseSessionResponse

        s = self._session(session_id)
        for key in [k for k, v in self.sessions.items() if v is s]:
            del self.sessions[key]
        await s.close()
        return CloseSessionResponse()

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

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool, **kwargs: Any) -> Any:
        from acp.schema import SetSessionConfigOptionResponse

        s = self._session(session_id)
        try:
            acp_config.set_option(s.agent, config_id, value)
        except AmaError as err:
            raise _request_error(err) from None
        await s.outbox.drain()
        return SetSessionConfigOptionResponse.model_validate({"configOptions": acp_config.config_options(s.agent)})

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        from acp.schema import PromptResponse

        s = self._session(session_id)
        blocks = [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in prompt]
        try:
            reason = await s.prompt(blocks)
        except AmaError as err:
            raise _request_error(err) from None
        from ama.rpc.acp_usage import usage_since

        return PromptResponse.model_validate(
            {"stopReason": reason, **(usage_since(s.agent.session, s.usage_mark) or {})}
        )

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
    """The protocol's reader (stdin) and writer (``proto_out``), whatever they are: pipes,
    sockets, terminals, regular files (``< requests.jsonl > replies.jsonl``), ``/dev/null``."""
    from ama.rpc.stdin import open_reader, open_writer

    try:
        fd: int | None = sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):
        fd = None  # stdin closed
    reader = await open_reader(fd, STDIO_LIMIT)
    return reader, await open_writer(proto_out.fileno())


async def _serve(args: argparse.Namespace, proto_out: Any) -> int:
    from acp import run_agent

    reader, writer = await _stdio(proto_out)
    agent = AcpAgent(args)
    try:
        # fork, resume and close are routed as "unstable" by the package
        await run_agent(agent, writer, reader, use_unstable_protocol=True)  # type: ignore[arg-type]
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
