"""``ama --mode rpc``: the agent over JSON lines on stdin/stdout.

Start-up writes ``hello`` then ``session_start`` (``rpc/start.py``: it also answers the first
``get_state`` lines before the event loop runs, then hands over to :meth:`RpcServer.serve`).
Each input line is one command object with a ``type`` and an optional ``id``; each gets
exactly one ``response`` carrying that id whenever the line parsed far enough to show one
(even a line that is not valid JSON).  Agent events are written as they happen.  When stdin
closes: no new commands, pending approvals are denied, the running prompt finishes and its
events are written, then exit 0.  Nothing but protocol lines goes to stdout; diagnostics go
to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from ama.errors import AmaError, Busy
from ama.rpc import commands as cmds
from ama.rpc.broker import RpcBroker
from ama.rpc.jsonl import MAX_LINE_BYTES, TooLarge, dump_parts, scan_line
from ama.rpc.start import agent_options_for, response
from ama.rpc.stdin import open_reader, read_lines

#: commands that run model requests on an idle agent: answered when done, while the loop reads on
MAINTENANCE = frozenset({"compact", "summarize_from", "summarize_up_to"})
#: what may come in meanwhile (besides every get_*): the rest is refused as busy
WHILE_MAINTAINING = frozenset(
    {"abort", "permission_response", "set_client_capabilities", "export", "search", "get_fork_messages"}
)


class RpcServer:
    def __init__(self, args: argparse.Namespace, out: Any = None, broker: RpcBroker | None = None) -> None:
        self.args = args
        self.out = out or sys.stdout.buffer
        self.broker = broker if broker is not None else RpcBroker()
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
        self.out.writelines(dump_parts(obj))
        self.out.flush()

    def respond(self, command: str | None, rid: Any, data: dict | None = None, error: AmaError | None = None) -> None:
        self.write(response(command, rid, data, error))

    # --- the agent ----------------------------------------------------------------------

    def track(self, task: asyncio.Task | None) -> None:
        if task is not None:
            self._runs.add(task)
            task.add_done_callback(self._runs.discard)

    async def switch(self, session: str, *, reason: str) -> None:
        """Make ``session`` the active one ("new", "memory", an id or a path), ``reason``: new,
        resume or fork (the first session is ``serve``'s)."""
        from ama.agent.compose import build_agent

        agent, warnings = build_agent(agent_options_for(self.args, self.broker, session))
        await self._adopt(agent, warnings)
        self.write(
            {
                "type": "session_start",
                "sessionId": agent.session.id,
                "sessionFile": agent.session.path,
                "cwd": agent.cwd,
                "reason": reason,
            }
        )
        changed = {"type": "session_changed", "sessionId": agent.session.id}
        if agent.session.path is not None:
            changed["sessionFile"] = agent.session.path
        self.write(changed)

    async def _adopt(self, agent: Any, warnings: list[str]) -> None:
        """Make ``agent`` the active one (closing the previous) and write its warnings."""
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

    async def serve(self, draft: Any, *, fd: int | None, prefix: bytes = b"", at_eof: bool = False) -> int:
        """Finish the agent ``rpc/start.py`` began (``draft``, whose ``session_start`` is written),
        then answer the commands of stdin from ``prefix`` (the bytes the start-up read and did
        not answer) on, until its end."""
        from ama.agent.compose import finish_agent

        reader = await open_reader(fd, prefix=prefix, at_eof=at_eof)
        try:
            agent, warnings = finish_agent(draft)
        except AmaError as err:
            self.write({"type": "notification", "level": "error", "message": err.message})
            return 1
        await self._adopt(agent, warnings)
        async for raw in read_lines(reader):
            await self.handle(raw)
        # stdin closed: deny pending and future asks, let the running prompt finish
        self.broker.close()
        while self._runs or self.agent.busy:
            await self.agent.wait_idle()
            await asyncio.sleep(0)
        await self.agent.close()
        return 0
