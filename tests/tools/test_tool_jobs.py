"""Background bash jobs: start, events, incremental output, wait, kill, listing, shutdown."""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass, field

import pytest

from ama.tools import BackgroundJobs
from ama.tools.bash import make_bash_tool
from ama.tools.jobs import make_bash_kill_tool, make_bash_output_tool
from tests.tools.helpers import call, fails, text, wait_gone

pytestmark = pytest.mark.anyio


@pytest.fixture
def jobs() -> BackgroundJobs:
    registry = BackgroundJobs(kill_grace=0.5)
    yield registry
    registry.kill_all()


@pytest.fixture
def tools(jobs):
    return make_bash_tool(jobs=jobs), make_bash_output_tool(jobs), make_bash_kill_tool(jobs)


async def output_until(bash_output, ctx, job_id: str, pattern: str) -> str:
    """bash_output until the collected output matches (bounded; no timing assertion)."""
    seen = ""
    for _ in range(500):
        body = text(await call(bash_output, ctx, job_id=job_id)).split("\n")[1:-1]  # status, ..., file
        if body != ["(no new output)"]:
            seen += "".join(line + "\n" for line in body)
        if re.search(pattern, seen, re.MULTILINE):
            return seen
        await asyncio.sleep(0.02)
    raise AssertionError(f"no {pattern!r} in {seen!r}")


async def test_lifecycle_and_events(ctx, tools, events, tmp_path):
    bash, bash_output, _ = tools
    command = "echo start; echo oops >&2; sleep 0.2; echo end; exit 3"
    r = await call(bash, ctx, command=command, background=True, call_id="call_7")
    path = str(tmp_path / "out" / "bash-call_7.log")
    pid = r.details["pid"]
    assert r.details == {
        "background": True,
        "jobId": "bg1",
        "pid": pid,
        "outputPath": path,
        "sandboxed": False,
    }
    assert text(r) == (
        f"Started background job bg1 (pid {pid}). Output goes to {path}.\n"
        'Use bash_output with job_id "bg1" to read its output or wait for it, and bash_kill to stop it.'
    )
    assert not r.is_error
    started = {"type": "background_job", "jobId": "bg1", "command": command, "pid": pid, "outputPath": path}
    assert events == [{**started, "phase": "started"}]

    done = await call(bash_output, ctx, job_id="bg1", wait=60)
    assert text(done) == (
        f"Job bg1: exited (exit code 3) — {command}\nstart\noops\nend\n[output file: {path}]"
    )
    assert done.details == {
        "jobId": "bg1",
        "status": "exited",
        "pid": pid,
        "outputPath": path,
        "sandboxed": False,
        "exitCode": 3,
        "truncated": False,
    }
    assert events == [{**started, "phase": "started"}, {**started, "phase": "exited", "exitCode": 3}]
    again = await call(bash_output, ctx, job_id="bg1")
    assert text(again) == f"Job bg1: exited (exit code 3) — {command}\n(no new output)\n[output file: {path}]"


async def test_output_is_returned_incrementally(ctx, tools, workspace):
    bash, bash_output, _ = tools
    await call(
        bash, ctx, command="echo one; while [ ! -e go ]; do sleep 0.02; done; echo two", background=True
    )
    assert await output_until(bash_output, ctx, "bg1", "^one$") == "one\n"
    running = await call(bash_output, ctx, job_id="bg1")
    assert running.details["status"] == "running"
    assert text(running).startswith("Job bg1: running (pid ")
    (workspace / "go").touch()
    done = await call(bash_output, ctx, job_id="bg1", wait=60)
    assert text(done).split("\n")[1:3] == ["two", f"[output file: {done.details['outputPath']}]"]


async def test_wait_returns_when_aborted(ctx, tools):
    bash, bash_output, _ = tools
    await call(bash, ctx, command="sleep 300", background=True)
    ctx.abort.set()
    r = await call(bash_output, ctx, job_id="bg1", wait=600)
    assert r.details["status"] == "running"


async def test_kill_stops_the_process_group(ctx, tools, events):
    bash, bash_output, bash_kill = tools
    await call(bash, ctx, command="sleep 300 & echo PID $!; wait", background=True)
    seen = await output_until(bash_output, ctx, "bg1", r"^PID \d+$")
    grandchild = int(seen.split()[1])
    r = await call(bash_kill, ctx, job_id="bg1")
    assert text(r).startswith(
        "Job bg1: stopped (killed by SIGTERM) — sleep 300 & echo PID $!; wait\n[output file: "
    )
    assert r.details["status"] == "killed" and r.details["exitCode"] == 143
    assert wait_gone(grandchild)
    assert [e["phase"] for e in events] == ["started", "stopped"]
    assert events[-1]["exitCode"] == 143
    again = await call(bash_kill, ctx, job_id="bg1")
    assert text(again).endswith("(it had already finished).")


async def test_unknown_job_and_listing(ctx, tools):
    bash, bash_output, bash_kill = tools
    assert text(await call(bash_output, ctx)) == "No background jobs."
    assert await fails(bash_kill, ctx, job_id="bg9") == "No background job 'bg9' (known jobs: none)."
    await call(bash, ctx, command="exit 0", background=True, call_id="a")
    await call(bash, ctx, command="sleep 300", background=True, call_id="b")
    await call(bash_output, ctx, job_id="bg1", wait=60)
    listing = await call(bash_output, ctx)
    lines = text(listing).split("\n")
    assert lines[0] == "Job bg1: exited (exit code 0) — exit 0"
    assert lines[1].startswith("  output: ") and lines[1].endswith("bash-a.log")
    assert lines[2].startswith("Job bg2: running (pid ")
    assert [j["status"] for j in listing.details["jobs"]] == ["exited", "running"]
    assert await fails(bash_output, ctx, job_id="bg3") == "No background job 'bg3' (known jobs: bg1, bg2)."


async def test_kill_all_at_shutdown(ctx, tools, jobs):
    bash, _, _ = tools
    pids = [
        (await call(bash, ctx, command="sleep 300", background=True, call_id=f"k{i}")).details["pid"]
        for i in range(2)
    ]
    assert len(jobs.running()) == 2
    await asyncio.to_thread(jobs.kill_all)
    for pid in pids:
        assert wait_gone(pid)


async def test_long_job_output_is_cut_and_points_to_the_file(ctx, tools):
    bash, bash_output, _ = tools
    await call(bash, ctx, command="seq 1 50000", background=True)
    r = await call(bash_output, ctx, job_id="bg1", wait=60)
    out = text(r)
    assert r.details["truncated"] is True
    path = r.details["outputPath"]
    assert f"... [48000 lines omitted; full output ({os.path.getsize(path)} bytes) in {path}] ..." in out
    assert "\n50000\n[output file:" in out


@dataclass
class Wrapped:
    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()
    sandboxed: bool = True
    closed: list[bool] = field(default_factory=list)

    def close(self) -> None:
        self.closed.append(True)


class FakeSandbox:
    active = True
    description_suffix = ""

    def __init__(self) -> None:
        self.wrapped: list[Wrapped] = []

    def wrap(self, command, *, cwd, network=None, extra_writable=()):
        w = Wrapped(["/bin/sh", "-c", command], {"PATH": os.environ["PATH"], "IN_BOX": "yes"})
        self.wrapped.append(w)
        return w

    def hint(self, output, exit_code):
        return None


async def test_background_jobs_are_wrapped_by_the_sandbox_too(ctx, tools):
    bash, bash_output, _ = tools
    box = FakeSandbox()
    ctx.bash_sandbox, ctx.sandboxed = box, True
    r = await call(bash, ctx, command="echo box=$IN_BOX", background=True)
    assert r.details["sandboxed"] is True
    done = await call(bash_output, ctx, job_id="bg1", wait=60)
    assert text(done).split("\n")[1] == "box=yes"
    assert done.details["sandboxed"] is True
    assert box.wrapped[0].closed == [True]
