"""Which OS sandbox works here: probe once per process, explain the answer.

"Installed" is not "usable" (nested sandboxes, containers without user namespaces,
Ubuntu's AppArmor userns restriction), so each candidate is probed by running ``true``
under the very profile it will be used with, with a 5 s timeout:

    Linux   bwrap (full profile, --json-status-fd)  ->  unshare -r -n  ->  none
    macOS   /usr/bin/sandbox-exec -p <deny network and writes> /usr/bin/true  ->  none
    other   none

``sandbox.enabled: off`` or ``AMA_SANDBOX=off`` give ``none`` without probing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from ama.sandbox import profile, seccomp

PROBE_TIMEOUT = 5.0
KINDS = ("bwrap", "unshare", "sandbox-exec", "none")
SANDBOX_EXEC = "/usr/bin/sandbox-exec"

#: the sysctls and files that explain a namespace failure
_FACT_FILES = {
    "apparmor_restrict_unprivileged_userns": "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    "unprivileged_userns_clone": "/proc/sys/kernel/unprivileged_userns_clone",
    "max_user_namespaces": "/proc/sys/user/max_user_namespaces",
}
_CONTAINER_MARKERS = ("/.dockerenv", "/run/.containerenv")


@dataclass(frozen=True)
class SandboxStatus:
    """The sandbox this process will use, fixed after the first ``detect()``."""

    kind: str  # "bwrap" | "unshare" | "sandbox-exec" | "none"
    executable: str | None
    isolates_network: bool
    restricts_writes: bool
    explanation: str

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "executable": self.executable,
            "isolatesNetwork": self.isolates_network,
            "restrictsWrites": self.restricts_writes,
            "explanation": self.explanation,
        }


def _none(explanation: str) -> SandboxStatus:
    return SandboxStatus("none", None, False, False, explanation)


_lock = threading.Lock()
_cached: SandboxStatus | None = None


def off_reason(enabled: str = "auto") -> str | None:
    """Why the sandbox is switched off by the user, or None when it is not."""
    if os.environ.get("AMA_SANDBOX", "").strip().lower() == "off":
        return "disabled by the user (AMA_SANDBOX=off)"
    if enabled == "off":
        return "disabled by the user (sandbox.enabled: off)"
    return None


def detect(*, enabled: str = "auto", refresh: bool = False) -> SandboxStatus:
    """The usable sandbox, probed once per process (``refresh`` probes again)."""
    global _cached
    reason = off_reason(enabled)
    if reason is not None:
        return _none(reason)
    with _lock:
        if _cached is None or refresh:
            _cached = probe()
        return _cached


def probe(platform: str | None = None) -> SandboxStatus:
    """Probe the candidates for ``platform`` (default: this one) without caching."""
    platform = platform or sys.platform
    if platform.startswith("linux"):
        return _probe_linux()
    if platform == "darwin":
        return _probe_macos()
    if platform in ("win32", "cygwin", "msys"):
        return _none(
            "Windows has no process sandbox that ama can use without native code "
            "(AppContainer / Job Objects); commands run unsandboxed"
        )
    return _none(f"no OS sandbox support for platform {platform!r}; commands run unsandboxed")


# ---------------------------------------------------------------------------- Linux


def _probe_linux() -> SandboxStatus:
    reasons: list[str] = []
    bwrap = shutil.which("bwrap")
    if bwrap:
        why = probe_bwrap(bwrap)
        if why is None:
            filt = (
                ""
                if seccomp.host_program()
                else (f"; no seccomp filter on {os.uname().machine} (Unix sockets and io_uring not refused)")
            )
            return SandboxStatus(
                "bwrap",
                bwrap,
                True,
                True,
                f"bubblewrap works: writes limited to the workspace and temp dirs, credentials hidden, "
                f"network and processes isolated{filt}",
            )
        reasons.append(f"bwrap ({bwrap}) failed its probe: {why}")
    else:
        reasons.append(
            "bwrap is not installed (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap)"
        )
    unshare = shutil.which("unshare")
    if unshare:
        why = probe_unshare(unshare)
        if why is None:
            return SandboxStatus(
                "unshare",
                unshare,
                True,
                False,
                "unshare -r -n isolates the network only and does not restrict writes, so bash is not "
                "sandboxed; " + "; ".join(reasons),
            )
        reasons.append(f"unshare -r -n failed: {why}")
    else:
        reasons.append("unshare is not installed")
    return _none("no usable OS sandbox: " + "; ".join(reasons))


def _run_probe(argv: list[str], pass_fds: tuple[int, ...] = ()) -> tuple[int | None, str]:
    """(exit code or None on timeout/OSError, stderr or error text)."""
    try:
        proc = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=pass_fds,
            timeout=PROBE_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, f"timed out after {PROBE_TIMEOUT:g} s"
    except OSError as e:
        return None, e.strerror or str(e)
    return proc.returncode, proc.stderr.decode("utf-8", "replace").strip()


def probe_bwrap(bwrap: str) -> str | None:
    """Run ``true`` under the full bash profile; None if it works, else why not."""
    hidden = ("/tmp",) if os.path.isdir("/tmp") else ()
    policy = profile.Policy(network="deny", hidden_dirs=hidden)
    filter_fd = seccomp.program_fd()
    status_r, status_w = os.pipe()
    fds = (status_w,) if filter_fd is None else (status_w, filter_fd)
    argv = profile.bwrap_argv(
        policy, ["true"], bwrap=bwrap, as_root=os.geteuid() == 0, seccomp_fd=filter_fd, status_fd=status_w
    )
    try:
        code, err = _run_probe(argv, fds)
        os.close(status_w)
        status_w = -1
        report = _read_all(status_r)
    finally:
        for fd in (status_r, status_w, filter_fd):
            if fd is not None and fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
    if code is None:
        return err
    exit_code = parse_exit_code(report)
    if exit_code is not None:  # the sandbox was set up and `true` ran in it
        return None if exit_code == 0 else f"`true` exited with status {exit_code} inside the sandbox"
    if code == 0:  # bwrap older than 0.5 reports no exit code
        return None
    return explain_failure(err or f"exit status {code}", facts=userns_facts(), euid=os.geteuid())


def _read_all(fd: int) -> str:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            return b"".join(chunks).decode("utf-8", "replace")
        chunks.append(chunk)


def parse_exit_code(report: str) -> int | None:
    """The ``exit-code`` from bwrap's ``--json-status-fd`` lines, None if the command never ran."""
    for line in report.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("exit-code"), int):
            return obj["exit-code"]
    return None


def probe_unshare(unshare: str) -> str | None:
    code, err = _run_probe([unshare, "-r", "-n", "--", "true"])
    if code == 0:
        return None
    if code is None:
        return err
    return explain_failure(err or f"exit status {code}", facts=userns_facts(), euid=os.geteuid())


def userns_facts() -> dict[str, str | None]:
    """The kernel settings and container markers that explain namespace failures."""
    facts: dict[str, str | None] = {}
    for name, path in _FACT_FILES.items():
        try:
            with open(path, encoding="ascii") as f:
                facts[name] = f.read().strip()
        except OSError:
            facts[name] = None
    facts["container"] = next((m for m in _CONTAINER_MARKERS if os.path.exists(m)), None)
    return facts


def explain_failure(stderr: str, *, facts: Mapping[str, str | None], euid: int) -> str:
    """The tool's own message (first lines) plus the likely cause, from ``facts``."""
    lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
    text = " / ".join(lines[:2]) if lines else "failed"
    causes = []
    if euid != 0 and facts.get("apparmor_restrict_unprivileged_userns") == "1":
        causes.append(
            "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1, "
            "the default since Ubuntu 23.10): use the distribution's bubblewrap package, whose AppArmor "
            "profile allows it, or see docs/sandbox.md"
        )
    if euid != 0 and facts.get("unprivileged_userns_clone") == "0":
        causes.append(
            "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0; "
            "sysctl -w kernel.unprivileged_userns_clone=1 enables them)"
        )
    if facts.get("max_user_namespaces") == "0":
        causes.append("user namespaces are disabled (user.max_user_namespaces=0)")
    looks_denied = any(
        w in stderr.lower() for w in ("namespace", "not permitted", "permission denied", "uid map")
    )
    if facts.get("container") and not causes and looks_denied:
        causes.append(
            f"running inside a container ({facts['container']}) whose seccomp or AppArmor profile "
            "likely forbids creating namespaces"
        )
    return text + (" -- likely cause: " + "; ".join(causes) if causes else "")


# ---------------------------------------------------------------------------- macOS


def _probe_macos() -> SandboxStatus:
    if not os.path.exists(SANDBOX_EXEC):
        return _none(f"{SANDBOX_EXEC} not found; commands run unsandboxed")
    argv = profile.sandbox_exec_argv(
        profile.Policy(network="deny"), ["/usr/bin/true"], sandbox_exec=SANDBOX_EXEC
    )
    code, err = _run_probe(argv)
    if code == 0:
        return SandboxStatus(
            "sandbox-exec",
            SANDBOX_EXEC,
            True,
            True,
            "sandbox-exec (Seatbelt) works: writes limited to the workspace and temp dirs, network denied",
        )
    why = err or (f"exit status {code}" if code is not None else "failed")
    return _none(f"sandbox-exec failed its probe (nested in another sandbox?): {why}")


# ---------------------------------------------------------------------------- summary


def summary_line(status: SandboxStatus) -> str:
    """One line for ``ama doctor``."""
    if status.kind == "none":
        return f"sandbox: none ({status.explanation})"
    writes = "writes restricted" if status.restricts_writes else "writes NOT restricted"
    network = "network isolated" if status.isolates_network else "network NOT isolated"
    return f"sandbox: {status.kind} {status.executable} ({writes}, {network})"
