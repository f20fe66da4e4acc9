"""Background bash jobs: the registry, and the ``bash_output`` / ``bash_kill`` tools.

``bash{background: true}`` starts a job: its stdout+stderr go to a file under the context's
``output_dir`` (opened by ama and handed to the child), the call returns at once with the
job id and file, and ``background_job`` events report ``started`` and then ``exited`` (or
``stopped`` after ``bash_kill``) with the exit code.  ``bash_output`` returns what a job
wrote since the last look (optionally waiting for it to finish); ``bash_kill`` stops its
process group.  One ``BackgroundJobs`` is shared by the three tools; the agent calls
``kill_all()`` when the session ends.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ama.tools._output import OutputCollector
from ama.tools._process import (
    DEFAULT_GRACE,
    call_soon,
    describe_exit,
    popen,
    terminate_group,
    terminate_groups,
    watch_exit,
)
from ama.tools.base import BuiltinTool, Tool, ToolError, ToolResult
from ama.tools.context import ToolContext

MAX_WAIT = 600
READ_CHUNK = 1 << 20


@dataclass
class Job:
    id: str
    command: str
    pid: int
    output_path: str
    sandboxed: bool
    started_at: float
    returncode: int | None = None
    kill_requested: bool = False
    read_offset: int = 0
    _waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = field(default_factory=list, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def status(self) -> str:
        if self.returncode is None:
            return "running"
        return "killed" if self.kill_requested else "exited"

    def event(self, phase: str) -> dict:
        ev: dict[str, Any] = {
            "type": "background_job",
            "jobId": self.id,
            "phase": phase,
            "command": self.command,
            "pid": self.pid,
            "outputPath": self.output_path,
        }
        if self.returncode is not None:
            ev["exitCode"] = describe_exit(self.returncode)[0]
        return ev

    async def wait(self, timeout: float | None, abort: asyncio.Event | None = None) -> bool:
        """Wait until the job exits, ``timeout`` passes or ``abort`` is set; True if it exited."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future = loop.create_future()
        with self._lock:
            if self.returncode is not None:
                return True
            self._waiters.append((loop, fut))
        waits: set[asyncio.Future[Any]] = {fut}
        abort_task = asyncio.ensure_future(abort.wait()) if abort is not None else None
        if abort_task is not None:
            waits.add(abort_task)
        try:
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if abort_task is not None:
                abort_task.cancel()
        return self.returncode is not None

    def _exited(self, returncode: int, announce: Callable[[], None]) -> None:  # on the waiting thread
        with self._lock:
            self.returncode = returncode
            waiters, self._waiters = self._waiters, []
        announce()  # the event goes out before anyone waiting for the exit resumes
        for loop, fut in waiters:
            call_soon(loop, lambda f=fut: f.done() or f.set_result(None))


class BackgroundJobs:
    """The background jobs of one session (shared by ``bash``, ``bash_output`` and ``bash_kill``)."""

    def __init__(self, *, kill_grace: float = DEFAULT_GRACE) -> None:
        self.kill_grace = kill_grace
        self._jobs: dict[str, Job] = {}
        self._next = 1

    def get(self, job_id: str) -> Job:
        job = self._jobs.get(job_id)
        if job is None:
            known = ", ".join(self._jobs) or "none"
            raise ToolError(f"No background job {job_id!r} (known jobs: {known}).")
        return job

    def jobs(self) -> list[Job]:
        return list(self._jobs.values())

    def running(self) -> list[Job]:
        return [j for j in self._jobs.values() if j.returncode is None]

    def start(
        self,
        command: str,
        argv: list[str],
        *,
        cwd: str,
        env: dict[str, str] | None,
        pass_fds: tuple[int, ...],
        output_path: str,
        sandboxed: bool,
        emit: Callable[[dict], None] | None,
        on_exit: Callable[[], None] | None = None,
    ) -> Job:
        """Start ``argv`` with its output going to ``output_path``; ``on_exit`` runs (on a
        thread) when it has exited, before the ``exited`` event."""
        with open(output_path, "wb") as out:
            proc = popen(
                argv,
                cwd=cwd,
                env=env,
                pass_fds=pass_fds,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        job = Job(f"bg{self._next}", command, proc.pid, output_path, sandboxed, time.time())
        self._next += 1
        self._jobs[job.id] = job
        loop = asyncio.get_running_loop()

        def announce() -> None:
            if emit is not None:
                call_soon(loop, emit, job.event("stopped" if job.kill_requested else "exited"))

        def exited(returncode: int) -> None:
            if on_exit is not None:
                on_exit()
            job._exited(returncode, announce)

        if emit is not None:
            emit(job.event("started"))
        watch_exit(proc, exited)
        return job

    async def kill(self, job: Job) -> None:
        if job.returncode is not None:
            return
        job.kill_requested = True
        await asyncio.to_thread(terminate_group, job.pid, self.kill_grace)
        await job.wait(self.kill_grace + 5)

    def kill_all(self) -> None:
        """Stop every running job (blocking, at most about ``kill_grace`` seconds; for session end)."""
        running = self.running()
        for job in running:
            job.kill_requested = True
        terminate_groups([job.pid for job in running], self.kill_grace)

    def read_new(self, job: Job) -> tuple[str, bool]:
        """What the job wrote since the last call (cut in the middle when long), and whether cut."""
        size = os.path.getsize(job.output_path)
        collector = OutputCollector(saved_to=job.output_path)
        with open(job.output_path, "rb") as f:
            f.seek(job.read_offset)
            remaining = size - job.read_offset
            while remaining > 0 and (chunk := f.read(min(READ_CHUNK, remaining))):
                collector.feed(chunk)
                remaining -= len(chunk)
        job.read_offset = size
        rendered = collector.render()
        return rendered.text, rendered.truncated


def _status_line(job: Job) -> str:
    if job.returncode is None:
        state = f"running (pid {job.pid})"
    else:
        code, sig = describe_exit(job.returncode)
        how = f"killed by {sig}" if sig else f"exit code {code}"
        state = f"{'stopped' if job.kill_requested else 'exited'} ({how})"
    return f"Job {job.id}: {state} — {job.command}"


OUTPUT_DESCRIPTION = """Read the output of background jobs started with bash (background: true).
- job_id: returns the job's status and the output it wrote since the last bash_output call for it. Without job_id: lists all jobs.
- wait: seconds to wait for the job to finish before returning (default 0, max 600); returns early when it exits.
- The complete output is always in the job's output file (read or grep it)."""

OUTPUT_PARAMETERS = {
    "type": "object",
    "properties": {
        "job_id": {
            "type": "string",
            "description": "The job id bash returned (e.g. bg1). Omit to list jobs.",
        },
        "wait": {
            "type": "number",
            "minimum": 0,
            "maximum": MAX_WAIT,
            "description": "Seconds to wait for the job to exit (default 0).",
        },
    },
    "additionalProperties": False,
}

KILL_DESCRIPTION = """Stop a background job started with bash (background: true): its whole process group gets SIGTERM, then SIGKILL if it does not exit."""

KILL_PARAMETERS = {
    "type": "object",
    "properties": {
        "job_id": {"type": "string", "minLength": 1, "description": "The job id to stop (e.g. bg1)."}
    },
    "required": ["job_id"],
    "additionalProperties": False,
}


def _job_details(job: Job) -> dict:
    details: dict[str, Any] = {
        "jobId": job.id,
        "status": job.status,
        "pid": job.pid,
        "outputPath": job.output_path,
        "sandboxed": job.sandboxed,
    }
    if job.returncode is not None:
        details["exitCode"] = describe_exit(job.returncode)[0]
    return details


def make_bash_output_tool(jobs: BackgroundJobs) -> Tool:
    async def run(call_id: str, args: dict, ctx: ToolContext, on_update: object) -> ToolResult:
        job_id = args.get("job_id")
        if not job_id:
            listed = jobs.jobs()
            if not listed:
                return ToolResult.text("No background jobs.", {"jobs": []})
            text = "\n".join(f"{_status_line(j)}\n  output: {j.output_path}" for j in listed)
            return ToolResult.text(text, {"jobs": [_job_details(j) for j in listed]})
        job = jobs.get(job_id)
        wait = float(args.get("wait") or 0)
        if wait > 0 and job.returncode is None:
            await job.wait(wait, ctx.abort)
        output, cut = jobs.read_new(job)
        body = output.rstrip("\n") if output.strip() else "(no new output)"
        text = f"{_status_line(job)}\n{body}\n[output file: {job.output_path}]"
        return ToolResult.text(text, {**_job_details(job), "truncated": cut})

    return BuiltinTool("bash_output", "Job output", OUTPUT_DESCRIPTION, OUTPUT_PARAMETERS, True, run)


def make_bash_kill_tool(jobs: BackgroundJobs) -> Tool:
    async def run(call_id: str, args: dict, ctx: ToolContext, on_update: object) -> ToolResult:
        job = jobs.get(args["job_id"])
        if job.returncode is not None:
            return ToolResult.text(f"{_status_line(job)} (it had already finished).", _job_details(job))
        await jobs.kill(job)
        return ToolResult.text(f"{_status_line(job)}\n[output file: {job.output_path}]", _job_details(job))

    return BuiltinTool("bash_kill", "Kill job", KILL_DESCRIPTION, KILL_PARAMETERS, False, run)
