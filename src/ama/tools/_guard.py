"""The process-group guard: the commands ama starts die with ama, even on ``kill -9``.

Every command runs in its own process group (``start_new_session``), which lets ama stop a
whole tree on a timeout or an abort -- but nothing stops it when ama itself is killed:
``PR_SET_PDEATHSIG`` on the group leader reaches that one process only (not the children
bash forks), is lost by a setuid exec, and fires when the *thread* that forked exits.

So ama starts one small guard process, once, on first use: a fresh interpreter
(``python -I -S``, no ama import) in its own session whose stdin is the read end of a pipe
only ama holds the write end of (close-on-exec, so no command inherits it).  Each new group
leader writes ``+<pgid>`` itself, between fork and exec (so there is no moment when it runs
unregistered), ama writes it again after the spawn, and ``-<pgid>`` once the group is gone.  When ama
exits -- normally, by a crash or by SIGKILL -- the kernel closes the pipe, the guard reads
end-of-file and SIGKILLs every group still registered, then exits.  A process that left
its group (``setsid``) escapes, as it escapes a group kill.  The sandbox adds its own
guarantee: bwrap runs with ``--die-with-parent`` in a new PID namespace.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

#: the guard's program: register / unregister groups from stdin; SIGKILL what is left at EOF
GUARD_CODE = """
import os, signal
for s in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
    signal.signal(s, signal.SIG_IGN)
groups, buf = set(), b""
while True:
    data = os.read(0, 65536)
    if not data:
        break
    *lines, buf = (buf + data).split(b"\\n")
    for line in lines:
        try:
            (groups.add if line[:1] == b"+" else groups.discard)(int(line[1:]))
        except ValueError:
            pass
for g in groups:
    try:
        os.killpg(g, signal.SIGKILL)
    except OSError:
        pass
"""

_lock = threading.Lock()
_state: dict[str, int] = {}  # "fd": the write end; "pid": this process (a fork must not share it)


def _start() -> int | None:
    """Start the guard; the write end of its pipe, or None when it cannot run."""
    exe = sys.executable
    if not exe or not hasattr(os, "posix_spawn"):
        return None
    r, w = os.pipe()  # both close-on-exec
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        try:
            actions = [
                (os.POSIX_SPAWN_DUP2, r, 0),
                (os.POSIX_SPAWN_DUP2, devnull, 1),
                (os.POSIX_SPAWN_DUP2, devnull, 2),
            ]
            os.posix_spawn(exe, [exe, "-I", "-S", "-c", GUARD_CODE], {}, file_actions=actions, setsid=True)
        finally:
            os.close(devnull)
    except OSError:
        os.close(w)
        return None
    finally:
        os.close(r)
    return w


def _fd() -> int | None:
    with _lock:
        if _state.get("pid") != os.getpid():  # first use, or a forked child: its own guard
            fd = _start()
            if fd is None:
                return None
            _state.update(fd=fd, pid=os.getpid())
        return _state["fd"]


def _send(line: bytes) -> None:
    fd = _fd()
    if fd is None:
        return
    try:
        os.write(fd, line)
    except OSError:
        with _lock:
            _state.clear()  # the guard is gone: start another next time


def register_in_child() -> Callable[[], None] | None:
    """A ``preexec_fn`` that registers the new process (a group leader) with the guard from
    inside the child, before it execs: no window in which ama could die with the command
    running but not yet registered.  None when there is no guard.  It makes two system
    calls and nothing else (a forked child of a threaded process must not do more)."""
    fd = _fd()
    if fd is None:
        return None

    def register() -> None:
        try:
            os.write(fd, b"+%d\n" % os.getpid())
        except OSError:
            pass

    return register


def guard_group(pgid: int) -> None:
    """Kill process group ``pgid`` when ama exits, however it exits."""
    _send(b"+%d\n" % pgid)


def release_group(pgid: int) -> None:
    """Group ``pgid`` is gone: do not kill that id later (it may be reused)."""
    if _state.get("pid") == os.getpid():
        _send(b"-%d\n" % pgid)
