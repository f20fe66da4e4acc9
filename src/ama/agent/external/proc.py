"""Child processes of external agents: started in their own process group, stderr kept as a
short tail for error messages, and stopped without ever hanging (stdin closed, then SIGTERM,
then SIGKILL to the whole group)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Any

#: one JSON line from an agent may be large (a file's content in a tool result)
STDIO_LIMIT = 50 * 1024 * 1024
TAIL_BYTES = 4096


class Child:
    """A started agent process and the last bytes of its stderr."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._tail = bytearray()
        self._drain = asyncio.create_task(self._read_stderr())

    @classmethod
    async def start(cls, argv: list[str], *, cwd: str, env: dict[str, str]) -> Child:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,  # its own group: a stop reaches the agent's children too
            limit=STDIO_LIMIT,
        )
        return cls(proc)

    async def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(65536):
            self._tail += chunk
            del self._tail[:-TAIL_BYTES]

    def stderr_tail(self, lines: int = 3) -> str:
        text = self._tail.decode("utf-8", "replace").strip()
        return " | ".join(text.splitlines()[-lines:])

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def exit_note(self) -> str:
        """``exited with code N`` / ``was killed by SIGX`` plus the stderr tail."""
        rc = self.proc.returncode
        if rc is None:
            what = "stopped answering"
        elif rc < 0:
            try:
                what = f"was killed by {signal.Signals(-rc).name}"
            except ValueError:
                what = f"was killed by signal {-rc}"
        else:
            what = f"exited with code {rc}"
        tail = self.stderr_tail()
        return f"{what}: {tail}" if tail else what

    def signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    async def wait(self, timeout: float) -> bool:
        """True once the process has exited (within ``timeout`` seconds)."""
        try:
            await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def stop(self, *, grace: float = 3.0) -> None:
        """Close stdin, give the agent ``grace`` seconds to exit, then terminate and kill its
        process group. Never raises, never waits longer than about ``grace + 2`` seconds."""
        stdin = self.proc.stdin
        if stdin is not None and not stdin.is_closing():
            with contextlib.suppress(Exception):
                stdin.close()
        if self.proc.returncode is None and not await self.wait(grace):
            self.signal_group(signal.SIGTERM)
            if not await self.wait(2.0):
                self.signal_group(signal.SIGKILL)
                await self.wait(2.0)
        # the group may outlive its leader (a background child of the agent)
        self.signal_group(signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._drain, 1.0)
        if not self._drain.done():
            self._drain.cancel()


async def race(aw: Any, cancel: asyncio.Event) -> tuple[bool, Any]:
    """Await ``aw`` unless ``cancel`` is set first: ``(True, result)`` or ``(False, None)``
    (then ``aw`` is cancelled). Exceptions of ``aw`` propagate."""
    task = asyncio.ensure_future(aw)
    stopper = asyncio.create_task(cancel.wait())
    try:
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        task.cancel()
        raise
    finally:
        stopper.cancel()
    if task.done():
        return True, task.result()
    task.cancel()
    with contextlib.suppress(BaseException):
        await task
    return False, None
