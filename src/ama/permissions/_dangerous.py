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

from ama.permissions._shell import SHELLS, Analysis, Command

#: Top-level directories whose recursive removal or chmod wrecks the system.
# fmt: off
SYSTEM_DIRS = frozenset({
    "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/mnt", "/media",
    "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/usr", "/var", "/Applications",
    "/Library", "/System", "/Users", "/Volumes", "/private",
})
# fmt: on
_DOWNLOADERS = frozenset({"curl", "wget", "fetch"})
_INTERPRETERS = SHELLS | frozenset(
    {"python", "python2", "python3", "perl", "ruby", "node", "php", "source", ".", "eval"}
)
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
    test: Callable[[Command, Analysis, int, str, str], bool]  # (cmd, analysis, index, cwd, home)


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


def expand_home(word: str, home: str) -> str:
    for prefix in ("~", "$HOME", "${HOME}"):
        if word == prefix or word.startswith(prefix + "/"):
            return home + word[len(prefix) :]
    return word


def is_catastrophic_target(word: str, cwd: str, home: str) -> bool:
    """``/``, the home directory, a top-level system directory, or everything inside one."""
    path = expand_home(word, home)
    if "$" in path or "`" in path:
        return False
    if not path.startswith("/"):
        path = posixpath.join(cwd, path)
    parts = path.split("/")
    while len(parts) > 1 and parts[-1] in ("*", ".*", "*.*", "", "."):
        parts.pop()
    path = "/" + "/".join(p for p in parts if p)
    path = posixpath.normpath(path)
    home = posixpath.normpath(home) if home else ""
    return path == "/" or path == home or path in SYSTEM_DIRS


def _rm_root(cmd: Command, _a: Analysis, _i: int, cwd: str, home: str) -> bool:
    if cmd.name != "rm":
        return False
    args = cmd.inner[1:]
    if "--no-preserve-root" in args:
        return True
    recursive = "--recursive" in args or any(c in _short_flags(args) for c in "rR")
    return recursive and any(is_catastrophic_target(w, cwd, home) for w in _operands(args))


def _chmod_root(cmd: Command, _a: Analysis, _i: int, cwd: str, home: str) -> bool:
    if cmd.name not in ("chmod", "chown", "chgrp"):
        return False
    args = cmd.inner[1:]
    recursive = "--recursive" in args or "R" in _short_flags(args)
    return recursive and any(is_catastrophic_target(w, cwd, home) for w in _operands(args)[1:])


_GIT_VALUE_OPTS = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env"}
)


def git_subcommand(cmd: Command) -> tuple[str, list[str]]:
    if cmd.name != "git":
        return "", []
    args = cmd.inner[1:]
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in _GIT_VALUE_OPTS else 1
    return (args[i], args[i + 1 :]) if i < len(args) else ("", [])


def _git_force_push(cmd: Command, *_: object) -> bool:
    sub, args = git_subcommand(cmd)
    if sub != "push":
        return False
    for a in args:
        if a in ("--force", "--mirror") or a.startswith(("--force-with-lease", "--force-if-includes")):
            return True
        if a.startswith("-") and not a.startswith("--") and "f" in a[1:]:
            return True
        if a.startswith("+") and len(a) > 1:  # +refspec forces that ref
            return True
    return False


def _git_reset_hard(cmd: Command, *_: object) -> bool:
    sub, args = git_subcommand(cmd)
    return sub == "reset" and "--hard" in args


def _git_clean_force(cmd: Command, *_: object) -> bool:
    sub, args = git_subcommand(cmd)
    return sub == "clean" and ("--force" in args or "f" in _short_flags(args))


def _ancestors(analysis: Analysis, index: int):
    parent = analysis.commands[index].parent
    while parent is not None:
        yield analysis.commands[parent]
        parent = analysis.commands[parent].parent


def _pipe_to_shell(cmd: Command, analysis: Analysis, index: int, *_: object) -> bool:
    """A download whose output a shell or interpreter runs: ``curl … | sh``, ``sh <(curl …)``."""
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
        w in ("sudo", "doas", "pkexec") for w in cmd.wrappers
    )


def _shutdown(cmd: Command, *_: object) -> bool:
    name, args = cmd.name, cmd.inner[1:]
    if name in ("shutdown", "reboot", "halt", "poweroff"):
        return True
    if name in ("init", "telinit"):
        return bool(args) and args[0] in ("0", "6")
    if name == "systemctl":
        return any(a in ("poweroff", "reboot", "halt", "kexec", "soft-reboot") for a in args)
    return False


DANGEROUS: tuple[Danger, ...] = (
    Danger("rm-root", "recursively deletes /, the home directory or a system directory", _rm_root),
    Danger("git-force-push", "force-pushes, which can overwrite history on the remote", _git_force_push),
    Danger("git-reset-hard", "git reset --hard discards uncommitted changes", _git_reset_hard),
    Danger("git-clean", "git clean -f deletes untracked files", _git_clean_force),
    Danger("pipe-to-shell", "runs a downloaded script (curl/wget piped to a shell)", _pipe_to_shell),
    Danger("mkfs", "formats a file system", _mkfs),
    Danger("dd-device", "dd writes to a device", _dd_device),
    Danger("disk-write", "writes to a raw disk device", _write_disk),
    Danger("chmod-root", "recursively changes permissions of / or a system directory", _chmod_root),
    Danger("root", "runs as root (sudo / su / doas)", _root),
    Danger("shutdown", "shuts down or reboots the machine", _shutdown),
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
    for index, (cmd, where) in enumerate(zip(analysis.commands, _working_dirs(analysis, cwd, home))):
        for danger in DANGEROUS:
            if danger.test(cmd, analysis, index, where, home):
                found.append(Finding(danger.name, danger.reason, index))
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
