"""What a path word in a command means: home forms, catastrophic targets, unresolved words,
and the files whose change runs code later (shell startup files, git hooks, system files).

All lexical: no file system access, no variable values beyond ``$HOME`` / ``$PWD``.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

#: Top-level directories whose recursive removal or chmod wrecks the system.
# fmt: off
SYSTEM_DIRS = frozenset({
    "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/mnt", "/media",
    "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/usr", "/var", "/Applications",
    "/Library", "/System", "/Users", "/Volumes", "/private",
})
#: Where a write changes the system (a file there is a "system file").
SYSTEM_FILE_DIRS = ("/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/sys",
                    "/proc", "/root", "/var", "/opt", "/srv", "/System", "/Library", "/private/etc")
_SYSTEM_WRITABLE = ("/var/tmp", "/var/folders", "/private/tmp", "/private/var/folders")
#: Files under the home directory a shell (or login, or git) runs or reads as config later.
HOME_STARTUP = (
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile",
    ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login", ".logout", ".config/fish",
    ".config/environment.d", ".pam_environment", ".xprofile", ".xinitrc", ".xsession", ".config/autostart",
    ".config/systemd/user", "Library/LaunchAgents", ".gitconfig", ".config/git", ".inputrc", ".bash_aliases",
)
# fmt: on
_HOME_FORM = re.compile(r"^(?:~(?=/|$)|\$HOME(?![A-Za-z0-9_])|\$\{HOME(?:[:]?[-?=+][^}]*)?\})")
_PWD_FORM = re.compile(r"^(?:~\+(?=/|$)|\$PWD(?![A-Za-z0-9_])|\$\{PWD\})")
_USER_HOME = re.compile(r"^~([A-Za-z_][\w.-]*)(?=/|$)")
_GLOB = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class Place:
    """Where a command runs: its directory (after ``cd``), the workspace root and the home."""

    cwd: str
    workspace: str
    home: str


def expand_home(word: str, home: str, cwd: str = "") -> str:
    """``~``, ``$HOME``, ``${HOME}``, ``${HOME:?}``, ``${HOME:-x}`` -> home; ``~+`` / ``$PWD`` -> cwd;
    ``~user`` -> a sibling of home (no passwd lookup)."""
    m = _HOME_FORM.match(word)
    if m:
        return home + word[m.end() :]
    m = _PWD_FORM.match(word)
    if m and cwd:
        return cwd + word[m.end() :]
    m = _USER_HOME.match(word)
    if m and home:
        name = m.group(1)
        user_home = (
            home
            if name == posixpath.basename(home.rstrip("/"))
            else posixpath.join(posixpath.dirname(home.rstrip("/")), name)
        )
        return user_home + word[m.end() :]
    return word


def unresolved(word: str) -> bool:
    """A word whose value the reader cannot know: a variable, a substitution, ``~-``."""
    return "$" in word or "`" in word or word.startswith("~-")


def absolute(word: str, place: Place) -> str:
    path = expand_home(word, place.home, place.cwd)
    if not path.startswith("/"):
        path = posixpath.join(place.cwd, path)
    path = posixpath.normpath(path)
    return "/" + path.lstrip("/")


def is_home(path: str, home: str) -> bool:
    home = posixpath.normpath(home) if home else ""
    if path == home:
        return True
    return posixpath.dirname(path) in ("/home", "/Users")  # another user's home


def is_catastrophic_target(word: str, cwd: str, home: str, workspace: str = "") -> bool:
    """``/``, a home directory, a top-level system directory, an ancestor of the workspace, or
    everything inside one (``/*``, ``~/.*``, ``/h*``)."""
    m = _USER_HOME.match(word)
    if m and not word[m.end() :].strip("/*.?"):
        return True  # ~user, ~user/, ~user/*
    path = expand_home(word, home, cwd)
    if unresolved(path):
        return False
    if not path.startswith("/"):
        path = posixpath.join(cwd, path)
    ws = posixpath.normpath(workspace) if workspace else ""
    if ws and posixpath.normpath(path) == ws:
        return True  # the workspace itself (its contents, ./* or *, are not judged here)
    parts = [p for p in path.split("/") if p not in ("", ".")]
    glob_at = next((k for k, p in enumerate(parts) if _GLOB.search(p)), None)
    if glob_at is not None:
        parts = parts[:glob_at]  # a glob in a component: judge the directory it expands in
    path = posixpath.normpath("/" + "/".join(parts))
    if path == "/" or path in SYSTEM_DIRS or is_home(path, home):
        return True
    if home and posixpath.normpath(home).startswith(path + "/"):
        return True  # an ancestor of home
    return bool(ws) and ws.startswith(path + "/")  # an ancestor of the workspace


def climbs_out(word: str, place: Place) -> bool:
    """``..`` that leaves the workspace (``rm -rf ../x``, ``build/../../y``)."""
    if ".." not in word.split("/") or unresolved(word):
        return False
    path = absolute(word, place)
    ws = posixpath.normpath(place.workspace)
    return not (path == ws or path.startswith(ws.rstrip("/") + "/"))


def risky_target(word: str, place: Place) -> str | None:
    """Why a destructive command's target cannot be judged safe, or None."""
    if unresolved(expand_home(word, place.home, place.cwd)):
        return f"`{word}` holds a variable or command substitution"
    if climbs_out(word, place):
        return f"`{word}` climbs out of the workspace"
    return None


def sensitive_file(word: str, place: Place) -> str | None:
    """What a write to ``word`` would change that runs code later, or None."""
    if unresolved(expand_home(word, place.home, place.cwd)) or word.startswith("/dev/"):
        return None
    path = absolute(word, place)
    home = posixpath.normpath(place.home) if place.home else ""
    parts = path.split("/")
    if home and path.startswith(home + "/"):
        rel = path[len(home) + 1 :]
        for name in HOME_STARTUP:
            if rel == name or rel.startswith(name + "/"):
                return f"the shell/login startup file ~/{name}"
    if ".git" in parts:
        k = parts.index(".git")
        sub = parts[k + 1 : k + 2]
        if sub in (["hooks"], ["config"]):
            return f".git/{sub[0]}"
    if ".ama" in parts:
        return ".ama/"
    if path.startswith(("/etc/cron", "/var/spool/cron", "/etc/anacrontab", "/var/at")):
        return "the crontab"
    if path.startswith(_SYSTEM_WRITABLE):
        return None
    for d in SYSTEM_FILE_DIRS:
        if path == d or path.startswith(d + "/"):
            return f"the system file {path}"
    return None
