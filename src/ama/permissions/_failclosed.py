"""Fail closed: where the reader cannot tell what will run or what a destructive command hits.

- a command name built at run time (``$CMD``, ``$(…)``, backquotes, ``"$@"``);
- ``rm -r``, ``chmod/chown/chgrp -R``, ``dd of=``, ``find -delete`` / ``-exec rm``,
  ``rsync --delete`` and ``mv`` whose target holds a variable or substitution
  (``${VAR:?}``, ``${VAR:-…}`` included) or climbs out of the workspace with ``..``;
- interpreter code that builds the command it runs, the code it evaluates or the path it
  deletes at run time.

And the catastrophic cases of the same commands that are not ``rm``: ``find / -delete``,
``rsync -a --delete empty/ ~/``, ``mv ~ /tmp/x``, ``shutil.rmtree('/')``.
"""

from __future__ import annotations

import os
import posixpath
from typing import TYPE_CHECKING

from ama.permissions._git import positionals, short_flags
from ama.permissions._paths import Place, absolute, is_catastrophic_target, risky_target, unresolved

if TYPE_CHECKING:
    from ama.permissions._shell import Analysis, Command

_FIND_DELETERS = frozenset({"rm", "shred", "unlink", "rmdir"})


def dynamic_name(cmd: Command, *_: object) -> bool:
    if not cmd.inner:
        return False
    first = cmd.inner[0]
    return unresolved(first) or (first == "{}" and bool({"xargs", "parallel"} & set(cmd.wrappers)))


def _find_starts(args: list[str]) -> list[str]:
    end = next((k for k, a in enumerate(args) if a.startswith(("-", "(", "!")) and a != "-"), len(args))
    return args[:end] or ["."]


def _find_deletes(args: list[str]) -> bool:
    if "-delete" in args:
        return True
    for k, a in enumerate(args):
        if (
            a in ("-exec", "-execdir", "-ok", "-okdir")
            and os.path.basename(args[k + 1 : k + 2] and args[k + 1] or "") in _FIND_DELETERS
        ):
            return True
    return False


def _targets(cmd: Command) -> list[str] | None:
    """The targets of a destructive command (None when it is not one)."""
    name, args = cmd.name, cmd.inner[1:]
    before, after = positionals(args)
    ops = before + after
    if name == "rm" and ("--recursive" in args or any(c in short_flags(args) for c in "rR")):
        return ops
    if name in ("chmod", "chown", "chgrp") and ("--recursive" in args or "R" in short_flags(args)):
        return ops[1:]
    if name == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    if name == "find" and _find_deletes(args):
        return _find_starts(args)
    if name == "rsync" and any(a.startswith("--delete") or a == "--remove-source-files" for a in args):
        return ops[-1:]
    if name == "mv":
        t = [args[k + 1] for k, a in enumerate(args[:-1]) if a == "-t"]
        return t or ops[-1:]
    return None


def dynamic_target(cmd: Command, _a: Analysis, _i: int, p: Place) -> bool:
    targets = _targets(cmd)
    if targets is None:
        return False
    if {"xargs", "parallel"} & set(cmd.wrappers):
        return True  # the targets come from the input
    return any(risky_target(t, p) for t in targets)


def destroys_root(cmd: Command, _a: Analysis, _i: int, p: Place) -> bool:
    name, args = cmd.name, cmd.inner[1:]
    words: list[str] = []
    if name == "find" and _find_deletes(args):  # find . -name '*.pyc' -delete: filtered, fine
        words = [
            w
            for w in _find_starts(args)
            if unresolved(w) or absolute(w, p) != posixpath.normpath(p.workspace)
        ]
    elif name == "rsync" and any(a.startswith("--delete") for a in args):
        words = _targets(cmd) or []
    elif name == "mv":
        words = positionals(args)[0] + positionals(args)[1]
    if cmd.scan is not None:
        words = words + cmd.scan.deletes
    return any(is_catastrophic_target(w, p.cwd, p.home, p.workspace) for w in words)


def dynamic_code(cmd: Command, _a: Analysis, _i: int, p: Place) -> bool:
    if cmd.scan is None:
        return False
    return bool(cmd.scan.dynamic) or any(risky_target(d, p) for d in cmd.scan.deletes)
