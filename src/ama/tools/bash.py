"""``bash``: run a shell command in the workspace, in the foreground or as a background job.

Foreground: stdout and stderr merged in order through one pipe; a timeout (default 120 s,
max 600 s) or an abort kills the command's whole process group; long output is cut in the
middle and saved whole to a file under ``ctx.output_dir``.  The exit code is in the text and
in ``details.exitCode``.  With ``ctx.sandboxed`` the command is wrapped by
``ctx.bash_sandbox`` (the permission layer decided it runs there).  ``background: true``
hands the command to ``BackgroundJobs`` (see ``jobs.py``).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ama.tools._output import MAX_CHARS, MAX_LINES, OutputCollector, new_output_path
from ama.tools._process import (
    DEFAULT_GRACE,
    describe_exit,
    exit_future,
    group_alive,
    popen,
    terminate_group,
    terminate_group_later,
)
from ama.tools.base import BuiltinTool, Tool, ToolError, ToolResult, UpdateFn
from ama.tools.bash_env import scrub_env
from ama.tools.context import BashSandboxLike, ToolContext, WrappedCommandLike
from ama.tools.jobs import BackgroundJobs

DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 600
#: after the shell exits, how long to keep reading from processes it left holding the pipe
DRAIN_SECONDS = 0.5
UPDATE_INTERVAL = 0.25

DEFAULT_SANDBOX_SUFFIX = (
    "Runs in an OS sandbox (writes only in workspace/temp, no network); sandbox:false needs approval."
)

DESCRIPTION = f"""Run a shell command with bash -c in the working directory and return its output (stdout and stderr merged) and exit code.
- Each call is a new shell: cd and variables do not carry over; the command starts in the working directory. stdin is empty, so commands must not wait for input.
- timeout: seconds (default {DEFAULT_TIMEOUT}, max {MAX_TIMEOUT}). On timeout the command and all its child processes are killed.
- Output longer than {MAX_CHARS} characters or {MAX_LINES} lines is cut in the middle (start and end kept); the full output is saved to a file whose path is given.
- background: true starts a long-running process (server, watcher, long build) as a job and returns at once with a job id and an output file; read it with bash_output, stop it with bash_kill. A trailing & in a normal call does not keep a process alive.
- Prefer the dedicated tools for files: read (not cat/head/tail), edit/write (not sed/echo >), grep (not grep/rg), find and ls.
- description: a short summary (5-10 words) of what the command does, shown to the user."""

_BASE_PROPERTIES = {
    "command": {"type": "string", "minLength": 1, "description": "The shell command to run."},
    "timeout": {
        "type": "number",
        "minimum": 1,
        "maximum": MAX_TIMEOUT,
        "description": f"Timeout in seconds (default {DEFAULT_TIMEOUT}, max {MAX_TIMEOUT}).",
    },
    "description": {"type": "string", "description": "What the command does, in a few words."},
    "background": {
        "type": "boolean",
        "description": "Run as a background job and return immediately (default false).",
    },
}
_SANDBOX_PROPERTY = {
    "sandbox": {
        "type": "boolean",
        "description": "false runs the command outside the OS sandbox; that needs the user's approval (default true).",
    }
}


def bash_parameters(sandbox_active: bool) -> dict:
    props = {**_BASE_PROPERTIES, **(_SANDBOX_PROPERTY if sandbox_active else {})}
    return {"type": "object", "properties": props, "required": ["command"], "additionalProperties": False}


@dataclass
class Prepared:
    argv: list[str]
    env: dict[str, str] | None
    pass_fds: tuple[int, ...]
    wrapped: WrappedCommandLike | None
    sandboxed: bool = False

    def close(self) -> None:
        if self.wrapped is not None:
            self.wrapped.close()


def _env(base: Mapping[str, str], sandbox: BashSandboxLike | None) -> dict[str, str]:
    """``base`` without credential variables (``bash_env``), with the session's
    ``sandbox.envAllow`` and provider key variables (a test double may lack both)."""
    allow = getattr(sandbox, "env_allow", ())
    deny = getattr(sandbox, "env_deny", ())
    return scrub_env(base, allow, deny)[0]


def prepare(command: str, ctx: ToolContext, shell: str) -> Prepared:
    """The argv to run: wrapped by the sandbox when this call was approved to run in it.
    Either way the command's environment has no credential variables (``bash_env``)."""
    sandbox = ctx.bash_sandbox
    if not ctx.sandboxed:
        base = ctx.env if ctx.env is not None else os.environ
        return Prepared([shell, "-c", command], _env(base, sandbox), (), None)
    if sandbox is None or not sandbox.active:
        # never run unsandboxed what the permission layer approved only for the sandbox
        raise ToolError("This command was approved to run in the OS sandbox, but no sandbox is available.")
    try:
        w = sandbox.wrap(command, cwd=ctx.cwd)
    except Exception as e:
        raise ToolError(f"Could not set up the OS sandbox for this command: {e}") from e
    return Prepared(list(w.argv), _env(w.env, sandbox), tuple(w.pass_fds), w, bool(w.sandboxed))


class _PipeReader(asyncio.Protocol):
    def __init__(self, collector: OutputCollector, eof: asyncio.Future, on_data) -> None:
        self.collector = collector
        self.eof = eof
        self.on_data = on_data

    def data_received(self, data: bytes) -> None:
        self.collector.feed(data)
        self.on_data()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.eof.done():
            self.eof.set_result(None)


def make_bash_tool(
    *,
    jobs: BackgroundJobs | None = None,
    sandbox_description: str | None = None,
    kill_grace: float = DEFAULT_GRACE,
    shell: str | None = None,
) -> Tool:
    """``sandbox_description`` set (the sandbox is active for this session) adds the ``sandbox``
    parameter and appends the text to the description; None keeps both byte-identical to a
    session without a sandbox."""
    registry = jobs if jobs is not None else BackgroundJobs(kill_grace=kill_grace)
    sh = shell or shutil.which("bash") or "/bin/sh"
    description = DESCRIPTION + (f"\n{sandbox_description}" if sandbox_description else "")

    async def run(call_id: str, args: dict, ctx: ToolContext, on_update: UpdateFn | None) -> ToolResult:
        command: str = args["command"]
        if ctx.abort.is_set():
            raise ToolError("Aborted before the command started.")
        prepared = prepare(command, ctx, sh)
        if args.get("background"):
            return _start_background(registry, call_id, command, prepared, ctx)
        try:
            return await _run_foreground(call_id, command, prepared, args, ctx, on_update, kill_grace)
        finally:
            prepared.close()

    return BuiltinTool(
        "bash", "Bash", description, bash_parameters(sandbox_description is not None), False, run
    )


def _start_background(
    jobs: BackgroundJobs, call_id: str, command: str, prepared: Prepared, ctx: ToolContext
) -> ToolResult:
    output_path = new_output_path(ctx.output_dir, call_id, "log")
    try:
        job = jobs.start(
            command,
            prepared.argv,
            cwd=ctx.cwd,
            env=prepared.env,
            pass_fds=prepared.pass_fds,
            output_path=output_path,
            sandboxed=prepared.sandboxed,
            emit=ctx.emit,
            on_exit=prepared.close,
        )
    except BaseException:
        prepared.close()
        raise
    text = (
        f"Started background job {job.id} (pid {job.pid}). Output goes to {output_path}.\n"
        f'Use bash_output with job_id "{job.id}" to read its output or wait for it, and bash_kill to stop it.'
    )
    details = {
        "background": True,
        "jobId": job.id,
        "pid": job.pid,
        "outputPath": output_path,
        "sandboxed": prepared.sandboxed,
    }
    return ToolResult.text(text, details)


async def _run_foreground(
    call_id: str,
    command: str,
    prepared: Prepared,
    args: dict,
    ctx: ToolContext,
    on_update: UpdateFn | None,
    kill_grace: float,
) -> ToolResult:
    timeout = float(args.get("timeout") or DEFAULT_TIMEOUT)
    loop = asyncio.get_running_loop()
    collector = OutputCollector(spill=lambda: new_output_path(ctx.output_dir, call_id, "out"))
    last_update = 0.0

    def on_data() -> None:
        nonlocal last_update
        now = time.monotonic()
        if on_update is not None and now - last_update >= UPDATE_INTERVAL:
            last_update = now
            on_update(ToolResult.text(collector.preview(), {"partial": True}))

    proc = popen(
        prepared.argv,
        cwd=ctx.cwd,
        env=prepared.env,
        pass_fds=prepared.pass_fds,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    eof: asyncio.Future = loop.create_future()
    transport: asyncio.BaseTransport | None = None
    finished = False
    try:
        transport, _ = await loop.connect_read_pipe(lambda: _PipeReader(collector, eof, on_data), proc.stdout)
        exited = exit_future(proc)
        abort_wait: asyncio.Future[Any] = asyncio.ensure_future(ctx.abort.wait())
        try:
            await asyncio.wait({exited, abort_wait}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            abort_wait.cancel()
        stopped = None if exited.done() else ("aborted" if ctx.abort.is_set() else "timeout")
        if stopped:
            await asyncio.to_thread(terminate_group, proc.pid, kill_grace)
        returncode = await exited
        finished = True
        try:
            await asyncio.wait_for(asyncio.shield(eof), DRAIN_SECONDS)
            leftovers = False
        except TimeoutError:
            leftovers = group_alive(proc.pid)
            if leftovers:
                terminate_group_later(proc.pid, kill_grace)
    finally:
        if transport is not None:
            transport.close()
        elif proc.stdout is not None:
            proc.stdout.close()
        if not finished and proc.returncode is None:  # cancelled: do not leave the command running
            terminate_group_later(proc.pid, kill_grace)
    return _result(command, collector, returncode, stopped, leftovers, timeout, prepared, ctx)


def _result(
    command: str,
    collector: OutputCollector,
    returncode: int,
    stopped: str | None,
    leftovers: bool,
    timeout: float,
    prepared: Prepared,
    ctx: ToolContext,
) -> ToolResult:
    rendered = collector.render()
    exit_code, sig = describe_exit(returncode)
    parts = [rendered.text.rstrip("\n") if rendered.text.strip() else "(no output)"]
    if exit_code != 0 and prepared.sandboxed and ctx.bash_sandbox is not None and not stopped:
        hint = ctx.bash_sandbox.hint(rendered.text, exit_code)
        if hint:
            parts.append(hint)
    if stopped == "timeout":
        parts.append(f"[Command timed out after {timeout:g} s; it and its child processes were killed.]")
    elif stopped == "aborted":
        parts.append("[Command aborted; it and its child processes were killed.]")
    if leftovers:
        parts.append(
            "[Processes the command left running in the background were stopped; "
            "use background: true for long-running processes.]"
        )
    parts.append(f"[exit code: {exit_code}{f', killed by {sig}' if sig else ''}]")
    details: dict = {
        "exitCode": exit_code,
        "sandboxed": prepared.sandboxed,
        "truncated": rendered.truncated,
        "fullOutputPath": rendered.saved_to,
        "timedOut": stopped == "timeout",
        "aborted": stopped == "aborted",
    }
    if sig:
        details["signal"] = sig
    return ToolResult.text("\n".join(parts), details, is_error=exit_code != 0 or stopped is not None)
