"""Launchers that run another command: ``sudo``, ``env``, ``timeout 5``, ``watch``, ``ssh host``...

``unwrap(argv)`` strips them and returns the command actually run, the wrapper names, and —
for launchers that hand a *string* to a shell (``watch 'cmd'``, ``script -c``, ``su -c``,
``flock -c``, ``env -S``, ``ssh host cmd``) — that string, which the reader then reads as a
script.  ``shell_script(argv)`` is the script of ``sh -c SCRIPT``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

SHELLS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox", "tcsh", "csh", "yash", "posh",
     "pwsh", "powershell", "elvish", "nu", "xonsh", "rc"}
)  # fmt: skip
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_RESERVED = frozenset(
    {"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac", "coproc"}
)


@dataclass
class Unwrapped:
    inner: list[str]  # the command run, wrappers removed ([] when nothing runs)
    wrappers: list[str]  # basenames of the launchers removed
    script: str | None = None  # a string a launcher hands to a shell (watch, script -c, ssh ...)


def _skip_options(args: list[str], i: int, with_value: frozenset[str] = frozenset()) -> int:
    while i < len(args) and args[i].startswith("-") and args[i] != "-":
        if args[i] == "--":
            return i + 1
        i += 2 if args[i] in with_value else 1
    return i


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


# launcher -> options that take a value; the command follows the options
_PLAIN: dict[str, frozenset[str]] = {
    "sudo": _f("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group"),
    "doas": _f("-u", "-C"),
    "pkexec": _f("--user"),
    "env": _f("-u", "-C", "--unset", "--chdir"),
    "command": _f(), "builtin": _f(), "exec": _f("-a"), "nohup": _f(), "time": _f("-o", "-f"),
    "noglob": _f(), "unbuffer": _f(), "setsid": _f(), "caffeinate": _f("-t", "-w"),
    "stdbuf": _f("-i", "-o", "-e"), "ionice": _f("-c", "-n", "-p", "-P", "-u"),
    "nice": _f("-n", "--adjustment"), "renice": _f("-n"), "taskset": _f(), "chrt": _f(),
    "xargs": _f("-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a", "-i", "--max-args", "--delimiter"),
    "strace": _f("-o", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-O", "-S", "-P", "-X"),
    "ltrace": _f("-o", "-e", "-p", "-s", "-u", "-a", "-n"),
    "unshare": _f("-S", "-G", "--setuid", "--setgid", "-R", "--root", "-w", "--wd"),
    "nsenter": _f("-t", "--target", "-S", "-G", "-R", "-w"),
    "firejail": _f(), "torsocks": _f(), "proxychains": _f("-f"), "proxychains4": _f("-f"),
    "catchsegv": _f(), "valgrind": _f(), "systemd-run": _f("-u", "--unit", "-p", "--property", "-M"),
    "runuser": _f("-u", "-g", "-G"), "faketime": _f("-f"), "numactl": _f(), "cpulimit": _f("-l", "-p"),
    "chronic": _f(), "ts": _f(), "sem": _f("-j", "--id"), "dbus-launch": _f(), "xvfb-run": _f("-s", "-n"),
}  # fmt: skip
_ONE_ARG = frozenset({"timeout", "chroot", "taskset", "chrt", "faketime", "flock"})  # then a word
_STRING = frozenset({"watch", "script", "su", "sg", "ssh"})  # hand a string to a shell


def unwrap(argv: list[str]) -> tuple[list[str], list[str]]:
    """The command actually run, without ``VAR=x``, ``env``, ``sudo``, ``timeout 5``, ...

    Returns ``(inner argv, wrapper basenames)``; ``command -v x`` runs nothing (empty argv).
    """
    u = unwrap_full(argv)
    return u.inner, u.wrappers


def unwrap_full(argv: list[str]) -> Unwrapped:
    wrappers: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if _ASSIGNMENT.match(word) or word in _RESERVED:
            i += 1
            continue
        name = os.path.basename(word)
        rest = argv[i + 1 :]
        if name == "busybox" and rest and rest[0] not in SHELLS:
            wrappers.append(name)
            i += 1
        elif name == "command" and rest[:1] and rest[0] in ("-v", "-V"):
            return Unwrapped([], wrappers + [name])
        elif name == "env" and any(a == "-S" or a.startswith(("-S", "--split-string")) for a in rest):
            k = next(j for j, a in enumerate(rest) if a == "-S" or a.startswith(("-S", "--split-string")))
            a = rest[k]
            script = rest[k + 1] if a == "-S" else a.split("=", 1)[1] if "=" in a else a[2:]
            return Unwrapped([], wrappers + [name], " ".join([script, *rest[k + 2 :]]))
        elif name in _PLAIN:
            wrappers.append(name)
            i = _skip_options(argv, i + 1, _PLAIN[name])
            if name in _ONE_ARG and i < len(argv):
                i += 1  # taskset MASK / chrt PRIO
        elif name in _ONE_ARG:
            wrappers.append(name)
            opts = {"timeout": _f("-s", "-k", "--signal", "--kill-after"), "flock": _f("-w", "-E", "--timeout"),
                    "chroot": _f("--userspec", "--groups")}.get(name, _f())  # fmt: skip
            j = _skip_options(argv, i + 1, opts)
            if name == "flock":
                c = next((k for k in range(i + 1, len(argv)) if argv[k] in ("-c", "--command")), None)
                if c is not None and c + 1 < len(argv):
                    return Unwrapped([], wrappers, argv[c + 1])
            i = j + 1
        elif name in _STRING:
            return _string_launcher(name, argv[i + 1 :], wrappers)
        elif name == "parallel":
            wrappers.append(name)
            j = _skip_options(argv, i + 1, _f("-j", "--jobs", "-S", "--sshlogin", "-a", "--arg-file"))
            cmd = argv[j:]
            return Unwrapped(cmd, wrappers, " ".join(cmd) if cmd else None)
        else:
            return Unwrapped(argv[i:], wrappers)
    return Unwrapped([], wrappers)


def _string_launcher(name: str, args: list[str], wrappers: list[str]) -> Unwrapped:
    wrappers = wrappers + [name]
    if name == "watch":
        j = _skip_options(args, 0, _f("-n", "--interval", "-d", "-q", "--equexit"))
        return Unwrapped([], wrappers, " ".join(args[j:]) or None)
    if name in ("script", "su", "sg"):
        for k, a in enumerate(args):
            short = a.startswith("-") and not a.startswith("--") and "c" in a[1:]
            if (a == "--command" or short) and k + 1 < len(args):
                return Unwrapped([], wrappers, args[k + 1])
            if a.startswith("--command="):
                return Unwrapped([], wrappers, a.split("=", 1)[1])
        return Unwrapped([], wrappers)
    # ssh [options] host [command ...]: the command runs on the remote host, through its shell
    j = _skip_options(
        args, 0, _f("-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p",
                    "-Q", "-R", "-S", "-W", "-w", "-B"),
    )  # fmt: skip
    remote = args[j + 1 :]
    return Unwrapped([], wrappers, " ".join(remote) if remote else None)


def shell_script(argv: list[str]) -> str | None:
    """The script of ``sh -c SCRIPT`` (any shell, flags like ``-lc`` / ``-e -c``), else None."""
    if not argv or os.path.basename(argv[0]) not in SHELLS:
        return None
    args = argv[1:]
    if os.path.basename(argv[0]) == "busybox":
        if not args or args[0] not in SHELLS:
            return None
        args = args[1:]
    if os.path.basename(argv[0]) in ("pwsh", "powershell"):
        for k, a in enumerate(args):
            if a.lower() in ("-c", "-command", "-commandwithargs") and k + 1 < len(args):
                return " ".join(args[k + 1 :])
        return None
    i, has_c = 0, False
    while i < len(args) and args[i].startswith(("-", "+")) and args[i] not in ("-", "--"):
        a = args[i]
        if not a.startswith("--") and "c" in a[1:]:
            has_c = True
        i += 2 if a in ("-o", "+o", "-O", "+O") else 1
    if i < len(args) and args[i] == "--":
        i += 1
    return args[i] if has_c and i < len(args) else None


def reads_stdin_script(argv: list[str]) -> bool:
    """A shell that reads its script from stdin: ``sh``, ``bash -s``, ``bash -``, ``sh /dev/stdin``."""
    if not argv or os.path.basename(argv[0]) not in SHELLS or shell_script(argv) is not None:
        return False
    args = argv[1:]
    if os.path.basename(argv[0]) == "busybox":
        if not args or args[0] not in SHELLS:
            return False
        args = args[1:]
    i = 0
    while i < len(args) and args[i].startswith(("-", "+")) and args[i] not in ("-", "--"):
        if not args[i].startswith("--") and "s" in args[i][1:]:
            return True
        i += 2 if args[i] in ("-o", "+o", "-O", "+O") else 1
    if i < len(args) and args[i] == "--":
        i += 1
    return i >= len(args) or args[i] in ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")
