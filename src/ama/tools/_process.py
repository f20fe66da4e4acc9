"""Child processes for bash: spawn, wait without blocking the event loop, kill a process group.

Every command runs in its own session (``start_new_session``), so its process group id is
its pid and a timeout, an abort or ``bash_kill`` can stop the whole tree: SIGTERM to the
group, then SIGKILL once ``grace`` seconds have passed with members still alive.  Zombies
count as gone (an init that does not reap orphans leaves them behind).  Each group is also
registered with the guard of ``_guard``, which kills it if ama dies first.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

from ama.tools._guard import guard_group, register_in_child, release_group

DEFAULT_GRACE = 2.0
_POLL = 0.05


def popen(argv: list[str], **kwargs: Any) -> subprocess.Popen:
    """The one place bash starts a process: ``ama.sandbox.spawn`` when the sandbox package
    provides it (it spawns from a long-lived thread), else ``subprocess.Popen``.  A process
    started in its own session is registered with the guard (``_guard``): its group is
    killed when ama exits, even by SIGKILL."""
    if kwargs.get("start_new_session") and "preexec_fn" not in kwargs:
        register = register_in_child()
        if register is not None:
            kwargs["preexec_fn"] = register
    try:
        from ama.sandbox import spawn
    except ImportError:
        proc = subprocess.Popen(argv, **kwargs)
    else:
        proc = spawn(argv, **kwargs)
    if kwargs.get("start_new_session"):
        guard_group(proc.pid)
    return proc


def watch_exit(proc: subprocess.Popen, on_exit: Callable[[int], None]) -> threading.Thread:
    """Call ``on_exit(returncode)`` from a daemon thread once ``proc`` has exited (and is reaped)."""

    def wait() -> None:
        rc = proc.wait()
        if not group_alive(proc.pid):
            release_group(proc.pid)
        on_exit(rc)

    thread = threading.Thread(target=wait, name=f"ama-wait-{proc.pid}", daemon=True)
    thread.start()
    return thread


def exit_future(proc: subprocess.Popen) -> asyncio.Future[int]:
    """A future of the running loop that resolves to ``proc``'s return code."""
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[int] = loop.create_future()

    def done(rc: int) -> None:
        if not fut.done():
            fut.set_result(rc)

    watch_exit(proc, lambda rc: call_soon(loop, done, rc))
    return fut


def call_soon(loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], *args: Any) -> None:
    """``loop.call_soon_threadsafe`` that does nothing once the loop is closed."""
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:
        pass


def _proc_group_members(pgid: int) -> bool:
    """Whether a live (non-zombie) process with process group ``pgid`` exists, from ``/proc``."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _proc_group_members(pgid) if os.path.isdir("/proc/self") else True


def signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def terminate_group(pgid: int, grace: float = DEFAULT_GRACE) -> None:
    """SIGTERM the process group, SIGKILL it if members are left after ``grace`` seconds (blocking)."""
    terminate_groups([pgid], grace)


def terminate_groups(pgids: list[int], grace: float = DEFAULT_GRACE) -> None:
    """``terminate_group`` for several groups at once (one grace period for all)."""
    for pgid in pgids:
        signal_group(pgid, signal.SIGTERM)
    alive = list(pgids)
    deadline = time.monotonic() + grace
    while alive and time.monotonic() < deadline:
        time.sleep(_POLL)
        alive = [pgid for pgid in alive if group_alive(pgid)]
    for pgid in alive:
        signal_group(pgid, signal.SIGKILL)
    for pgid in pgids:
        release_group(pgid)


def terminate_group_later(pgid: int, grace: float = DEFAULT_GRACE) -> None:
    """``terminate_group`` from a daemon thread, for places that cannot wait (cancellation)."""
    threading.Thread(target=terminate_group, args=(pgid, grace), daemon=True).start()


def describe_exit(returncode: int) -> tuple[int, str | None]:
    """(exit code as a shell reports it, signal name or None): a signal N is 128+N."""
    if returncode >= 0:
        return returncode, None
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    return 128 - returncode, name
