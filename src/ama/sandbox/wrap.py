"""Command line and policy in, wrapped command line out; and the one place that spawns it.

Users of the sandbox never build bwrap or sandbox-exec command lines themselves: they get
a ``WrappedCommand`` (argv, scrubbed environment, the file descriptors the child needs)
and hand it to ``spawn``.  ``WrappedCommand.close()`` releases what was made for the call.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import queue
import re
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ama.sandbox import profile, seccomp
from ama.sandbox.detect import SandboxStatus


class SandboxError(Exception):
    """The command cannot be wrapped (it must then not run at all, never run unsandboxed)."""

    code = "sandbox_failed"


#: environment variables scrubbed from every sandboxed command unless ``sandbox.env`` names them
CREDENTIAL_ENV_PATTERNS: tuple[str, ...] = (
    "*_KEY",  # OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY, STRIPE_SECRET_KEY, ...
    "*_APIKEY",
    "*_TOKEN",
    "*_SECRET",
    "*_PASSWORD",
    "AWS_*",
    "AMA_*KEY*",
    "AMA_*TOKEN*",
    "AMA_*SECRET*",
)


@functools.lru_cache(maxsize=32)
def _globs(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """One compiled regex for a set of glob patterns (fnmatch semantics, case-sensitive)."""
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


def is_credential_var(name: str) -> bool:
    pattern = _globs(CREDENTIAL_ENV_PATTERNS)
    return pattern is not None and pattern.match(name.upper()) is not None


def scrub_env(env: Mapping[str, str], allow: Iterable[str] = (), deny: Iterable[str] = ()) -> dict[str, str]:
    """``env`` without credential variables (``CREDENTIAL_ENV_PATTERNS`` and the names or
    globs in ``deny``, e.g. the key variables of configured providers), except those that
    ``allow`` names (``sandbox.env``)."""
    credential = _globs(CREDENTIAL_ENV_PATTERNS)
    denied = _globs(tuple(deny))
    allowed = _globs(tuple(allow))
    assert credential is not None
    return {
        k: v
        for k, v in env.items()
        if not (credential.match(k.upper()) or (denied is not None and denied.match(k)))
        or (allowed is not None and allowed.match(k))
    }


@dataclass
class WrappedCommand:
    """A command ready for ``spawn(argv, env=env, pass_fds=pass_fds, ...)``."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()
    sandboxed: bool = False
    _fds: list[int] = field(default_factory=list, repr=False)

    def close(self) -> None:
        """Close the descriptors made for this call (idempotent; call after spawning)."""
        fds, self._fds = self._fds, []
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> WrappedCommand:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _kind_of(path: str) -> str | None:
    """ "dir", "file" or None (missing); follows symlinks."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return "dir" if stat.S_ISDIR(mode) else "file"


def build_policy(
    kind: str,
    *,
    network: str = "deny",
    writable: Iterable[str] = (),
    read_only: Iterable[str] = (),
    hidden: Iterable[str] = (),
    pinned: Iterable[str] = (),
    resolved: bool = False,
    empty_file: str = "/dev/null",
) -> profile.Policy:
    """The policy for sandbox ``kind`` from absolute paths (realpath'd unless ``resolved``).

    Missing writable directories are dropped.  For bwrap, which can only mount over
    existing paths, missing read-only, hidden and pinned paths are dropped too; for
    sandbox-exec they stay, so creating them is refused (pinned paths: renaming them).  Hidden paths are classified as
    directories (emptied) or files (read as empty) by what is on disk now.
    """
    real: Callable[[str], str] = (lambda p: p) if resolved else os.path.realpath
    writable_dirs = [p for p in map(real, writable) if os.path.isdir(p)]
    hidden_dirs: list[str] = []
    hidden_files: list[str] = []
    for path in map(real, hidden):
        what = _kind_of(path)
        if what == "dir" or (what is None and kind == "sandbox-exec"):
            hidden_dirs.append(path)
        elif what == "file":
            hidden_files.append(path)
    read_only = list(map(real, read_only))
    pinned = list(map(real, pinned))
    if kind == "bwrap":
        read_only = [p for p in read_only if os.path.lexists(p)]
        pinned = [p for p in pinned if os.path.lexists(p)]
    try:
        return profile.Policy(
            network=network,
            writable=tuple(writable_dirs),
            read_only=tuple(read_only),
            hidden_dirs=tuple(hidden_dirs),
            hidden_files=tuple(hidden_files),
            pinned=tuple(pinned),
            empty_file=empty_file,
        )
    except profile.ProfileError as e:
        raise SandboxError(str(e)) from None


def wrap_command(
    status: SandboxStatus,
    command: Sequence[str],
    policy: profile.Policy,
    *,
    env: Mapping[str, str] | None = None,
    env_allow: Iterable[str] = (),
    env_deny: Iterable[str] = (),
    cwd: str | None = None,
    tmpdir: str | None = None,
) -> WrappedCommand:
    """Wrap ``command`` for ``status.kind``; kind ``none`` returns it unchanged (unsandboxed).

    A sandboxed command gets ``env`` (default ``os.environ``) without credential variables,
    and ``TMPDIR`` set to ``tmpdir`` when given.
    """
    base = dict(os.environ if env is None else env)
    if status.kind == "none":
        return WrappedCommand(list(command), base, (), False)
    sandbox_env = scrub_env(base, env_allow, env_deny)
    if tmpdir is not None:
        sandbox_env["TMPDIR"] = tmpdir
    exe = status.executable or status.kind
    try:
        if status.kind == "bwrap":
            fd = seccomp.program_fd()
            fds = [] if fd is None else [fd]
            try:
                argv = profile.bwrap_argv(
                    policy, command, bwrap=exe, as_root=os.geteuid() == 0, seccomp_fd=fd, chdir=cwd
                )
            except BaseException:
                for x in fds:
                    os.close(x)
                raise
            return WrappedCommand(argv, sandbox_env, tuple(fds), True, fds)
        if status.kind == "sandbox-exec":
            return WrappedCommand(
                profile.sandbox_exec_argv(policy, command, sandbox_exec=exe), sandbox_env, (), True
            )
        if status.kind == "unshare":
            return WrappedCommand(
                profile.unshare_argv(command, unshare=exe, network=policy.network), sandbox_env, (), True
            )
    except profile.ProfileError as e:
        raise SandboxError(str(e)) from None
    raise SandboxError(f"unknown sandbox kind {status.kind!r}")


# ---------------------------------------------------------------------------- spawning


class _Spawner:
    """One daemon thread that performs every ``Popen`` for the process.

    The kernel's parent-death signal (bwrap ``--die-with-parent``) fires when the *thread*
    that forked bwrap exits, not the process.  Spawning from a short-lived worker thread
    would kill the sandbox when that worker ends; this thread lives as long as ama.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def _run(self) -> None:
        while True:
            fn, box, done = self._queue.get()
            try:
                box.append((True, fn()))
            except BaseException as e:  # handed back to the caller
                box.append((False, e))
            done.set()

    def call(self, fn: Callable[[], subprocess.Popen]) -> subprocess.Popen:
        if threading.current_thread() is self._thread or sys.is_finalizing():
            return fn()  # at interpreter exit the daemon thread no longer runs
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="ama-sandbox-spawner", daemon=True)
                self._thread.start()
        box: list = []
        done = threading.Event()
        self._queue.put((fn, box, done))
        try:
            done.wait()
        except BaseException:
            # Interrupted while the child was being created: do not leave it behind.
            done.wait()
            ok, value = box[0]
            if ok:
                value.kill()
                value.wait()
            raise
        ok, value = box[0]
        if not ok:
            raise value
        return value

    @property
    def thread(self) -> threading.Thread | None:
        return self._thread


_spawner = _Spawner()


def spawn(argv: list[str], **popen_kwargs) -> subprocess.Popen:
    """``subprocess.Popen(argv, **popen_kwargs)`` performed on ama's long-lived spawner thread."""
    return _spawner.call(lambda: subprocess.Popen(argv, **popen_kwargs))


def spawner_thread() -> threading.Thread | None:
    """The spawner thread, once started (for diagnostics and tests)."""
    return _spawner.thread
