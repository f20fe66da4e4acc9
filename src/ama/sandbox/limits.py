"""A process limit for the bash sandbox (fork bombs), ``sandbox.maxProcesses`` (default 1024).

Two mechanisms, both set up so that the limit counts the sandbox's processes and not the
user's others:

* ``RLIMIT_NPROC`` set *inside* the sandbox, after bwrap made its user namespace
  (``nproc_argv`` puts ``ulimit -u N`` in front of the command).  Since Linux 5.14 the count
  is kept per user namespace, so N bounds the processes of one call; the outer limit
  (the user's own ``ulimit -u``) still applies to the user's processes in total.  Set
  before the namespace existed, the limit would be compared with every process the user
  runs on the machine.  Soft and hard limits are both lowered: the command cannot raise
  them again.  On kernels before 5.14 the limit counts all processes of the user.
* A pids cgroup, when ama may create one (``PidsCgroup``; cgroup v1 ``pids`` hierarchy,
  writable -- typically when ama runs as root): RLIMIT_NPROC does not apply to processes
  whose real uid is the host's root, and the sandbox of a root-run ama maps to it.  One
  cgroup per session with ``pids.max = N`` holds every sandboxed call of the session
  (background jobs included); ``close()`` removes it (a killed ama leaves it behind, empty).

``0`` turns the limit off.
"""

from __future__ import annotations

import itertools
import os
import resource
import shutil

DEFAULT_MAX_PROCESSES = 1024
CGROUP_V1_PIDS = "/sys/fs/cgroup/pids"
_serial = itertools.count(1)  # one cgroup per session, even for sessions of the same id


def nproc_argv(argv: list[str], limit: int, *, bash: str | None = None) -> list[str]:
    """``argv`` started by a shell that first lowers RLIMIT_NPROC to ``limit`` (0: unchanged).

    Uses bash (``ulimit -u``); without bash, ``argv`` is returned as is.
    """
    if limit <= 0:
        return list(argv)
    shell = bash if bash is not None else shutil.which("bash")
    if not shell:
        return list(argv)
    limit = effective_limit(limit)
    script = (
        f"ulimit -u {limit} 2>/dev/null || {{ echo 'ama: cannot set the process limit "
        f"(sandbox.maxProcesses)' >&2; exit 126; }}; exec \"$@\""
    )
    return [shell, "-c", script, "ama-sandbox", *argv]


def effective_limit(limit: int) -> int:
    """``limit``, or the hard RLIMIT_NPROC ama runs under if that is lower (a limit cannot be raised)."""
    try:
        _soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    except (OSError, ValueError):
        return limit
    if hard == resource.RLIM_INFINITY or hard < 0:
        return limit
    return min(limit, int(hard))


def _own_cgroup_v1(controller: str, proc_self: str = "/proc/self/cgroup") -> str | None:
    try:
        with open(proc_self, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3 and controller in parts[1].split(","):
            return parts[2]
    return None


class PidsCgroup:
    """A pids cgroup (v1) with ``pids.max``; ``argv`` moves the sandbox into it first."""

    def __init__(self, path: str) -> None:
        self.path = path

    @classmethod
    def create(cls, label: str, limit: int, *, root: str = CGROUP_V1_PIDS) -> PidsCgroup | None:
        """A new cgroup under ama's own pids cgroup, or None where that is not possible."""
        if limit <= 0 or not os.path.isdir(root) or not os.access(root, os.W_OK):
            return None
        own = _own_cgroup_v1("pids")
        if own is None:
            return None
        parent = os.path.join(root, own.lstrip("/"))
        path = os.path.join(parent, f"ama-{label}-{os.getpid()}-{next(_serial)}")
        try:
            os.mkdir(path)
        except OSError:
            return None
        try:
            with open(os.path.join(path, "pids.max"), "w", encoding="ascii") as f:
                f.write(str(int(limit)))
        except OSError:
            cls(path).close()
            return None
        return cls(path)

    def argv(self, argv: list[str]) -> list[str]:
        """``argv`` started by ``sh``, which first moves itself (and so ``argv``) into the cgroup."""
        procs = os.path.join(self.path, "cgroup.procs")
        return ["/bin/sh", "-c", 'echo 0 > "$0" && exec "$@"', procs, *argv]

    def close(self) -> None:
        """Remove the cgroup (it stays while processes are in it; the kernel refuses then)."""
        try:
            os.rmdir(self.path)
        except OSError:
            pass
