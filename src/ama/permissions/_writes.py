"""Table entries about files and processes: what a command writes, reads or kills.

- ``written(cmd)``: the path words a command writes (redirections, ``tee``, ``cp``/``mv``
  targets, ``dd of=``, ``sed -i``, ``truncate``, ``rm``, ``chmod``, ``curl -o`` ...);
- writes to shell startup files, git hooks / config, ``.ama/``, the crontab, system files;
- setuid/setgid ``chmod``, ``kill -9 -1``, whole-home readers, the environment sent to the
  network, and a file downloaded and then run in the same command line.
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import TYPE_CHECKING

from ama.permissions._git import positionals, short_flags
from ama.permissions._interp import INTERPRETERS, family
from ama.permissions._paths import Place, absolute, expand_home, is_home, sensitive_file, unresolved
from ama.permissions._wrappers import SHELLS

if TYPE_CHECKING:
    from ama.permissions._shell import Analysis, Command

_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_TARGET_LAST = frozenset({"cp", "mv", "install", "ln", "rsync", "scp", "link"})
_ALL_OPERANDS = frozenset({"tee", "truncate", "shred", "rm", "unlink", "rmdir", "touch"})
_MODE_FIRST = frozenset({"chmod", "chown", "chgrp", "setfacl", "chattr"})
DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "xh"})
_NETWORK = DOWNLOADERS | frozenset(
    {"nc", "ncat", "netcat", "socat", "telnet", "ssh", "scp", "sftp", "ftp", "openssl", "mail", "sendmail",
     "mutt", "rsync", "gh", "aws", "gsutil", "s3cmd", "rclone", "curlie", "websocat", "httpie"}
)  # fmt: skip
_VALUE = {"cp": frozenset({"-t", "-S"}), "install": frozenset({"-m", "-o", "-g", "-t"}),
          "mv": frozenset({"-t", "-S"}), "tee": frozenset(), "truncate": frozenset({"-s", "-r"}),
          "rsync": frozenset({"-e", "--exclude", "--include", "--filter"}), "scp": frozenset({"-P", "-i", "-o"})}  # fmt: skip


def written(cmd: Command, *, deletes: bool = True) -> list[str]:
    """The path words ``cmd`` writes to (or deletes, unless ``deletes`` is false), lexically."""
    out = [t for op, t in cmd.redirects if op in _WRITE_OPS]
    out += [t for op, t in cmd.redirects if op == ">&" and not t.isdigit() and t != "-"]
    name, args = cmd.name, cmd.inner[1:]
    values = _VALUE.get(name, frozenset())
    before, after = positionals(args, values)
    operands = before + after
    if name in _TARGET_LAST and len(operands) >= 2:
        out.append(operands[-1])
    if name in ("cp", "mv", "install", "ln"):
        out += [args[k + 1] for k, a in enumerate(args[:-1]) if a == "-t"]
        out += [a.split("=", 1)[1] for a in args if a.startswith("--target-directory=")]
    if name in _ALL_OPERANDS and (deletes or name in ("tee", "truncate", "touch")):
        out += operands
    if name in _MODE_FIRST:
        out += operands[1:]
    if name == "dd":
        out += [a[3:] for a in args if a.startswith("of=")]
    if name == "sed" and any(a.startswith(("-i", "--in-place")) for a in args):
        script_given = any(a in ("-e", "-f", "--expression", "--file") for a in args)
        out += operands if script_given else operands[1:]
    if name == "perl" and any(re.fullmatch(r"-\w*i\S*", a) for a in args):
        out += [a for a in operands if a != cmd.code]
    out += downloads(cmd)
    return out


def downloads(cmd: Command) -> list[str]:
    """Files ``curl -o F`` / ``curl -O URL`` / ``wget [-O F] URL`` / ``curl URL > F`` write."""
    name, args = cmd.name, cmd.inner[1:]
    if name not in DOWNLOADERS:
        return []
    out: list[str] = []
    urls = [a for a in args if re.match(r"^[a-z][\w+.-]*://", a)]
    for k, a in enumerate(args):
        nxt = args[k + 1] if k + 1 < len(args) else ""
        if a in ("--output", "--output-document") or re.fullmatch(
            r"-[a-zA-Z]*" + ("O" if name == "wget" else "o"), a
        ):
            out.append(nxt)
        elif a.startswith(("--output=", "--output-document=")):
            out.append(a.split("=", 1)[1])
        elif name == "curl" and (re.fullmatch(r"-[a-zA-Z]*O", a) or a == "--remote-name"):
            out += [posixpath.basename(u.split("?")[0]) for u in urls]
    if name == "wget" and not out:
        out += [posixpath.basename(u.split("?")[0]) or "index.html" for u in urls]
    out += [t for op, t in cmd.redirects if op in (">", ">>", ">|", "&>")]
    return [o for o in out if o and o != "-"]


def sensitive_writes(cmd: Command, place: Place, kinds: tuple[str, ...]) -> bool:
    """``cmd`` writes a file whose ``sensitive_file`` label starts with one of ``kinds``."""
    system = kinds == ("the system file",)
    key = ("sensitive", system, place)
    labels = cmd.memo.get(key)
    if labels is None:
        words = written(cmd, deletes=not system)
        if cmd.scan is not None and cmd.scan.literals:
            words = words + cmd.scan.literals
        labels = [label for w in words if (label := sensitive_file(w, place)) is not None]
        cmd.memo[key] = labels
    return any(label.startswith(kinds) for label in labels)  # type: ignore[attr-defined]


def crontab(cmd: Command, *_: object) -> bool:
    if cmd.name != "crontab":
        return False
    args = [a for a in cmd.inner[1:] if a not in ("-u",)]
    return not ("-l" in args and all(a.startswith("-") or a == "-l" for a in args))


def setuid(cmd: Command, *_: object) -> bool:
    if cmd.name not in ("chmod", "install"):
        return False
    args = cmd.inner[1:]
    if cmd.name == "install":
        modes = [args[k + 1] for k, a in enumerate(args[:-1]) if a == "-m"]
    else:
        ops = positionals(args)[0] + positionals(args)[1]
        modes = ops[:1] + [a for a in args if re.fullmatch(r"-?[ugoa]*[+=][rwxXst]*s[rwxXst]*", a)]
    return any(re.fullmatch(r"0?[2-7]\d{3}", m) or re.search(r"[+=][rwxXt]*s", m) for m in modes)


def kill_all(cmd: Command, *_: object) -> bool:
    name, args = cmd.name, cmd.inner[1:]
    if name == "killall5":
        return True
    if name in ("pkill", "killall"):
        return (
            "-u" in args
            or any(a.startswith("--user") for a in args)
            or any(
                a in (".", ".*", "^", "''", "") for a in positionals(args, frozenset({"-s", "--signal"}))[0]
            )
        )
    if name != "kill":
        return False
    i = 0
    if args[:1] and args[0] in ("-s", "-n"):
        i = 2
    elif args[:1] and re.fullmatch(r"-(\d+|[A-Z]+|SIG[A-Z]+)", args[0]) and len(args) > 1:
        i = 1
    rest = [a for a in args[i:] if a != "--"]
    return "-1" in rest


def _home_or_root(word: str, place: Place) -> bool:
    path = expand_home(word, place.home, place.cwd)
    if unresolved(path):
        return False
    path = absolute(path, place)  # a glob (~/.*) is not the whole home: the secret check sees it
    home = posixpath.normpath(place.home) if place.home else ""
    return (
        path == "/"
        or is_home(path, home)
        or path in ("/root", "/home", "/Users")
        or (bool(home) and home.startswith(path.rstrip("/") + "/"))
    )


def home_reader(cmd: Command, _a: Analysis, _i: int, place: Place) -> bool:
    """Reads the whole home directory (or /): ``grep -r x ~``, ``tar czf h.tgz ~``, ``find ~ -exec cat``."""
    name, args = cmd.name, cmd.inner[1:]
    before, after = positionals(args, frozenset({"-e", "-f", "-m", "-A", "-B", "-C", "-t", "-g", "--glob"}))
    ops = before + after
    if name in ("grep", "egrep", "fgrep"):
        recursive = any(c in short_flags(args) for c in "rR") or "--recursive" in args or "-d" in args
        paths = (
            ops if any(a in ("-e", "-f") or a.startswith(("--regexp", "--file")) for a in args) else ops[1:]
        )
        return recursive and any(_home_or_root(p, place) for p in paths)
    if name in ("rg", "ag", "ack", "ugrep"):
        return any(_home_or_root(p, place) for p in ops[1:])
    if name in ("tar", "bsdtar", "zip", "7z", "7za", "cpio", "rsync", "scp", "cp"):
        if name in ("cp", "scp", "rsync"):
            ops = ops[:-1]
        return any(_home_or_root(p, place) for p in ops)
    if name == "find":
        starts = [
            a
            for a in args[: next((k for k, a in enumerate(args) if a.startswith(("-", "(", "!"))), len(args))]
        ]
        runs = any(a in ("-exec", "-execdir", "-ok", "-okdir") for a in args)
        return runs and any(_home_or_root(p, place) for p in starts)
    return False


def env_dumper(cmd: Command) -> bool:
    if cmd.argv and os.path.basename(cmd.argv[0]) == "env" and not cmd.inner:
        return True
    name, args = cmd.name, cmd.inner[1:]
    if name in ("printenv", "compgen") or (name == "set" and not args):
        return name != "compgen" or "-v" in args or "-e" in args
    if name in ("export", "declare", "typeset") and (not args or args[0] in ("-p", "-x", "-px")):
        return True
    return any("/environ" in w for w in cmd.words())


def _network(cmd: Command) -> bool:
    return cmd.name in _NETWORK or any(t.startswith(("/dev/tcp/", "/dev/udp/")) for _op, t in cmd.redirects)


def env_exfil(analysis: Analysis, places: list[Place]) -> list[int]:
    """Indices of network commands that get the environment: ``env | curl -d @- …``,
    ``curl -d "$(printenv)"``, ``env > f; curl -T f …``, ``printenv > /dev/tcp/h/p``."""
    hits: list[int] = []
    dumped: set[str] = set()
    cmds = analysis.commands
    for i, cmd in enumerate(cmds):
        if env_dumper(cmd):
            if any(t.startswith(("/dev/tcp/", "/dev/udp/")) for _op, t in cmd.redirects):
                hits.append(i)
            dumped |= {absolute(w, places[i]) for w in written(cmd)}
            later = [c for c in cmds[i + 1 :] if c.pipeline == cmd.pipeline and c.position > cmd.position]
            parent = cmd.parent
            while parent is not None:
                later.append(cmds[parent])
                parent = cmds[parent].parent
            hits += [cmds.index(c) for c in later if _network(c)]
        elif _network(cmd) and dumped:
            words = {absolute(w.lstrip("@<"), places[i]) for w in cmd.inner[1:] if not unresolved(w)}
            if words & dumped:
                hits.append(i)
    return sorted(set(hits))


def _executed_file(cmd: Command) -> str | None:
    name = cmd.name
    if cmd.inner and "/" in cmd.inner[0]:
        return cmd.inner[0]
    if name in SHELLS or family(name) or name in ("source", ".") or name in INTERPRETERS:
        ops = [a for a in cmd.inner[1:] if not a.startswith("-")]
        return ops[0] if ops else None
    return None


def download_then_run(analysis: Analysis, places: list[Place]) -> list[int]:
    """Indices of commands that run a file an earlier command of the same text downloaded."""
    got: set[str] = set()
    hits = []
    for i, cmd in enumerate(analysis.commands):
        run = _executed_file(cmd)
        if run is not None and not unresolved(run) and absolute(run, places[i]) in got:
            hits.append(i)
        got |= {absolute(w, places[i]) for w in downloads(cmd) if not unresolved(w)}
    return hits
