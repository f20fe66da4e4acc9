"""``ama --mode rpc`` until the event loop runs: ``hello``, the first step of the agent's build,
``session_start``, and the ``get_state`` lines already waiting on stdin.

The agent is built in two steps (``agent/compose.py``).  The first -- configuration, model
registry, session, model, thinking level, permission mode -- is all that ``session_start`` and
``get_state`` report, and every error that stops a start (an unknown model, a bad option) comes
from it, so both are written here before the event loop, the tools, the permission pipeline,
the prompt catalog and the sub-agent types are loaded (``asyncio`` and those were about two
thirds of the work of a start, the interpreter's own aside).  While complete ``get_state`` lines are waiting -- or arrive within
``EARLY_WAIT_S`` -- they are answered from that first step.  At the first other line, at the end
of the input, or when nothing came for ``EARLY_WAIT_S``, the agent is finished and the server
(``rpc/server.py``) takes over, reading on from the first byte not answered.

What a client sees is the protocol as before (docs/rpc.md): ``hello``, ``session_start``, then
one response per command, in order.  The warnings of the second step (sandbox, skills and
templates, agent types, permission rules, hooks) are written when it runs: after
``session_start``, before the response to the first command that is not ``get_state``.
"""

from __future__ import annotations

import argparse
import gc
import os
import select
import sys
from collections.abc import Callable
from typing import Any

from ama.errors import AmaError
from ama.rpc.jsonl import MAX_LINE_BYTES, dumps

PROTOCOL_VERSION = 1
CAPABILITIES = ["approvals", "images", "hooks", "plans"]
#: commands whose feature is not built yet, with why (reported by ``get_state``; their handler,
#: in rpc/commands.py, answers ``unsupported``)
UNSUPPORTED: dict[str, str] = {}
#: how long the start-up waits for a first ``get_state`` before it finishes the agent anyway
EARLY_WAIT_S = 0.1
_CHUNK = 64 * 1024


def response(command: str | None, rid: Any, data: Any = None, error: AmaError | None = None) -> dict[str, Any]:
    """A ``response`` line: ``id`` when the request showed one, then ``data`` or ``error``."""
    msg: dict[str, Any] = {"type": "response"}
    if rid is not None:
        msg["id"] = rid
    msg["command"] = command
    if error is None:
        msg["success"] = True
        msg["data"] = data if data is not None else {}
    else:
        msg["success"] = False
        msg["error"] = {"code": error.code, "message": error.message}
    return msg


def state_data(state: dict[str, Any], capabilities: set[str]) -> dict[str, Any]:
    """``get_state``'s data: the agent's state and the protocol's."""
    return {
        **state,
        "protocolVersion": PROTOCOL_VERSION,
        "clientCapabilities": sorted(capabilities),
        "unsupported": dict(UNSUPPORTED),
    }


def agent_options_for(args: argparse.Namespace, broker: Any, session: str) -> Any:
    """The options of the session ``session`` ("new", "memory", an id or path) for this server."""
    from ama.agent.options import agent_options

    opts = agent_options(args, broker=broker)
    # --no-session: a new session (new_session, a fork without a file) stays in memory
    opts.session = "memory" if session == "new" and args.no_session else session
    return opts


def initial_session(args: argparse.Namespace) -> str:
    from ama.agent.options import session_choice

    choice = session_choice(args)
    if choice == "":
        raise AmaError("invalid_arguments", "--resume needs a session id in RPC mode")
    return choice


class EarlyInput:
    """stdin before the event loop: the bytes read so far, and whole lines from them."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd
        self.buffer = b""
        self.eof = fd is None
        if fd is not None:
            try:
                os.fstat(fd)
            except OSError:  # closed (``<&-``): the server reads it as an empty input
                self.eof = True

    def line(self) -> bytes | None:
        """The first whole line of the buffer (without ``\\r\\n``), if there is one."""
        end = self.buffer.find(b"\n")
        if end < 0 or end > MAX_LINE_BYTES:
            return None
        return self.buffer[:end].rstrip(b"\r")

    def consume_line(self) -> None:
        self.buffer = self.buffer[self.buffer.index(b"\n") + 1 :]

    def read(self, timeout: float) -> bool:
        """Read what arrives within ``timeout`` seconds; False when nothing did."""
        if self.eof or len(self.buffer) > _CHUNK:  # a long line: the server reads it
            return False
        assert self.fd is not None
        try:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                return False
            data = os.read(self.fd, _CHUNK)
        except BlockingIOError:  # a non-blocking stdin with nothing after all: the server waits
            return False
        except (OSError, ValueError):  # unreadable: the end, as the server would see it
            data = b""
        if not data:
            self.eof = True
            return False
        self.buffer += data
        return True


def early_state_request(raw: bytes) -> tuple[bool, Any]:
    """``(True, id)`` for a line that is a well-formed ``get_state`` command, else ``(False, None)``."""
    import json

    try:
        msg = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return False, None
    if not isinstance(msg, dict) or msg.get("type") != "get_state":
        return False, None
    return True, msg.get("id")


def rpc_main(args: argparse.Namespace) -> int:
    if args.print:
        raise AmaError("invalid_arguments", "--mode rpc cannot be combined with -p")
    if args.prompt:
        raise AmaError("invalid_arguments", "--mode rpc takes commands on stdin, not a PROMPT argument")
    os.environ.setdefault("AMA_RPC", "1")
    out = sys.stdout.buffer

    def write(obj: dict[str, Any]) -> None:
        out.write(dumps(obj))
        out.flush()

    # what loads before the first answers lives as long as the process: no cycles to collect
    # (the collector's passes over it were ~2 % of the work up to the first answer)
    gc.disable()
    try:
        started = _start(args, write)
    finally:
        gc.enable()
    if isinstance(started, int):
        return started
    draft, broker, early = started
    import asyncio

    from ama.rpc.server import RpcServer

    server = RpcServer(args, broker=broker)
    return asyncio.run(server.serve(draft, fd=early.fd, prefix=early.buffer, at_eof=early.eof))


def _start(args: argparse.Namespace, write: Callable[[dict[str, Any]], None]) -> int | tuple[Any, Any, EarlyInput]:
    """``hello``, the first step of the build, ``session_start`` and the early ``get_state``
    answers; the exit code when the start failed, else the draft, the broker and stdin."""
    from ama import __version__

    write(
        {
            "type": "hello",
            "protocolVersion": PROTOCOL_VERSION,
            "agent": "ama",
            "version": __version__,
            "capabilities": CAPABILITIES,
        }
    )
    from ama.agent.compose import prepare_agent
    from ama.rpc.broker import RpcBroker

    broker = RpcBroker()
    try:
        draft = prepare_agent(agent_options_for(args, broker, initial_session(args)))
    except AmaError as err:
        write({"type": "notification", "level": "error", "message": err.message})
        return 1
    for w in draft.warnings:
        write({"type": "notification", "level": "warn", "message": w})
    session = draft.session
    write(
        {
            "type": "session_start",
            "sessionId": session.id,
            "sessionFile": session.path,
            "cwd": session.cwd,
            "reason": "startup",
        }
    )
    early = EarlyInput(sys.stdin.fileno() if sys.stdin is not None else None)
    state = draft.state()
    while state is not None:
        raw = early.line()
        if raw is None:
            if early.read(EARLY_WAIT_S):
                continue
            break
        ok, rid = early_state_request(raw)
        if not ok:
            break
        write(response("get_state", rid, state_data(state, broker.capabilities)))
        early.consume_line()
    return draft, broker, early
