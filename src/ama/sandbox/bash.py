"""The bash sandbox: settings fixed for a session, the policy of each call, the denial hint.

The composition root builds one ``BashSandbox`` per session (``make_bash_sandbox``) and
hands the same object to the bash tool and the permission pipeline, so both agree on
"will this call run in the sandbox".  Per call:

    writable    workspace, a private TMPDIR for the session, ama's output dirs, sandbox.writable
    read-only   <workspace>/.ama, the workspace's git directory as a whole (gitguard.py): a
                missing .ama/ or .git is created empty first (bwrap mounts only on what exists)
    pinned      directories between a writable root and a protected path (cannot be renamed)
    unreadable  ~/.ssh ~/.gnupg ~/.aws ~/.kube ~/.docker/config.json ~/.config/gcloud
                ~/.netrc ~/.pgpass ~/.git-credentials <data dir>/auth.json, and the same names
                and .env files inside the workspace unless sandbox.allowSecrets names them
    processes   at most sandbox.maxProcesses (RLIMIT_NPROC inside; a pids cgroup when writable)
    network     sandbox.network ("deny" by default)
    environment credential variables removed unless sandbox.envAllow (or the older
                sandbox.env) names them; the bash tool scrubs again by name and value
                (``ama.tools.bash_env``), sandboxed or not, with the same allow list
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ama.sandbox import limits
from ama.sandbox.detect import SandboxStatus, detect, off_reason
from ama.sandbox.gitguard import git_read_only, protected_ancestors
from ama.sandbox.hint import HINT, WHAT, denial_hint
from ama.sandbox.profile import NETWORK_VALUES, Policy
from ama.sandbox.secretfiles import AUTH_FILE, CREDENTIAL_PATHS, SecretScan
from ama.sandbox.wrap import SandboxError, WrappedCommand, build_policy, wrap_command

__all__ = ["AUTH_FILE", "CREDENTIAL_PATHS", "HINT", "BashSandbox", "make_bash_sandbox"]

DEFAULTS: dict[str, Any] = {
    "sandbox.enabled": "auto",
    "sandbox.bash": "off",
    "sandbox.network": "deny",
    "sandbox.writable": [],
    "sandbox.env": [],
    "sandbox.envAllow": [],
    "sandbox.allowSecrets": [],
    "sandbox.maxProcesses": limits.DEFAULT_MAX_PROCESSES,
}

#: inside the workspace: writable there would let code run later, outside the sandbox
WORKSPACE_READ_ONLY: tuple[str, ...] = (".ama",)

DESCRIPTION = {
    "deny": "Runs in an OS sandbox (writes only in workspace/temp, no network); sandbox:false needs approval.",
    "allow": "Runs in an OS sandbox (writes only in workspace/temp); sandbox:false needs approval.",
}
_WHAT = WHAT


def setting(config: Mapping[str, Any] | Any, key: str) -> Any:
    """``key`` from a ``Config`` (``.get``), a flat ``{"sandbox.network": ...}`` or a nested mapping."""
    value = None
    getter = getattr(config, "get", None)
    if callable(getter):
        value = getter(key)
    if value is None and isinstance(config, Mapping):
        section, _, name = key.partition(".")
        nested = config.get(section)
        if isinstance(nested, Mapping):
            value = nested.get(name)
    return DEFAULTS[key] if value is None else value


def _choice(config: Any, key: str, choices: Sequence[str], warnings: list[str]) -> str:
    value = setting(config, key)
    if value not in choices:
        warnings.append(f"{key} must be one of {', '.join(choices)}, got {value!r}; using {DEFAULTS[key]!r}")
        return DEFAULTS[key]
    return value


def _str_list(config: Any, key: str, warnings: list[str]) -> list[str]:
    value = setting(config, key)
    if not isinstance(value, (list, tuple)) or not all(isinstance(x, str) for x in value):
        warnings.append(f"{key} must be a list of strings, got {value!r}; ignored")
        return []
    return list(value)


def expand_path(path: str, home: str) -> str | None:
    """``~`` and ``~/x`` expanded against ``home``; absolute paths as they are; relative: None."""
    if path == "~" or path.startswith("~/"):
        return home + path[1:]
    return path if path.startswith("/") else None


class BashSandbox:
    """Sandbox settings of one session, shared by the bash tool and the permission pipeline."""

    def __init__(
        self,
        *,
        status: SandboxStatus,
        active: bool,
        network: str = "deny",
        workspace: str | None = None,
        tmpdir: str | None = None,
        writable: Sequence[str] = (),
        hidden: Sequence[str] = (),
        env_allow: Sequence[str] = (),
        env_deny: Sequence[str] = (),
        shell: str = "/bin/sh",
        warnings: Sequence[str] = (),
        allow_secrets: Sequence[str] = (),
        max_processes: int = 0,
        cgroup: limits.PidsCgroup | None = None,
        home: str | None = None,
        empty_file: str | None = None,
    ) -> None:
        self.status = status
        self.active = active
        self.network = network
        self.workspace = workspace
        self.tmpdir = tmpdir
        self.writable = tuple(writable)  # realpaths: sandbox.writable and ama's output dirs
        self.hidden = tuple(hidden)  # realpaths of the credential paths
        self.env_allow = tuple(env_allow)  # sandbox.envAllow (+ sandbox.env): variables passed anyway
        self.env_deny = tuple(env_deny)  # more variables to scrub (provider key variables)
        self.shell = shell
        self.warnings = list(warnings)
        self.allow_secrets = tuple(allow_secrets)  # sandbox.allowSecrets: workspace secrets left readable
        self.max_processes = max_processes  # sandbox.maxProcesses (0: no limit)
        self.cgroup = cgroup
        self.home = home or os.path.expanduser("~")
        self.empty_file = empty_file  # bound over hidden files (bwrap)
        self._scan = SecretScan()
        self._lock = threading.Lock()
        self._hidden_seen: set[str] = set(self.hidden)  # for the hint: everything ever hidden
        cleanup = [p for p in (tmpdir, empty_file) if p]
        self._finalizer = weakref.finalize(self, _cleanup, cleanup, cgroup) if (cleanup or cgroup) else None

    @property
    def isolates_network(self) -> bool:
        return self.active and self.network == "deny"

    @property
    def description_suffix(self) -> str:
        """The sentence appended to the bash tool's description ("" when not active)."""
        return DESCRIPTION[self.network] if self.active else ""

    # ------------------------------------------------------------------ per call

    def workspace_secrets(self) -> list[str]:
        """Secret files and directories in the workspace that this call hides (realpaths)."""
        if self.workspace is None:
            return []
        with self._lock:
            found = self._scan.scan(self.workspace, self.allow_secrets)
            self._hidden_seen.update(found)
        return found

    def policy(self, *, network: str | None = None, extra_writable: Iterable[str] = ()) -> Policy:
        """The policy of one call (creates a missing ``.ama/`` and, for bwrap, ``.git`` first)."""
        if not self.active or self.workspace is None:
            raise SandboxError("the bash sandbox is not active")
        net = network or self.network
        if net not in NETWORK_VALUES:
            raise SandboxError(f"network must be 'deny' or 'allow', got {net!r}")
        extra = []
        for path in extra_writable:
            expanded = expand_path(path, self.home)
            if expanded is None:
                raise SandboxError(f"writable paths must be absolute or start with ~/: {path!r}")
            extra.append(os.path.realpath(expanded))
        ws = self.workspace
        if self.status.kind == "bwrap":  # SBPL refuses creating missing paths by itself
            _ensure_dir(os.path.join(ws, ".ama"))
            _ensure_dir(os.path.join(ws, ".git"))  # an empty .git is no repository to git
        writable = [ws, *([self.tmpdir] if self.tmpdir else []), *self.writable, *extra]
        read_only = [os.path.realpath(os.path.join(ws, rel)) for rel in WORKSPACE_READ_ONLY]
        for path in git_read_only(ws):
            if any(_contains(root, path) for root in writable):  # elsewhere it is read-only anyway
                read_only.append(path)
        hidden = [*self.hidden, *self.workspace_secrets()]
        # parents of read-only paths that git finds by name (a worktree's git dir) are pinned;
        # a hidden path needs none: its mount moves along if a parent is renamed
        pinned = protected_ancestors(read_only, writable)
        return build_policy(
            self.status.kind,
            network=net,
            writable=writable,
            read_only=read_only,
            hidden=hidden,
            pinned=pinned,
            resolved=True,
            empty_file=self.empty_file or "/dev/null",
        )

    def wrap(
        self,
        command: str,
        *,
        cwd: str,
        network: str | None = None,
        extra_writable: Iterable[str] = (),
        sandbox: bool = True,
    ) -> WrappedCommand:
        """``shell -c command`` wrapped for this session; unwrapped if inactive or ``sandbox=False``."""
        return self.wrap_argv(
            [self.shell, "-c", command],
            cwd=cwd,
            network=network,
            extra_writable=extra_writable,
            sandbox=sandbox,
        )

    def wrap_argv(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        network: str | None = None,
        extra_writable: Iterable[str] = (),
        sandbox: bool = True,
    ) -> WrappedCommand:
        """Like ``wrap`` for an argv (no shell)."""
        if not (self.active and sandbox):
            return WrappedCommand(list(argv), dict(os.environ), (), False)
        policy = self.policy(network=network, extra_writable=extra_writable)
        inner = list(argv)
        if self.status.kind == "bwrap":
            inner = limits.nproc_argv(inner, self.max_processes, bash=_bash_of(self.shell))
        wrapped = wrap_command(
            self.status,
            inner,
            policy,
            env_allow=self.env_allow,
            env_deny=self.env_deny,
            cwd=os.path.abspath(cwd),
            tmpdir=self.tmpdir,
        )
        if self.cgroup is not None:
            wrapped.argv = self.cgroup.argv(wrapped.argv)
        return wrapped

    def hint(self, output: str, exit_code: int, *, network: str | None = None) -> str | None:
        """The denial hint line to append to a failed sandboxed call's output, or None.

        A guess from the text (the same errors can have other causes), hence "If it failed
        because of that".  Only for calls that ran sandboxed.  A hidden path named in the
        output gets a hint that the sandbox hid it.
        """
        if not self.active:
            return None
        with self._lock:
            hidden = sorted(self._hidden_seen)
        return denial_hint(
            output,
            exit_code,
            network=network or self.network,
            hidden=hidden,
            home=self.home,
            workspace=self.workspace,
        )

    def close(self) -> None:
        """Remove the session's private TMPDIR and its pids cgroup."""
        if self._finalizer is not None:
            self._finalizer()


def _cleanup(paths: list[str], cgroup: limits.PidsCgroup | None) -> None:
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, True)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass
    if cgroup is not None:
        cgroup.close()


def _bash_of(shell: str) -> str | None:
    """``shell`` if it is bash, else bash from PATH (None without one)."""
    return shell if os.path.basename(shell) == "bash" else shutil.which("bash")


def _ensure_dir(path: str) -> None:
    """Create an empty directory if nothing is there (a mount needs an existing target)."""
    if not os.path.lexists(path):
        try:
            os.mkdir(path, 0o755)
        except OSError:
            pass  # we may not write here; then the sandboxed command, with fewer rights, cannot either


def _contains(parent: str, path: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


_SAFE_ID = re.compile(r"[^A-Za-z0-9_-]")


@dataclass
class BashSettings:
    """The ``sandbox.*`` settings as the bash sandbox reads them (validated, paths expanded)."""

    enabled: str
    bash: str
    network: str
    writable: list[tuple[str, str]]  # (as configured, realpath)
    env_allow: list[str]
    warnings: list[str]
    allow_secrets: list[str] = field(default_factory=list)
    max_processes: int = limits.DEFAULT_MAX_PROCESSES


def _count(config: Any, key: str, warnings: list[str]) -> int:
    value = setting(config, key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        warnings.append(f"{key} must be a whole number >= 0, got {value!r}; using {DEFAULTS[key]!r}")
        return int(DEFAULTS[key])
    return value


def read_settings(config: Mapping[str, Any] | Any, *, home: str | None = None) -> BashSettings:
    """Validate ``sandbox.*`` from a ``Config`` or mapping; problems become warnings, not errors."""
    warnings: list[str] = []
    home = home or os.path.expanduser("~")
    enabled = _choice(config, "sandbox.enabled", ("auto", "off"), warnings)
    bash = _choice(config, "sandbox.bash", ("auto", "off"), warnings)
    network = _choice(config, "sandbox.network", NETWORK_VALUES, warnings)
    writable: list[tuple[str, str]] = []
    for entry in _str_list(config, "sandbox.writable", warnings):
        expanded = expand_path(entry, home)
        if expanded is None:
            warnings.append(
                f"sandbox.writable: relative path {entry!r} ignored (use an absolute path or ~/...)"
            )
            continue
        writable.append((entry, os.path.realpath(expanded)))
    allow = _str_list(config, "sandbox.envAllow", warnings) + _str_list(config, "sandbox.env", warnings)
    env_allow = list(dict.fromkeys(allow))
    allow_secrets = _str_list(config, "sandbox.allowSecrets", warnings)
    max_processes = _count(config, "sandbox.maxProcesses", warnings)
    return BashSettings(enabled, bash, network, writable, env_allow, warnings, allow_secrets, max_processes)


def credential_paths(home: str, data_dir: str, config_dir: str | None = None) -> list[str]:
    """Realpaths of the paths a sandboxed command must not read."""
    hidden = [os.path.realpath(os.path.join(home, rel)) for rel in CREDENTIAL_PATHS]
    for directory in (data_dir, config_dir):
        if directory:
            hidden.append(os.path.realpath(os.path.join(directory, AUTH_FILE)))
    return list(dict.fromkeys(hidden))


def make_bash_sandbox(
    config: Mapping[str, Any] | Any,
    *,
    cwd: str,
    data_dir: str,
    session_id: str | None = None,
    status: SandboxStatus | None = None,
    output_dirs: Sequence[str] = (),
    home: str | None = None,
    config_dir: str | None = None,
    secret_env: Sequence[str] = (),
) -> BashSandbox:
    """Build the session's bash sandbox from ``sandbox.*`` settings (a ``Config`` or a mapping).

    Active only with ``sandbox.bash: auto`` and a sandbox that restricts writes (bwrap,
    sandbox-exec).  ``status`` defaults to ``detect()``; ``AMA_SANDBOX=off`` always wins.
    ``auth.json`` is hidden in ``data_dir`` and, when given, ``config_dir``.  ``secret_env``:
    more environment variables to scrub (e.g. the key variables named by configured providers).
    ``output_dirs``: ama's own output directories (full output of truncated results,
    background job logs), writable in the sandbox.  An active sandbox owns a private
    TMPDIR (and, where it can make one, a pids cgroup): ``close()`` removes them (so does
    garbage collection, and exit).
    """
    home = home or os.path.expanduser("~")
    settings = read_settings(config, home=home)
    warnings = settings.warnings
    off = off_reason(settings.enabled)
    if off is not None:
        status = SandboxStatus("none", None, False, False, off)
    elif status is None and settings.bash != "auto":
        # nothing will be wrapped: skip the probe (a process start) on every agent start
        status = SandboxStatus("none", None, False, False, "sandbox.bash is off (bash runs unsandboxed)")
    elif status is None:
        status = detect(enabled=settings.enabled)
    active = settings.bash == "auto" and status.kind in ("bwrap", "sandbox-exec") and status.restricts_writes
    if not active:  # still carries the environment policy: unsandboxed bash uses it too
        return BashSandbox(
            status=status,
            active=False,
            network=settings.network,
            env_allow=settings.env_allow,
            env_deny=secret_env,
            warnings=warnings,
            home=home,
        )

    workspace = os.path.realpath(cwd)
    if not os.path.isdir(workspace):
        raise SandboxError(f"workspace is not a directory: {cwd}")
    if workspace in ("/", os.path.realpath(home)):
        warnings.append(
            f"the workspace is {workspace}: the bash sandbox lets commands write everywhere below it"
        )
    writable = [real for _entry, real in settings.writable]
    writable += [os.path.realpath(entry) for entry in output_dirs]
    hidden = [h for h in credential_paths(home, data_dir, config_dir) if not _contains(h, workspace)]
    label = _SAFE_ID.sub("", session_id or "")[:12] or "session"
    tmpdir = os.path.realpath(tempfile.mkdtemp(prefix=f"ama-{label}-"))
    empty_file = None
    if status.kind == "bwrap":  # outside TMPDIR: the sandbox cannot write it
        fd, empty = tempfile.mkstemp(prefix=f"ama-{label}-empty-")
        os.close(fd)
        os.chmod(empty, 0o444)
        empty_file = os.path.realpath(empty)
    cgroup = None
    if status.kind == "bwrap" and os.geteuid() == 0:  # RLIMIT_NPROC does not bind the host's root
        cgroup = limits.PidsCgroup.create(label, settings.max_processes)
    return BashSandbox(
        status=status,
        active=True,
        network=settings.network,
        workspace=workspace,
        tmpdir=tmpdir,
        writable=writable,
        hidden=hidden,
        env_allow=settings.env_allow,
        env_deny=secret_env,
        shell=shutil.which("bash") or "/bin/sh",
        warnings=warnings,
        allow_secrets=settings.allow_secrets,
        max_processes=settings.max_processes,
        cgroup=cgroup,
        home=home,
        empty_file=empty_file,
    )
