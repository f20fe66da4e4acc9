"""``ama --mode rpc``: the agent over JSON lines on stdin/stdout.

Start-up writes ``hello`` then ``session_start``.  Each input line is one command object
with a ``type`` and an optional ``id``; each gets exactly one ``response`` carrying that id
whenever the line parsed far enough to show one (even a line that is not valid JSON).  Agent
events are written as they happen.  When stdin closes: no new commands, pending approvals are
denied, the running prompt finishes and its events are written, then exit 0.  Nothing but
protocol lines goes to stdout; diagnostics go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from ama.errors import AmaError, Busy
from ama.rpc import commands as cmds
from ama.rpc.broker import RpcBroker
from ama.rpc.jsonl import MAX_LINE_BYTES, TooLarge, dumps, open_reader, read_lines, scan_line

PROTOCOL_VERSION = 1
CAPABILITIES = ["approvals", "images", "hooks", "plans"]


#: commands that run model requests on an idle agent: answered when done, while the loop reads on
MAINTENANCE = frozenset({"compact", "summarize_from", "summarize_up_to"})
#: what may come in meanwhile (besides every get_*): the rest is refused as busy
WHILE_MAINTAINING = frozenset(
    {"abort", "permission_response", "set_client_capabilities", "export", "search", "get_fork_messages"}
)


class RpcServer:
    def __init__(self, args: argparse.Namespace, out: Any = None) -> None:
        self.args = args
        self.out = out or sys.stdout.buffer
        self.broker = RpcBroker()
        self.agent: Any = None
        self._unsubscribe: Any = None
        self._runs: set[asyncio.Task] = set()
        #: a long command on an idle agent (compact, summarize_*) runs here while the loop
        #: keeps reading, so that ``abort`` reaches it; see ``handle``
        self.maintenance: asyncio.Task | None = None
        self._maintaining = ""
        self.current_id: Any = None
        self.current_command: str | None = None
        from ama.config.paths import sessions_dir

        self.sessions_dir = str(sessions_dir(args.session_dir))

    # --- output -------------------------------------------------------------------------

    def write(self, obj: dict[str, Any]) -> None:
        self.out.write(dumps(obj))
        self.out.flush()

    def respond(self, command: str | None, rid: Any, data: dict | None = None, error: AmaError | None = None) -> None:
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
        self.write(msg)

    # --- the agent ----------------------------------------------------------------------

    def track(self, task: asyncio.Task | None) -> None:
        if task is not None:
            self._runs.add(task)
            task.add_done_callback(self._runs.discard)

    async def switch(self, session: str, *, reason: str) -> None:
        from ama.agent.compose import build_agent
        from ama.agent.options import agent_options

        opts = agent_options(self.args, broker=self.broker)
        # --no-session: a new session (new_session, a fork without a file) stays in memory
        opts.session = "memory" if session == "new" and self.args.no_session else session
        agent, warnings = build_agent(opts)
        old = self.agent
        if self._unsubscribe is not None:
            self._unsubscribe()
        self.agent = agent
        self._unsubscribe = agent.subscribe(self.write)
        agent.plans.client_answers = lambda: "plans" in self.broker.capabilities and not self.broker.closed
        if old is not None:
            await old.close()
        for w in warnings:
            self.write({"type": "notification", "level": "warn", "message": w})
        self.write(
            {
                "type": "session_start",
                "sessionId": agent.session.id,
                "sessionFile": agent.session.path,
                "cwd": agent.cwd,
                "reason": reason,
            }
        )
        if reason != "startup":  # the active session changed (new, resume, fork)
            changed = {"type": "session_changed", "sessionId": agent.session.id}
            if agent.session.path is not None:
                changed["sessionFile"] = agent.session.path
            self.write(changed)

    # --- commands -----------------------------------------------------------------------

    async def handle(self, raw: Any) -> None:
        if isinstance(raw, TooLarge):
            err = AmaError("too_large", f"line longer than {MAX_LINE_BYTES} bytes; it was skipped")
            self.respond(raw.command, raw.id, error=err)
            return
        try:
            msg = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as e:
            scan = scan_line(raw)
            self.respond(scan.command, scan.result, error=AmaError("parse_error", f"not valid JSON: {e}"))
            return
        if not isinstance(msg, dict):
            kind = type(msg).__name__
            self.respond(None, None, error=AmaError("parse_error", f"expected a JSON object per line, got {kind}"))
            return
        rid = msg.get("id")
        name = msg.get("type")
        if not isinstance(name, str):
            self.respond(None, rid, error=AmaError("invalid_arguments", "missing command 'type'"))
            return
        if name not in cmds.HANDLERS:
            self.respond(name, rid, error=AmaError("unknown_command", f"unknown command {name!r}"))
            return
        busy = self.maintenance is not None and not self.maintenance.done()
        if busy and name not in WHILE_MAINTAINING and not name.startswith("get_"):
            err = Busy(f"{name}: a {self._maintaining} is in progress; send abort or wait for its response")
            self.respond(name, rid, error=err)
            return
        self.current_id, self.current_command = rid, name
        if name in MAINTENANCE:
            self._maintaining = name
            self.maintenance = asyncio.ensure_future(self._run(name, rid, msg))
            self.track(self.maintenance)
            return
        await self._run(name, rid, msg)

    async def _run(self, name: str, rid: Any, msg: dict[str, Any]) -> None:
        try:
            params = cmds.check_params(name, msg)
            data = await cmds.HANDLERS[name](self, params)
        except AmaError as err:
            self.respond(name, rid, error=err)
            return
        except Exception as exc:  # a bug must not end the session: report it
            self.respond(name, rid, error=AmaError("internal_error", f"{type(exc).__name__}: {exc}"))
            return
        if data is not cmds.RESPONDED:
            self.respond(name, rid, data)

    async def serve(self) -> int:
        from ama import __version__

        reader = await open_reader(sys.stdin.fileno() if sys.stdin is not None else None)
        self.write(
            {
                "type": "hello",
                "protocolVersion": PROTOCOL_VERSION,
                "agent": "ama",
                "version": __version__,
                "capabilities": CAPABILITIES,
            }
        )
        try:
            await self.switch(self._initial_session(), reason="startup")
        except AmaError as err:
            self.write({"type": "notification", "level": "error", "message": err.message})
            return 1
        async for raw in read_lines(reader):
            await self.handle(raw)
        # stdin closed: deny pending and future asks, let the running prompt finish
        self.broker.close()
        while self._runs or self.agent.busy:
            await self.agent.wait_idle()
            await asyncio.sleep(0)
        await self.agent.close()
        return 0

    def _initial_session(self) -> str:
        from ama.agent.options import session_choice

        choice = session_choice(self.args)
        if choice == "":
            raise AmaError("invalid_arguments", "--resume needs a session id in RPC mode")
        return choice


def rpc_main(args: argparse.Namespace) -> int:
    if args.print:
        raise AmaError("invalid_arguments", "--mode rpc cannot be combined with -p")
    if args.prompt:
        raise AmaError("invalid_arguments", "--mode rpc takes commands on stdin, not a PROMPT argument")
    os.environ.setdefault("AMA_RPC", "1")
    return asyncio.run(RpcServer(args).serve())
