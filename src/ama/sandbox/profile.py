"""Sandbox profiles as pure functions: a policy in, a bwrap / unshare argv or SBPL text out.

Nothing here touches the file system.  Paths in a ``Policy`` must already be absolute
realpaths (``wrap.resolve_policy`` does that); every path is checked for control
characters, which are refused everywhere (SBPL cannot carry them safely, and no real
workspace has them).

Linux, bubblewrap -- the order of the mount operations is the point:

1. ``--ro-bind / /``           everything readable, nothing writable
2. ``--dev /dev --proc /proc`` a minimal /dev and the procfs of the new pid namespace
3. ``--bind P P``              writable directories, parents before children
4. ``--bind .git .git``        pinned paths: a mount point cannot be renamed or removed
5. ``--ro-bind P P``           read-only paths inside writable ones
6. ``--tmpfs D --remount-ro D`` / ``--ro-bind EMPTY F``   hidden (reads return empty)

macOS, SBPL -- later rules win, so allows come first and the read-only and hidden denies
after them, then the rename protection of protected paths and their parents, then signals.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

NETWORK_VALUES = ("deny", "allow")


class ProfileError(ValueError):
    """A policy that cannot be expressed safely (relative path, control character, ...)."""


@dataclass(frozen=True)
class Policy:
    """What a sandboxed child may do.  Everything not listed is readable and not writable.

    ``read_only`` and ``hidden_*`` may name paths that do not exist: SBPL then refuses
    creating them; bwrap can only cover existing paths, so ``resolve_policy`` drops the
    missing ones for it.
    """

    network: str = "deny"
    writable: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    hidden_dirs: tuple[str, ...] = ()
    hidden_files: tuple[str, ...] = ()
    pinned: tuple[str, ...] = ()  # bwrap: self-bound so they cannot be renamed away
    #: bwrap: bound read-only over hidden files.  An empty regular file reads as empty;
    #: /dev/null (the default) fails with EACCES, bwrap binds it without device access
    empty_file: str = "/dev/null"

    def __post_init__(self) -> None:
        if self.network not in NETWORK_VALUES:
            raise ProfileError(f"network must be 'deny' or 'allow', got {self.network!r}")
        for group in (self.writable, self.read_only, self.hidden_dirs, self.hidden_files, self.pinned):
            for path in group:
                check_path(path)
        check_path(self.empty_file)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_path(path: str) -> str:
    """Return ``path`` if it is absolute and free of control characters, else raise."""
    if not isinstance(path, str) or not path.startswith("/"):
        raise ProfileError(f"sandbox paths must be absolute: {path!r}")
    if _CONTROL.search(path):
        raise ProfileError(f"sandbox path contains a control character: {path!r}")
    return path


def _depth_sorted(paths: Sequence[str]) -> list[str]:
    """Deduplicated, parents before children (a later mount covers an earlier one)."""
    unique = dict.fromkeys(p.rstrip("/") or "/" for p in paths)
    return sorted(unique, key=lambda p: (0 if p == "/" else p.count("/"), p))


# ---------------------------------------------------------------------------- bubblewrap


def bwrap_argv(
    policy: Policy,
    command: Sequence[str],
    *,
    bwrap: str = "bwrap",
    as_root: bool = False,
    seccomp_fd: int | None = None,
    status_fd: int | None = None,
    chdir: str | None = None,
) -> list[str]:
    """The full bwrap command line that runs ``command`` under ``policy``.

    ``as_root``: the caller's effective uid is 0.  bwrap then keeps every capability unless
    told otherwise, so the sandbox gets its own user namespace mapped to uid/gid 0 with
    all capabilities dropped (no umount, remount, setns, or ``/proc/<pid>/root``).
    """
    if not command:
        raise ProfileError("empty command")
    argv = [bwrap, "--new-session", "--die-with-parent", "--unshare-pid"]
    if as_root:
        argv += ["--unshare-user", "--uid", "0", "--gid", "0", "--cap-drop", "ALL"]
    if policy.network == "deny":
        argv.append("--unshare-net")
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for path in _depth_sorted(policy.writable):
        argv += ["--bind", path, path]
    for path in _depth_sorted(policy.pinned):
        argv += ["--bind", path, path]
    for path in _depth_sorted(policy.read_only):
        argv += ["--ro-bind", path, path]
    for path in _depth_sorted(policy.hidden_dirs):
        argv += ["--tmpfs", path, "--remount-ro", path]
    for path in _depth_sorted(policy.hidden_files):
        argv += ["--ro-bind", policy.empty_file, path]
    if chdir is not None:
        argv += ["--chdir", check_path(chdir)]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    if status_fd is not None:
        argv += ["--json-status-fd", str(status_fd)]
    argv.append("--")
    argv += command
    return argv


def unshare_argv(command: Sequence[str], *, unshare: str = "unshare", network: str = "deny") -> list[str]:
    """``unshare -r -n -- command``: a new user and network namespace; writes NOT restricted."""
    if not command:
        raise ProfileError("empty command")
    flags = ["-r", "-n"] if network == "deny" else ["-r"]
    return [unshare, *flags, "--", *command]


# ---------------------------------------------------------------------------- macOS SBPL

#: devices a sandboxed command may always write
SBPL_DEVICES = (
    '(allow file-write* (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") '
    '(literal "/dev/dtracehelper") (regex #"^/dev/fd/"))'
)


def sbpl_string(path: str) -> str:
    """An SBPL string literal for ``path``: ``\\`` and ``"`` escaped, control characters refused."""
    check_path(path)
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _ancestors(paths: Sequence[str]) -> list[str]:
    """Every directory above ``paths`` except ``/`` (deduplicated, parents first)."""
    out = []
    for path in paths:
        parent = path.rstrip("/").rsplit("/", 1)[0]
        while parent:
            out.append(parent)
            parent = parent.rsplit("/", 1)[0]
    return _depth_sorted(out)


def sbpl_profile(policy: Policy) -> str:
    """The Seatbelt profile text for ``policy`` (one rule per line, trailing newline).

    After the allows: read-only and hidden paths refuse writes (``subpath`` also covers a
    path that does not exist yet, so creating it is refused); those paths, their parents
    and the pinned paths refuse ``file-write-unlink``, so none of them can be renamed away
    (or deleted) and made again; signals reach only processes of the same sandbox.
    """
    lines = ["(version 1)", "(allow default)"]
    if policy.network == "deny":
        lines.append("(deny network*)")
        lines.append('(deny mach-lookup (global-name "com.apple.dnssd.service"))')
    lines.append("(deny file-write*)")
    if policy.writable:
        subpaths = " ".join(f"(subpath {sbpl_string(p)})" for p in _depth_sorted(policy.writable))
        lines.append(f"(allow file-write* {subpaths})")
    lines.append(SBPL_DEVICES)
    if policy.read_only:
        subpaths = " ".join(f"(subpath {sbpl_string(p)})" for p in _depth_sorted(policy.read_only))
        lines.append(f"(deny file-write* {subpaths})")
    hidden = [f"(subpath {sbpl_string(p)})" for p in _depth_sorted(policy.hidden_dirs)]
    hidden += [f"(literal {sbpl_string(p)})" for p in _depth_sorted(policy.hidden_files)]
    if hidden:
        lines.append(f"(deny file-read* file-write* {' '.join(hidden)})")
    protected = [*policy.read_only, *policy.hidden_dirs, *policy.hidden_files]
    no_rename = _depth_sorted([*protected, *_ancestors(protected), *policy.pinned])
    if no_rename:
        literals = " ".join(f"(literal {sbpl_string(p)})" for p in no_rename)
        lines.append(f"(deny file-write-unlink {literals})")
    lines.append("(deny signal)")
    lines.append("(allow signal (target same-sandbox))")
    return "\n".join(lines) + "\n"


def sandbox_exec_argv(
    policy: Policy, command: Sequence[str], *, sandbox_exec: str = "/usr/bin/sandbox-exec"
) -> list[str]:
    """``sandbox-exec -p <profile> command...`` (it execs in place: same pid, same group)."""
    if not command:
        raise ProfileError("empty command")
    return [sandbox_exec, "-p", sbpl_profile(policy), *command]
