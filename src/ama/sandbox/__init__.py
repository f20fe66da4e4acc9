"""The OS sandbox for child processes and bash (standard library only).

    detect.py   which sandbox works here (probe once per process) and why
    profile.py  policy -> bwrap argv / unshare argv / SBPL text (pure)
    seccomp.py  the BPF filter bwrap loads (no AF_UNIX sockets, no io_uring)
    wrap.py     policy + command -> WrappedCommand; ``spawn`` on a long-lived thread
    bash.py     the bash sandbox of a session: settings and the per-call policy
    gitguard.py the workspace's git directory, read-only as a whole (hooks, config, pointers)
    secretfiles.py  the one list of secret paths; .env and credential files in the workspace
    limits.py   the process limit (RLIMIT_NPROC inside, a pids cgroup where writable)
    hint.py     the denial hint appended to a failed call that looks refused

See docs/sandbox.md.
"""

from ama.sandbox.bash import BashSandbox, make_bash_sandbox
from ama.sandbox.detect import SandboxStatus, detect, summary_line
from ama.sandbox.profile import Policy, ProfileError
from ama.sandbox.wrap import SandboxError, WrappedCommand, build_policy, scrub_env, spawn, wrap_command

__all__ = [
    "BashSandbox",
    "build_policy",
    "detect",
    "make_bash_sandbox",
    "Policy",
    "ProfileError",
    "SandboxError",
    "SandboxStatus",
    "scrub_env",
    "spawn",
    "summary_line",
    "wrap_command",
    "WrappedCommand",
]
