"""The ``auto`` mode's own layers, after the shared steps of the pipeline (rules, the dangerous
table, secret and protected paths, hooks, session memory), which in ``auto`` count as the
rule layer too:

- **rule** (ask): a bash call that asks to leave the sandbox (``sandbox: false``); a command
  that reaches the network, deletes files, or writes outside the workspace (and the temp
  directories); an ``edit`` / ``write`` outside the workspace.
- **static** (allow / ask): read-only tools, ``todo``, and edits inside the workspace are
  allowed; a bash call whose every command is a known read-only one (``ls``, ``grep``,
  ``git status`` …) is allowed; a known destructive pattern (``git rebase``, ``git commit
  --amend``, ``chmod -R``, ``kill`` …) asks.
- anything else goes to the **classifier** (a pending "ask", ``PermissionSession.settle``).

The OS sandbox does not allow anything by itself here (000 sandbox.md "权限集成"): its state
only reaches the classifier, as the ``os_sandbox`` line.  Pure, lexical, like the rest of the
pipeline.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from ama.permissions import _git
from ama.permissions._dangerous import _working_dirs
from ama.permissions._failclosed import _find_deletes
from ama.permissions._paths import Place, absolute, unresolved
from ama.permissions._types import AutoDecision, Decision, PermissionContext
from ama.permissions._writes import _NETWORK, written

if TYPE_CHECKING:
    from ama.permissions._pipeline import _Call
    from ama.permissions._shell import Command

Make = Callable[..., Decision]

#: Where a bash write does not count as "outside the workspace".
TEMP_DIRS = ("/tmp", "/var/tmp", "/private/tmp", "/private/var/folders", "/var/folders")
_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/full"})

# fmt: off
#: Programs that only read (when no redirection writes a file and no inline code runs).
READ_ONLY_COMMANDS = frozenset({
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "ag", "ack", "pwd", "echo", "printf",
    "which", "type", "whereis", "file", "stat", "du", "df", "tree", "diff", "cmp", "uniq", "cut", "tr",
    "basename", "dirname", "realpath", "readlink", "date", "whoami", "id", "uname", "hostname", "true",
    "false", "test", "[", "[[", "sleep", "jq", "cd", "pushd", "popd", "ps", "nproc", "seq", "md5sum",
    "sha1sum", "sha256sum", "sha512sum", "cksum", "xxd", "od", "hexdump", "strings", "column", "nl", "tac",
    "rev", "comm", "join", "paste", "expand", "unexpand", "fold", "less", "more", "bat", "locale", "groups",
    "uptime", "free", "lsof", "tty", "cal", "fd", "exa", "eza", "lsblk", "getconf",
})
#: Programs that change only the files they name: allowed when every one is in the workspace
#: (or a temp directory; the rule layer asked for anything else).
WORKSPACE_WRITERS = frozenset({"mkdir", "touch", "cp", "mv", "tee", "ln", "install"})
#: git subcommands that only read.
GIT_READ_ONLY = frozenset({
    "status", "log", "diff", "show", "rev-parse", "ls-files", "blame", "describe", "grep", "shortlog",
    "ls-tree", "cat-file", "merge-base", "name-rev", "rev-list", "whatchanged", "for-each-ref", "show-ref",
    "count-objects", "version", "help", "annotate", "cherry", "range-diff", "check-ignore", "var",
})
#: (program, subcommands) that fetch from or send to the network; an empty set: every use.
NETWORK_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "git": frozenset({"push", "pull", "fetch", "clone", "ls-remote", "submodule", "request-pull", "send-email"}),
    "npm": frozenset({"install", "i", "ci", "add", "update", "upgrade", "publish", "unpublish", "login", "exec"}),
    "pnpm": frozenset({"install", "i", "add", "update", "up", "publish", "dlx", "fetch"}),
    "yarn": frozenset({"", "install", "add", "upgrade", "up", "publish", "dlx"}),
    "bun": frozenset({"install", "i", "add", "update", "publish", "x"}),
    "pip": frozenset({"install", "download"}), "pip3": frozenset({"install", "download"}),
    "uv": frozenset({"add", "sync", "lock", "pip", "tool"}),
    "poetry": frozenset({"install", "add", "update", "lock", "publish"}),
    "cargo": frozenset({"install", "add", "update", "fetch", "publish", "search"}),
    "go": frozenset({"get", "install", "mod"}),
    "gem": frozenset({"install", "update", "push"}), "bundle": frozenset({"install", "update"}),
    "composer": frozenset({"install", "require", "update"}),
    "brew": frozenset({"install", "update", "upgrade", "tap"}),
    "apt": frozenset({"install", "update", "upgrade"}), "apt-get": frozenset({"install", "update", "upgrade"}),
    "docker": frozenset({"pull", "push", "login"}),
    "npx": frozenset(), "pnpx": frozenset(), "bunx": frozenset(), "uvx": frozenset(), "pipx": frozenset(),
    "ping": frozenset(), "dig": frozenset(), "nslookup": frozenset(), "host": frozenset(), "whois": frozenset(),
    "traceroute": frozenset(),
}
#: Programs that delete files.
DELETERS = frozenset({"rm", "rmdir", "unlink", "shred", "srm", "trash", "trash-put"})
#: (program, subcommands) whose use is destructive enough to ask (deletion is the rule layer's).
DESTRUCTIVE: dict[str, frozenset[str]] = {
    "git": frozenset({"rebase", "filter-branch", "filter-repo", "prune", "gc", "update-ref", "replace"}),
    "docker": frozenset({"rm", "rmi", "prune", "system", "volume", "kill"}),
    "kubectl": frozenset({"delete", "apply", "replace", "drain", "scale"}),
    "terraform": frozenset({"apply", "destroy", "import"}),
    "helm": frozenset({"uninstall", "delete", "rollback"}),
    "kill": frozenset(), "pkill": frozenset(), "killall": frozenset(), "truncate": frozenset(),
    "dd": frozenset(), "mkfs": frozenset(),
}
#: git subcommands that only read with these (first, for branch / tag: every) words.
_GIT_LISTING: dict[str, tuple[str, ...]] = {
    "branch": ("-a", "-r", "-v", "-vv", "--list", "-l", "--show-current", "--all"),
    "tag": ("-l", "--list", "-n"),
    "remote": ("-v", "get-url"),
    "stash": ("list", "show"),
    "worktree": ("list",),
    "reflog": ("show",),
    "config": ("--get", "--list", "-l", "--get-all", "--show-origin", "get", "list"),
}
# fmt: on
_REMOTE = re.compile(r"^[^/\s]*[^/\s\\]:")  # rsync / scp host:path


def _inside(path: str, root: str) -> bool:
    root = root.rstrip("/") or "/"
    return path == root or path.startswith(root.rstrip("/") + "/")


def _sub(cmd: Command) -> tuple[str, list[str]]:
    """``(subcommand, its args)``: the first word after the program (git: after its options)."""
    if cmd.name == "git":
        _opts, sub, args = _git.split(cmd.inner)
        return sub, args
    args = cmd.inner[1:]
    words = [a for a in args if not a.startswith("-")]
    if cmd.name.startswith("python") and args[:2] == ["-m", "pip"]:
        return "pip " + (args[2] if len(args) > 2 else ""), args[3:]
    return (words[0] if words else ""), args


def network(cmd: Command) -> bool:
    name = cmd.name
    if any(t.startswith(("/dev/tcp/", "/dev/udp/")) for _op, t in cmd.redirects):
        return True
    if name in ("rsync", "scp"):
        return any(_REMOTE.match(a) for a in cmd.inner[1:] if not a.startswith("-"))
    if name in _NETWORK:
        return True
    sub, _args = _sub(cmd)
    if sub.startswith("pip "):
        return sub in ("pip install", "pip download")
    if name in NETWORK_SUBCOMMANDS:
        subs = NETWORK_SUBCOMMANDS[name]
        return not subs or sub in subs
    return False


def deletes(cmd: Command) -> bool:
    name, args = cmd.name, cmd.inner[1:]
    if name in DELETERS:
        return True
    if name == "find":
        return _find_deletes(args)
    if name == "rsync":
        return any(a.startswith("--delete") or a.startswith("--remove-source") for a in args)
    if name == "git":
        sub, _ = _sub(cmd)
        return sub in ("rm", "clean")
    return bool(cmd.scan is not None and cmd.scan.deletes)


def _writes_outside(cmd: Command, place: Place) -> str | None:
    """A path word ``cmd`` writes outside the workspace and the temp directories."""
    words = written(cmd, deletes=False)
    if cmd.name == "mkdir":  # not in ``written``: it makes what it names
        before, after = _git.positionals(cmd.inner[1:], frozenset({"-m", "--mode", "--context"}))
        words = words + before + after
    if cmd.scan is not None and cmd.scan.literals:
        words = words + [w for w in cmd.scan.literals if w.startswith(("/", "~"))]
    for word in words:
        if unresolved(word):
            return word
        path = absolute(word, place)
        if path in _DEVICES or path.startswith("/dev/fd/") or _inside(path, place.workspace):
            continue
        if any(_inside(path, t) for t in TEMP_DIRS):
            continue
        return word
    return None


def _static_allow(cmd: Command) -> bool:
    """Only reads, or writes files in the workspace (redirections, ``cp``, ``mkdir`` …); the
    rule layer has already asked for writes anywhere else."""
    if cmd.code is not None or cmd.runs_input is not None or not cmd.inner:
        return False
    name, args = cmd.name, cmd.inner[1:]
    if name in WORKSPACE_WRITERS:
        return True
    if args and all(a in ("--version", "--help", "-h") for a in args):
        return True
    if name == "find":
        return not any(a in ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprintf", "-fls")
                       for a in args)  # fmt: skip
    if name == "git":
        sub, rest = _sub(cmd)
        if any(a.startswith("--output") for a in rest):
            return False
        if sub in GIT_READ_ONLY:
            return True
        listing = _GIT_LISTING.get(sub)
        if listing is None:
            return False
        if sub in ("branch", "tag"):  # every word a listing option: ``git branch -a``
            return all(a in listing for a in rest)
        return (not rest and sub != "config") or (bool(rest) and rest[0] in listing)
    if name == "sort":
        return not any(a.startswith(("-o", "--output")) for a in args)
    return name in READ_ONLY_COMMANDS


def _destructive(cmd: Command) -> str | None:
    name = cmd.name
    args = cmd.inner[1:]
    if name in ("chmod", "chown", "chgrp") and ("--recursive" in args or "R" in _git.short_flags(args)):
        return f"`{name} -R` changes a whole tree"
    if name == "git":
        sub, rest = _sub(cmd)
        if sub == "commit" and any(a == "--amend" for a in rest):
            return "`git commit --amend` rewrites the last commit"
        if sub == "reset" and [a for a in rest if not a.startswith("-")]:
            return "`git reset <commit>` moves the branch"
        if sub in ("branch", "tag") and any(a in ("-d", "-D", "--delete", "-m", "-M", "-f") for a in rest):
            return f"`git {sub}` deletes or renames refs"
        if sub == "stash" and (not rest or rest[0] in ("push", "pop", "drop", "clear", "save")):
            return "`git stash` sets uncommitted work aside"
        if sub == "worktree" and rest[:1] == ["remove"]:
            return "`git worktree remove` deletes a worktree"
    if name.startswith("mkfs"):
        return f"`{name}` formats a disk"
    subs = DESTRUCTIVE.get(name)
    if subs is None:
        return None
    sub, _ = _sub(cmd)
    if subs and sub not in subs:
        return None
    return f"`{' '.join([name, sub] if subs else [name])}` is destructive"


def judge(call: _Call, ctx: PermissionContext, make: Make, ask_session: tuple) -> Decision:
    """The rule and static layers of ``auto`` mode for a call the shared steps left open."""

    def out(layer: str, action: str, reason: str) -> Decision:
        source = "rule" if layer == "rule" else "static"
        d = make(action, reason, source, session=ask_session if action == "ask" else ())
        return _with_auto(d, AutoDecision(layer, action, reason))  # type: ignore[arg-type]

    tool = call.tool
    if call.kind == "internal" or call.kind == "read":
        return out("static", "allow", f"auto mode: `{tool}` only reads.")
    if call.kind == "write":
        if call.path and _inside(call.path, ctx.cwd):
            return out("static", "allow", "auto mode: edits inside the workspace run without asking.")
        return out("rule", "ask", f"auto mode asks before `{tool}` writes outside the workspace.")
    if call.kind != "exec":
        return _pending(make, ask_session, f"auto mode: `{tool}` is judged by the permission classifier.")
    assert call.analysis is not None
    if call.sandbox_off:
        return out("rule", "ask", "The command asks to run outside the OS sandbox (sandbox: false), which needs approval.")
    places = [Place(where, ctx.cwd, ctx.home) for where in _working_dirs(call.analysis, ctx.cwd, ctx.home)]
    commands = [(c, p) for c, p in zip(call.analysis.commands, places) if not c.transparent]
    for cmd, _place in commands:
        if network(cmd):
            return out("rule", "ask", f"auto mode asks before `{cmd.text}` reaches the network.")
    for cmd, _place in commands:
        if deletes(cmd):
            return out("rule", "ask", f"auto mode asks before `{cmd.text}` deletes files.")
    for cmd, place in commands:
        where = _writes_outside(cmd, place)
        if where is not None:
            return out("rule", "ask", f"auto mode asks before `{cmd.text}` writes {where}, outside the workspace.")
    for cmd, _place in commands:
        why = _destructive(cmd)
        if why is not None:
            return out("static", "ask", f"auto mode asks: {why}.")
    if commands and all(_static_allow(c) for c, _p in commands):
        return out("static", "allow", "auto mode: commands that read, or write only in the workspace, run without asking.")
    return _pending(make, ask_session, "auto mode: the command is judged by the permission classifier.")


def _with_auto(d: Decision, auto: AutoDecision) -> Decision:
    return replace(d, auto=auto)


def _pending(make: Make, ask_session: tuple, reason: str) -> Decision:
    return replace(make("ask", reason, "classifier", session=ask_session), pending=True)

