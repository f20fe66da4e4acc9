"""Reading a git command line the way git does: global options, aliases, abbreviated long options.

git's option parser accepts any unambiguous prefix of a long option (``--har`` is ``--hard``,
``--mirro`` is ``--mirror``); an ambiguous one is an error.  ``long_candidates`` gives the
options an abbreviation can stand for (from the option lists git prints with
``git <cmd> --git-completion-helper``, git 2.39); a check treats an abbreviation as an option
when every option it can stand for is in the checked group (``--forc`` is some force option
in every git version; ``--f`` is ambiguous with ``--follow-tags`` and git refuses it).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ama.permissions._shell import Command

VALUE_OPTS = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--exec-path"}
)

# fmt: off
LONG: dict[str, tuple[str, ...]] = {
    "push": ("verbose", "quiet", "repo", "all", "mirror", "delete", "tags", "dry-run", "porcelain", "force",
             "force-with-lease", "force-if-includes", "recurse-submodules", "receive-pack", "exec",
             "set-upstream", "progress", "prune", "no-verify", "follow-tags", "signed", "atomic", "push-option",
             "ipv4", "ipv6", "verify", "branches"),
    "reset": ("quiet", "no-refresh", "mixed", "soft", "hard", "merge", "keep", "recurse-submodules", "patch",
              "intent-to-add", "pathspec-from-file", "pathspec-file-nul", "refresh"),
    "clean": ("quiet", "dry-run", "interactive", "exclude", "force"),
    "checkout": ("guess", "overlay", "quiet", "recurse-submodules", "progress", "merge", "conflict", "detach",
                 "track", "orphan", "ignore-other-worktrees", "ours", "theirs", "patch",
                 "ignore-skip-worktree-bits", "pathspec-from-file", "pathspec-file-nul", "force"),
    "restore": ("source", "staged", "worktree", "ignore-unmerged", "overlay", "quiet", "recurse-submodules",
                "progress", "merge", "conflict", "ours", "theirs", "patch", "ignore-skip-worktree-bits",
                "pathspec-from-file", "pathspec-file-nul"),
    "switch": ("create", "force-create", "guess", "discard-changes", "quiet", "recurse-submodules", "progress",
               "merge", "conflict", "detach", "track", "orphan", "ignore-other-worktrees", "force"),
    "branch": ("verbose", "quiet", "track", "set-upstream-to", "unset-upstream", "color", "remotes", "contains",
               "no-contains", "abbrev", "all", "delete", "move", "copy", "list", "show-current",
               "create-reflog", "edit-description", "merged", "no-merged", "column", "sort", "points-at",
               "ignore-case", "recurse-submodules", "format", "force"),
}
#: Config keys whose value git runs as a command (or that load other config / hooks).
EXEC_KEYS = frozenset({
    "core.hookspath", "core.fsmonitor", "core.sshcommand", "core.pager", "core.editor", "core.askpass",
    "sequence.editor", "credential.helper", "gpg.program", "diff.external", "include.path", "pager.log",
    "pager.diff", "pager.show", "uploadpack.packobjectshook", "merge.tool",
})
# fmt: on
_EXEC_PREFIXES = ("includeif.", "filter.", "difftool.", "mergetool.", "pager.")


def split(argv: list[str]) -> tuple[list[str], str, list[str]]:
    """``git -c a=b -C dir push -f`` -> (["-c", "a=b", "-C", "dir"], "push", ["-f"])."""
    if not argv or os.path.basename(argv[0]) != "git":
        return [], "", []
    args = argv[1:]
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in VALUE_OPTS else 1
    return args[:i], (args[i] if i < len(args) else ""), args[i + 1 :]


def config_pairs(global_opts: list[str]) -> list[tuple[str, str]]:
    """The ``-c key=value`` settings of a git command line (key lower-cased)."""
    out = []
    for k, a in enumerate(global_opts):
        if a == "-c" and k + 1 < len(global_opts):
            key, _, value = global_opts[k + 1].partition("=")
            out.append((key.lower(), value))
    return out


def config_set(sub: str, args: list[str]) -> tuple[str, str] | None:
    """The (key, value) ``git config [scope] KEY VALUE`` / ``git config set KEY VALUE`` writes."""
    if sub != "config":
        return None
    words, i = [], 0
    while i < len(args):
        a = args[i]
        if a in ("-f", "--file", "--blob", "--type", "--comment"):
            i += 2
            continue
        if a.startswith("-"):
            if a in ("-l", "--list", "--get", "--get-all", "--get-regexp", "--unset", "--unset-all", "-e",
                     "--edit", "--remove-section", "--rename-section"):  # fmt: skip
                return None
            i += 1
            continue
        words.append(a)
        i += 1
    if words[:1] == ["set"]:
        words = words[1:]
    return (words[0].lower(), words[1]) if len(words) >= 2 else None


def runs_value(key: str) -> bool:
    return key in EXEC_KEYS or key.startswith(_EXEC_PREFIXES) or key.startswith("alias.")


def long_candidates(sub: str, arg: str) -> frozenset[str]:
    """The long options ``arg`` (``--har``, ``--force=x``) can stand for in ``git sub``."""
    if not arg.startswith("--") or arg == "--":
        return frozenset()
    name = arg[2:].split("=", 1)[0]
    table = LONG.get(sub, ())
    if name in table:
        return frozenset({name})
    return frozenset(
        o for o in table if o.startswith(name) and not (o.startswith("no-") and not name.startswith("no-"))
    )


def has_long(sub: str, args: list[str], group: frozenset[str]) -> bool:
    """Some argument is (an abbreviation that can only be) one of ``group``."""
    for a in args:
        if a == "--":
            return False
        c = long_candidates(sub, a)
        if c and c <= group:
            return True
    return False


def short_flags(args: list[str], with_value: frozenset[str] = frozenset()) -> str:
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "--":
            break
        if a.startswith("-") and not a.startswith("--") and len(a) > 1:
            out.append(a[1:])
            skip = a in with_value
    return "".join(out)


def positionals(args: list[str], with_value: frozenset[str] = frozenset()) -> tuple[list[str], list[str]]:
    """(operands before ``--``, operands after it)."""
    before: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return before, args[i + 1 :]
        if a.startswith("-") and len(a) > 1:
            i += 2 if a in with_value else 1
            continue
        before.append(a)
        i += 1
    return before, []


# --- dangerous git commands (predicates over one simple command) ---------------------------

_FORCE = frozenset({"force", "force-with-lease", "force-if-includes", "mirror"})
_PUSH_VALUE = frozenset({"-o", "--push-option", "--repo", "--receive-pack", "--exec"})
_BROAD = frozenset({".", "./", ":/", "*", ":(top)", ":/*", "/"})


def _sub(cmd: Command) -> tuple[list[str], str, list[str]]:
    return split(cmd.inner) if cmd.name == "git" else ([], "", [])


def force_push(cmd: Command) -> bool:
    _o, sub, args = _sub(cmd)
    if sub != "push":
        return False
    if has_long(sub, args, _FORCE) or "f" in short_flags(args, _PUSH_VALUE):
        return True
    return any(a.startswith("+") and len(a) > 1 for a in positionals(args, _PUSH_VALUE)[0])


def push_delete(cmd: Command) -> bool:
    _o, sub, args = _sub(cmd)
    if sub != "push":
        return False
    if has_long(sub, args, frozenset({"delete"})) or has_long(sub, args, frozenset({"prune"})):
        return True
    if "d" in short_flags(args, _PUSH_VALUE):
        return True
    return any(a.startswith(":") and len(a) > 1 for a in positionals(args, _PUSH_VALUE)[0][1:])


def reset_hard(cmd: Command) -> bool:
    _o, sub, args = _sub(cmd)
    return sub == "reset" and has_long(sub, args, frozenset({"hard"}))


def clean_force(cmd: Command) -> bool:
    _o, sub, args = _sub(cmd)
    return sub == "clean" and (
        has_long(sub, args, frozenset({"force"})) or "f" in short_flags(args, frozenset({"-e"}))
    )


def discards_work(cmd: Command) -> bool:
    """checkout/restore over the work tree, stash drop/clear, switch --discard-changes, branch -D."""
    _o, sub, args = _sub(cmd)
    if sub == "checkout":
        before, after = positionals(args, frozenset({"-b", "-B", "--orphan", "--conflict"}))
        flags = short_flags(args, frozenset({"-b", "-B"}))
        return (
            bool(after)
            or "f" in flags
            or has_long(sub, args, frozenset({"force"}))
            or bool(_BROAD & set(before))
        )
    if sub == "restore":
        staged_only = has_long(sub, args, frozenset({"staged"})) or "S" in short_flags(args)
        worktree = has_long(sub, args, frozenset({"worktree"})) or "W" in short_flags(args)
        before, after = positionals(args, frozenset({"-s", "--source"}))
        return bool(before or after) and (worktree or not staged_only)
    if sub == "stash":
        return bool(args) and args[0] in ("drop", "clear")
    if sub == "switch":
        return has_long(sub, args, frozenset({"discard-changes", "force"})) or "f" in short_flags(args)
    if sub == "branch":
        return "D" in short_flags(args) or (
            has_long(sub, args, frozenset({"delete"})) and has_long(sub, args, frozenset({"force"}))
        )
    return False


def config_exec(cmd: Command) -> bool:
    """``git config [--global] core.hooksPath …`` (and other keys whose value git runs), and
    ``git -c core.hooksPath=…`` (hooks from another directory)."""
    opts, sub, args = _sub(cmd)
    if any(k == "core.hookspath" for k, _v in config_pairs(opts)):
        return True
    pair = config_set(sub, args)
    if pair is None or not runs_value(pair[0]):
        return False
    return not pair[0].startswith("alias.") or pair[1].startswith("!")  # a plain alias runs git only
