"""bash in the foreground: output, exit codes, timeouts and aborts that kill the process group,
truncation to a file, the sandbox hand-off (through a test double of the sandbox protocol)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
from dataclasses import dataclass, field

import pytest

from ama.tools import ToolResult
from ama.tools.bash import make_bash_tool
from tests.tools.helpers import call, fails, pid_running, text, wait_gone

pytestmark = pytest.mark.anyio
bash = make_bash_tool()


def pids_in(output: str) -> list[int]:
    return [int(n) for n in re.findall(r"^PID (\d+)$", output, re.MULTILINE)]


async def test_output_merged_in_order_and_exit_code(ctx):
    r = await call(bash, ctx, command="echo out1; echo err1 >&2; echo out2; exit 3")
    assert text(r) == "out1\nerr1\nout2\n[exit code: 3]"
    assert r.is_error
    assert r.details == {
        "exitCode": 3,
        "sandboxed": False,
        "truncated": False,
        "fullOutputPath": None,
        "timedOut": False,
        "aborted": False,
    }
    ok = await call(bash, ctx, command="true")
    assert text(ok) == "(no output)\n[exit code: 0]"
    assert not ok.is_error


async def test_runs_in_workspace_with_env_and_empty_stdin(ctx, workspace):
    ctx.env = {"PATH": os.environ["PATH"], "AMA_TEST_VAR": "hello"}
    r = await call(bash, ctx, command="pwd; echo $AMA_TEST_VAR; cat; echo after-cat")
    assert text(r) == f"{workspace}\nhello\nafter-cat\n[exit code: 0]"


async def test_terminal_escapes_and_carriage_returns_are_cleaned(ctx):
    r = await call(bash, ctx, command=r"printf '\033[31mred\033[0m\n10%%\r50%%\r100%%\nok\r\n'")
    assert text(r) == "red\n100%\nok\n[exit code: 0]"


async def test_timeout_kills_the_process_group_including_grandchildren(ctx):
    # a grandchild in a subshell and one started by a nested bash
    command = "sleep 300 & echo PID $!; bash -c 'sleep 301 & echo PID $!; wait' & wait"
    r = await call(bash, ctx, command=command, timeout=1)
    out = text(r)
    pids = pids_in(out)
    assert len(pids) == 2
    assert "[Command timed out after 1 s; it and its child processes were killed.]" in out
    assert out.endswith("[exit code: 143, killed by SIGTERM]")
    assert r.is_error
    assert r.details["timedOut"] is True
    assert r.details["signal"] == "SIGTERM"
    for pid in pids:
        assert wait_gone(pid)


async def test_processes_ignoring_sigterm_get_sigkill_after_the_grace(ctx):
    tool = make_bash_tool(kill_grace=0.3)
    r = await call(tool, ctx, command="trap '' TERM; sleep 300 & echo PID $!; wait", timeout=1)
    (pid,) = pids_in(text(r))
    assert r.details["signal"] == "SIGKILL"
    assert text(r).endswith("[exit code: 137, killed by SIGKILL]")
    assert wait_gone(pid)


def when_output(pattern: str, then) -> callable:
    """An on_update callback that calls ``then()`` once the partial output matches."""
    seen = []

    def on_update(partial: ToolResult) -> None:
        if not seen and re.search(pattern, text(partial), re.MULTILINE):
            seen.append(True)
            then()

    return on_update


async def test_abort_kills_the_process_group(ctx):
    on_update = when_output(r"^PID \d+$", ctx.abort.set)
    r = await bash.execute("c1", {"command": "sleep 300 & echo PID $!; wait"}, ctx, on_update)
    (pid,) = pids_in(text(r))
    assert "[Command aborted; it and its child processes were killed.]" in text(r)
    assert r.details["aborted"] is True and r.is_error
    assert wait_gone(pid)


async def test_abort_before_start(ctx, workspace):
    ctx.abort.set()
    assert await fails(bash, ctx, command="touch x") == "Aborted before the command started."
    assert not (workspace / "x").exists()


async def test_cancelling_the_call_kills_the_process_group(ctx):
    pids: list[int] = []
    started = asyncio.Event()

    def on_update(partial: ToolResult) -> None:
        pids.extend(pids_in(text(partial)))
        if pids:
            started.set()

    task = asyncio.ensure_future(
        bash.execute("c1", {"command": "sleep 300 & echo PID $!; wait"}, ctx, on_update)
    )
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert wait_gone(pids[0])


async def test_updates_stream_partial_output(ctx):
    updates: list[ToolResult] = []
    await bash.execute("c1", {"command": "echo first"}, ctx, updates.append)
    assert updates and text(updates[0]) == "first\n"
    assert updates[0].details == {"partial": True}


async def test_long_output_is_cut_in_the_middle_and_saved(ctx, tmp_path):
    r = await call(bash, ctx, command="seq 1 100000", call_id="toolu_01/x")
    out = text(r)
    path = r.details["fullOutputPath"]
    assert path == str(tmp_path / "out" / "bash-toolu_01_x.out")
    assert r.details["truncated"] is True
    with open(path) as f:
        assert f.read() == "".join(f"{i}\n" for i in range(1, 100001))
    lines = out.split("\n")
    assert lines[:3] == ["1", "2", "3"]
    assert lines[-2:] == ["100000", "[exit code: 0]"]
    assert f"... [98000 lines omitted; full output (588895 bytes) in {path}] ..." in lines
    assert len(lines) <= 2003


async def test_one_huge_line_is_cut_by_characters(ctx):
    r = await call(bash, ctx, command="head -c 100000 /dev/zero | tr '\\0' a; echo; echo END")
    out = text(r)
    assert len(out) < 31_000
    assert out.startswith("a" * 100)
    assert (
        f"... [the middle of a long line omitted; full output (100005 bytes) in {r.details['fullOutputPath']}] ..."
        in out
    )
    assert out.endswith("END\n[exit code: 0]")
    assert os.path.getsize(r.details["fullOutputPath"]) == 100005


async def test_output_beyond_memory_spills_to_the_file(ctx):
    r = await call(bash, ctx, command="seq 1 600000")  # ~4 MB: more than kept in memory
    out = text(r)
    assert out.split("\n")[:2] == ["1", "2"]
    assert out.endswith("600000\n[exit code: 0]")
    with open(r.details["fullOutputPath"], "rb") as f:
        data = f.read()
    assert data.count(b"\n") == 600000 and data.endswith(b"599999\n600000\n")


async def test_second_call_with_the_same_id_gets_its_own_file(ctx):
    a = await call(bash, ctx, command="seq 1 5000", call_id="same")
    b = await call(bash, ctx, command="seq 1 5000", call_id="same")
    assert a.details["fullOutputPath"] != b.details["fullOutputPath"]
    assert b.details["fullOutputPath"].endswith("bash-same-1.out")


async def test_background_leftovers_holding_the_pipe_are_stopped(ctx):
    r = await call(bash, ctx, command="sleep 300 & echo PID $!")
    (pid,) = pids_in(text(r))
    assert "[Processes the command left running in the background were stopped;" in text(r)
    assert wait_gone(pid)


async def test_detached_process_with_redirected_output_is_left_alone(ctx):
    r = await call(bash, ctx, command="sleep 300 >/dev/null 2>&1 & echo PID $!")
    (pid,) = pids_in(text(r))
    try:
        assert "left running" not in text(r)
        assert pid_running(pid)
    finally:
        os.kill(pid, signal.SIGKILL)


# --- the sandbox hand-off, through a test double of BashSandboxLike ----------------------


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
    """Marks wrapped commands by running them with an extra variable set."""

    active = True
    description_suffix = "Runs in a fake box."

    def __init__(self) -> None:
        self.wrapped: list[Wrapped] = []
        self.hints: list[tuple[str, int]] = []

    def wrap(self, command: str, *, cwd: str, network=None, extra_writable=()) -> Wrapped:
        w = Wrapped(["/bin/sh", "-c", command], {"PATH": os.environ["PATH"], "IN_BOX": "yes"})
        self.wrapped.append(w)
        return w

    def hint(self, output: str, exit_code: int) -> str | None:
        self.hints.append((output, exit_code))
        return "[sandbox: maybe denied]"


async def test_sandboxed_call_is_wrapped_hinted_and_closed(ctx):
    box = FakeSandbox()
    ctx.bash_sandbox, ctx.sandboxed = box, True
    ok = await call(bash, ctx, command="echo box=$IN_BOX")
    assert text(ok) == "box=yes\n[exit code: 0]"
    assert ok.details["sandboxed"] is True
    failed = await call(bash, ctx, command="echo denied; exit 1")
    assert text(failed) == "denied\n[sandbox: maybe denied]\n[exit code: 1]"
    assert box.hints == [("denied\n", 1)]
    assert [w.closed for w in box.wrapped] == [[True], [True]]


async def test_unsandboxed_call_with_a_sandbox_present_is_not_wrapped(ctx):
    box = FakeSandbox()
    ctx.bash_sandbox, ctx.sandboxed = box, False
    r = await call(bash, ctx, command="echo box=$IN_BOX; exit 2")
    assert text(r) == "box=\n[exit code: 2]"
    assert r.details["sandboxed"] is False
    assert box.wrapped == [] and box.hints == []


async def test_sandboxed_call_without_a_sandbox_refuses_to_run(ctx, workspace):
    ctx.sandboxed = True
    msg = await fails(bash, ctx, command="touch ran")
    assert msg == "This command was approved to run in the OS sandbox, but no sandbox is available."
    assert not (workspace / "ran").exists()


async def test_wrap_failure_is_a_tool_error(ctx):
    class Broken(FakeSandbox):
        def wrap(self, command, **kw):
            raise RuntimeError("bwrap vanished")

    ctx.bash_sandbox, ctx.sandboxed = Broken(), True
    assert (
        await fails(bash, ctx, command="true")
        == "Could not set up the OS sandbox for this command: bwrap vanished"
    )
