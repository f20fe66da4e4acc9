"""Run a task on the Claude Code or Codex CLI in its non-interactive JSON mode: the prompt on
stdin, one JSON event a line on stdout (read by ``cli_events``), SIGINT to the process group
on the cancel event. Neither CLI can hand its approvals to ama in these modes: each applies
its own permission settings (``mode`` of the first-run confirmation)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal

from ama.agent.external.base import (
    ExternalTaskHost,
    ExternalTaskRequest,
    ExternalTaskResult,
    Turn,
    failed,
    record_session,
    record_usage,
    result,
)
from ama.agent.external.cli_events import ClaudeStream, CodexStream, Stream
from ama.agent.external.proc import STDIO_LIMIT, Child
from ama.agent.external.settings import AgentSpec

INTERRUPT_GRACE = 5.0  # after SIGINT, how long the CLI may take to exit on its own


def claude_argv(program: list[str], spec: AgentSpec, req: ExternalTaskRequest) -> list[str]:
    argv = [*program, *spec.args, "-p", "--output-format", "stream-json", "--verbose"]
    if req.model:
        argv += ["--model", req.model]
    if req.session_id:
        argv += ["--resume", req.session_id]
    return argv


def codex_argv(program: list[str], spec: AgentSpec, req: ExternalTaskRequest) -> list[str]:
    argv = [*program, "exec", "--json", *spec.args]
    if req.model:
        argv += ["--model", req.model]
    if req.session_id:
        argv += ["resume", req.session_id]
    return [*argv, "-"]  # the prompt comes on stdin


def _flag(args: list[str], *names: str) -> str | None:
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(n + "="):
                return a.split("=", 1)[1]
    return None


def cli_mode(spec: AgentSpec) -> str:
    """The permission mode the CLI will run in, from its configured arguments."""
    if spec.name == "claude":
        if "--dangerously-skip-permissions" in spec.args:
            return "bypassPermissions"
        return _flag(spec.args, "--permission-mode") or "default"
    if "--dangerously-bypass-approvals-and-sandbox" in spec.args:
        return "danger-full-access"
    if "--full-auto" in spec.args:
        return "workspace-write"
    return _flag(spec.args, "--sandbox", "-s") or "read-only"


async def run_cli(
    req: ExternalTaskRequest, spec: AgentSpec, program: list[str], host: ExternalTaskHost, cancel: asyncio.Event
) -> ExternalTaskResult:
    stream: Stream
    if spec.name == "claude":
        argv, stream = claude_argv(program, spec, req), ClaudeStream()
    else:
        argv, stream = codex_argv(program, spec, req), CodexStream()
    try:
        child = await Child.start(argv, cwd=req.cwd, env=spec.environ())
    except OSError as e:
        return failed(req, f"{req.agent}: cannot start {argv[0]}: {e.strerror or e}")
    try:
        return await _drive(req, child, stream, host, cancel)
    finally:
        await child.stop(grace=1.0)


async def _drive(
    req: ExternalTaskRequest, child: Child, stream: Stream, host: ExternalTaskHost, cancel: asyncio.Event
) -> ExternalTaskResult:
    proc = child.proc
    assert proc.stdin is not None and proc.stdout is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(req.prompt.encode())
        await proc.stdin.drain()
    proc.stdin.close()
    recorded: set[str] = set()
    reader = asyncio.create_task(_read(proc.stdout, stream, host, req, recorded))
    stopper = asyncio.create_task(cancel.wait())
    try:
        await asyncio.wait({reader, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
    turn = Turn(session_id=stream.session_id or req.session_id)
    if not reader.done():
        child.signal_group(signal.SIGINT)
        if not await child.wait(INTERRUPT_GRACE):
            await child.stop(grace=0.5)
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(reader, 2.0)
        turn.session_id = stream.session_id or req.session_id
        _finish(req, stream, turn, host)
        return result("aborted", turn, "cancelled")
    await child.wait(10.0)
    turn.session_id = stream.session_id or req.session_id
    _finish(req, stream, turn, host)
    if stream.status == "completed":
        return result("completed", turn)
    if stream.status == "failed":
        return result("failed", turn, stream.error or f"{req.agent} failed")
    rc = child.returncode
    if rc not in (0, None) or stream.session_id is not None:
        why = f"{req.agent} {child.exit_note()} mid-turn"
    else:
        why = f"{req.agent} ended without a result"
    if stream.error:
        why += f" ({stream.error})"
    return result("failed", turn, why)


async def _read(
    out: asyncio.StreamReader, stream: Stream, host: ExternalTaskHost, req: ExternalTaskRequest, recorded: set[str]
) -> None:
    while True:
        try:
            line = await out.readline()
        except ValueError:  # a line over the 50 MB limit: the stream cannot be followed
            stream.error = stream.error or f"{req.agent} printed a line longer than {STDIO_LIMIT // 2**20} MB"
            return
        if not line:
            return
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a stray non-JSON line (a warning printed to stdout)
        if not isinstance(event, dict):
            continue
        try:
            payloads = stream.feed(event)
        except (AttributeError, KeyError, TypeError, ValueError):
            continue  # an event of an unexpected shape (a newer CLI): skipped, the stream goes on
        for payload in payloads:
            host.update(payload)
        if stream.session_id is not None and stream.session_id not in recorded:
            recorded.add(stream.session_id)
            record_session(host, req, stream.session_id)


def _finish(req: ExternalTaskRequest, stream: Stream, turn: Turn, host: ExternalTaskHost) -> None:
    if stream.answer:
        turn.text = [stream.answer]
    if stream.usage is not None:
        turn.usage = stream.usage
    if turn.session_id is not None and (stream.usage is not None or stream.status is not None):
        record_usage(host, req, turn.session_id, turn.usage)
