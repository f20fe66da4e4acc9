"""The dangerous-command table: bash commands that ask in every mode, full-auto included.

Each entry is a name, a sentence for the user and the model, and a predicate over one
simple command (see ``_shell.Command``; ``inner`` is the command with ``sudo`` / ``env`` /
``timeout`` / ``VAR=x`` wrappers removed).  ``find_dangers`` runs the table over every
command of every nesting level, plus two whole-text checks (fork bombs, scripts that could
not be read or nest too deeply).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

from ama.permissions import _git
from ama.permissions._expand import function_body
from ama.permissions._failclosed import destroys_root, dynamic_code, dynamic_name, dynamic_target
from ama.permissions._interp import INTERPRETERS
from ama.permissions._paths import SYSTEM_DIRS, Place, expand_home, is_catastrophic_target
from ama.permissions._shell import SHELLS, Analysis, Command
from ama.permissions._writes import (
    crontab,
    download_then_run,
    env_exfil,
    home_reader,
    kill_all,
    sensitive_writes,
    setuid,
)

__all__ = ["DANGEROUS", "SYSTEM_DIRS", "Danger", "Finding", "describe", "expand_home", "find_dangers"]

_DOWNLOADERS = frozenset({"curl", "wget", "fetch"})
_INTERPRETERS = SHELLS | INTERPRETERS | frozenset({"source", ".", "eval"})
_DISK = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|md|dm-|mapper/|sr|fd\d)")
_SAFE_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/full"})
_FORK_BOMB = re.compile(r"([\w:.-]+)\s*\(\s*\)\s*\{[^}]*?\1\s*\|\s*&?\s*\1\s*&")
_QUOTED = re.compile(
    r"'[^']*'|\"(?:\\.|[^\"\\])*\""
)  # quoted strings are data (nested scripts are read apart)


@dataclass(frozen=True)
class Finding:
    name: str
    reason: str
    command: int | None  # index into Analysis.commands; None for whole-text findings


@dataclass(frozen=True)
class Danger:
    name: str
    reason: str
    test: Callable[[Command, Analysis, int, Place], bool]  # (cmd, analysis, index, where it runs)


def _short_flags(args: list[str]) -> str:
    """All single-letter flags given, e.g. ``-rf -v`` -> ``"rfv"`` (stops at ``--``)."""
    out = []
    for a in args:
        if a == "--":
            break
        if a.startswith("-") and not a.startswith("--"):
            out.append(a[1:])
    return "".join(out)


def _operands(args: list[str]) -> list[str]:
    out, rest = [], False
    for a in args:
        if rest or not a.startswith("-") or a == "-":
            out.append(a)
        elif a == "--":
            rest = True
    return out


def _rm_root(cmd: Command, _a: Analysis, _i: int, p: Place) -> bool:
    if cmd.name != "rm":
        return False
    args = cmd.inner[1:]
    if "--no-preserve-root" in args:
        return True
    recursive = "--recursive" in args or any(c in _short_flags(args) for c in "rR")
    return recursive and any(is_catastrophic_target(w, p.cwd, p.home, p.workspace) for w in _operands(args))


def _chmod_root(cmd: Command, _a: Analysis, _i: int, p: Place) -> bool:
    if cmd.name not in ("chmod", "chown", "chgrp"):
        return False
    args = cmd.inner[1:]
    recursive = "--recursive" in args or "R" in _short_flags(args)
    return recursive and any(
        is_catastrophic_target(w, p.cwd, p.home, p.workspace) for w in _operands(args)[1:]
    )


def git_subcommand(cmd: Command) -> tuple[str, list[str]]:
    _opts, sub, args = _git.split(cmd.inner)
    return sub, args


def _ancestors(analysis: Analysis, index: int):
    parent = analysis.commands[index].parent
    while parent is not None:
        yield analysis.commands[parent]
        parent = analysis.commands[parent].parent


def _pipe_to_shell(cmd: Command, analysis: Analysis, index: int, *_: object) -> bool:
    """A download whose output a shell or interpreter runs: ``curl … | sh``, ``sh <(curl …)``;
    a shell or interpreter fed input the reader cannot see (``base64 -d x | sh``, ``sh < f``);
    interpreter code that fetches from the network and executes."""
    if cmd.runs_input is not None or (cmd.scan is not None and cmd.scan.net_exec):
        return True
    if cmd.name not in _DOWNLOADERS:
        return False
    for later in analysis.commands[index + 1 :]:
        if later.pipeline == cmd.pipeline and later.position > cmd.position and later.name in _INTERPRETERS:
            return True
    return any(a.name in _INTERPRETERS for a in _ancestors(analysis, index))


def _mkfs(cmd: Command, *_: object) -> bool:
    return cmd.name.startswith("mkfs") or cmd.name in ("mke2fs", "mkswap", "wipefs")


def _device(target: str) -> bool:
    return (
        target.startswith("/dev/")
        and target not in _SAFE_DEVICES
        and not target.startswith(("/dev/fd/", "/dev/pts/", "/dev/shm/"))
    )


def _dd_device(cmd: Command, *_: object) -> bool:
    return cmd.name == "dd" and any(a.startswith("of=") and _device(a[3:]) for a in cmd.inner[1:])


def _write_disk(cmd: Command, *_: object) -> bool:
    return any(op in (">", ">>", ">|", "&>", "&>>", "<>") and _DISK.match(t) for op, t in cmd.redirects)


def _root(cmd: Command, *_: object) -> bool:
    return cmd.name in ("sudo", "doas", "su", "pkexec") or any(
        w in ("sudo", "doas", "pkexec", "su") for w in cmd.wrappers
    )


def _writes(*kinds: str) -> Callable[[Command, Analysis, int, Place], bool]:
    return lambda cmd, _a, _i, p: sensitive_writes(cmd, p, kinds)


def _shutdown(cmd: Command, *_: object) -> bool:
    name, args = cmd.name, cmd.inner[1:]
    if name in ("shutdown", "reboot", "halt", "poweroff"):
        return True
    if name in ("init", "telinit"):
        return bool(args) and args[0] in ("0", "6")
    if name == "systemctl":
        return any(a in ("poweroff", "reboot", "halt", "kexec", "soft-reboot") for a in args)
    return False


# fmt: off
DANGEROUS: tuple[Danger, ...] = (
    Danger("rm-root", "recursively deletes /, a home directory, a system directory or a parent of the workspace", _rm_root),
    Danger("destroy-root", "deletes, moves or overwrites /, a home or system directory (find -delete, rsync --delete, mv, code)", destroys_root),
    Danger("unresolved-command", "runs a command whose name is built at run time (variable or substitution), so it cannot be checked", dynamic_name),
    Danger("unresolved-target", "deletes or rewrites a target the reader cannot resolve (variable, substitution or .. out of the workspace)", dynamic_target),
    Danger("unresolved-code", "runs interpreter code that builds what it runs or deletes at run time", dynamic_code),
    Danger("git-force-push", "force-pushes, which can overwrite history on the remote", lambda c, *_: _git.force_push(c)),
    Danger("git-push-delete", "deletes a branch on the remote", lambda c, *_: _git.push_delete(c)),
    Danger("git-reset-hard", "git reset --hard discards uncommitted changes", lambda c, *_: _git.reset_hard(c)),
    Danger("git-clean", "git clean -f deletes untracked files", lambda c, *_: _git.clean_force(c)),
    Danger("git-discard", "discards uncommitted work (checkout/restore of the work tree, stash drop, branch -D)", lambda c, *_: _git.discards_work(c)),
    Danger("git-config-exec", "sets a git config value git runs as a command (core.hooksPath, aliases, pager ...)", lambda c, *_: _git.config_exec(c)),
    Danger("pipe-to-shell", "runs a downloaded script or input it cannot see (piped or redirected into a shell or interpreter)", _pipe_to_shell),
    Danger("startup-file", "writes a shell startup / profile file (runs in every later shell)", _writes("the shell")),
    Danger("protected-write", "writes .git/hooks, .git/config or .ama/ (run by later commands)", _writes(".git/", ".ama/")),
    Danger("crontab", "changes the crontab (runs commands later)", lambda c, a, i, p: crontab(c) or sensitive_writes(c, p, ("the crontab",))),
    Danger("system-file", "writes a system file (/etc, /usr, ...)", _writes("the system file")),
    Danger("setuid", "sets the setuid/setgid bit", setuid),
    Danger("kill-all", "kills every process of the user (kill -9 -1, pkill -u)", kill_all),
    Danger("home-read", "reads the whole home directory (or /), secrets included", home_reader),
    Danger("mkfs", "formats a file system", _mkfs),
    Danger("dd-device", "dd writes to a device", _dd_device),
    Danger("disk-write", "writes to a raw disk device", _write_disk),
    Danger("chmod-root", "recursively changes permissions of /, a home or a system directory", _chmod_root),
    Danger("root", "runs as root (sudo / su / doas)", _root),
    Danger("shutdown", "shuts down or reboots the machine", _shutdown),
)
# fmt: on
_WHOLE = (
    ("download-exec", "runs a file it downloaded in the same command line", download_then_run),
    ("env-exfil", "sends the environment (env / printenv) to the network", env_exfil),
)


def find_dangers(analysis: Analysis, *, cwd: str, home: str) -> list[Finding]:
    """Every dangerous-table hit in ``analysis``, plus unreadable / too deep / fork bomb."""
    found: list[Finding] = []
    if analysis.error:
        found.append(
            Finding(
                "unreadable", f"could not be read to check it for dangerous commands ({analysis.error})", None
            )
        )
    if analysis.too_deep:
        found.append(Finding("too-deep", "nests sh -c / eval / $(…) too deeply to check it", None))
    if any(_FORK_BOMB.search(_QUOTED.sub("", text)) for text in analysis.scripts):
        found.append(Finding("fork-bomb", "is a fork bomb", None))
    places = [Place(where, cwd, home) for where in _working_dirs(analysis, cwd, home)]
    definition: set[int] = set()  # commands of a function body: judged where the function is called
    for index, (cmd, place) in enumerate(zip(analysis.commands, places)):
        trusted = cmd.function is not None and function_body(cmd.function, analysis.functions) is not None
        if trusted or (cmd.parent is not None and cmd.parent in definition):
            definition.add(index)
            continue
        for danger in DANGEROUS:
            if danger.test(cmd, analysis, index, place):
                found.append(Finding(danger.name, danger.reason, index))
    for name, reason, check in _WHOLE:
        found += [Finding(name, reason, i) for i in check(analysis, places)]
    return found


def _working_dirs(analysis: Analysis, cwd: str, home: str) -> list[str]:
    """The directory each command runs in, following ``cd``/``pushd`` to literal paths.

    A ``cd`` lasts until the end of its script (subshell scoping is ignored: that can only
    make a later command look as if it ran somewhere riskier)."""
    current: dict[int | None, str] = {None: cwd}
    out: list[str] = []
    for cmd in analysis.commands:
        base = current.get(cmd.parent) or (out[cmd.parent] if cmd.parent is not None else cwd)
        out.append(base)
        if cmd.name in ("cd", "pushd"):
            args = [a for a in cmd.inner[1:] if not a.startswith("-")]
            target = expand_home(args[0] if args else "~", home)
            if "$" not in target and "`" not in target:
                current[cmd.parent] = posixpath.normpath(posixpath.join(base, target))
    return out


def describe(findings: list[Finding], analysis: Analysis) -> str:
    parts = []
    for f in findings:
        where = f"`{analysis.commands[f.command].text}` " if f.command is not None else "the command "
        parts.append(where + f.reason)
    return "; ".join(dict.fromkeys(parts))
