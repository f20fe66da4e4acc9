"""The user's ignore rules, moved into the shadow repository's ``info/exclude``.

The shadow repository's work tree is the session's cwd, so git itself reads the
``.gitignore`` files in cwd and below.  When cwd lies inside the user's repository, the
rules that repository applies from outside cwd must be added: ``.gitignore`` files of the
directories above cwd (up to the repository root), the repository's ``info/exclude`` and the
global excludes file.  Their patterns are relative to another directory, so each is
*rebased* onto cwd (:func:`rebase`): an anchored pattern keeps only what lies below cwd, an
unanchored one applies as it is.  Sources are written lowest precedence first (global,
``info/exclude``, then the parents from the root down), since in one file the last match
wins; cwd's own ``.gitignore`` files still override all of them, as in git.

Pure functions, except :func:`exclude_sources`, which only reads files.
"""

from __future__ import annotations

import os
from fnmatch import fnmatchcase

from ama.checkpoints.githead import common_dir, find_git_dir

HEADER = "# written by ama: the shadow repository's excludes (do not edit)\n.git\n"


def _clean(line: str) -> str:
    line = line.rstrip("\r\n")
    stripped = line.rstrip(" ")
    if stripped != line and stripped.endswith("\\"):
        stripped += " "  # an escaped trailing space stays
    return stripped


def rebase(text: str, prefix: list[str]) -> list[str]:
    """The patterns of an ignore file in directory D, rewritten for the directory
    ``D/<prefix...>`` (``prefix`` = the path segments from D down to it)."""
    out: list[str] = []
    for raw in text.splitlines():
        line = _clean(raw)
        if not line or line.startswith("#"):
            continue
        if not prefix:
            out.append(line)
            continue
        neg = line.startswith("!")
        body = line[1:] if neg else line
        dir_only = body.endswith("/")
        core = body[:-1] if dir_only else body
        if "/" not in core:
            out.append(line)  # unanchored: matches at any depth, below cwd too
            continue
        segs = [s for s in core.lstrip("/").split("/") if s != ""]
        rewritten = _rebase_segments(segs, prefix)
        if rewritten is None:
            continue
        if rewritten == "*":
            if not neg:  # cwd lies inside an ignored directory: everything is ignored
                out.append("*")
            continue
        out.append(("!" if neg else "") + rewritten + ("/" if dir_only else ""))
    return out


def _rebase_segments(segs: list[str], prefix: list[str]) -> str | None:
    """The anchored pattern ``segs`` seen from below ``prefix``; None if it cannot match
    there, ``"*"`` if it matches cwd or a directory above it."""
    j = 0
    for part in prefix:
        if j == len(segs):
            return "*"  # the pattern named a directory above cwd
        seg = segs[j]
        if seg == "**":
            rest = segs[j + 1 :]
            return "**/" + "/".join(rest) if rest else "*"
        if not fnmatchcase(part, seg):
            return None
        j += 1
    rest = segs[j:]
    if not rest:
        return "*"
    return "/" + "/".join(rest)


def _global_excludes_path() -> str | None:
    """The user's global excludes file: ``core.excludesFile`` of their global config, else
    git's default ``$XDG_CONFIG_HOME/git/ignore``."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    for cfg in (os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")):
        value = _config_value(cfg, "core", "excludesfile")
        if value:
            return os.path.expanduser(value)
    return os.path.join(xdg, "git", "ignore")


def _config_value(path: str, section: str, key: str) -> str | None:
    """A minimal reader of one ``[section] key = value`` of a git config file (the last
    one wins; includes and subsections are not followed)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read(1 << 20).splitlines()
    except OSError:
        return None
    found = None
    current = ""
    for line in lines:
        s = line.strip()
        if s.startswith("["):
            current = s[1:].split("]", 1)[0].strip().lower()
            continue
        if current != section or "=" not in s or s.startswith(("#", ";")):
            continue
        k, v = s.split("=", 1)
        if k.strip().lower() == key:
            v = v.strip()
            if len(v) >= 2 and v[0] == v[-1] == '"':
                v = v[1:-1]
            found = v
    return found


def exclude_sources(cwd: str) -> list[tuple[str, list[str]]]:
    """``(file, prefix)`` pairs of the user's ignore files that apply to ``cwd`` from
    outside it, lowest precedence first.  Empty when cwd is not in a git repository."""
    found = find_git_dir(cwd)
    if found is None:
        return []
    git_dir, root = found
    real_root, real_cwd = os.path.realpath(root), os.path.realpath(cwd)
    rel = os.path.relpath(real_cwd, real_root)
    prefix = [] if rel == os.curdir else rel.split(os.sep)
    if prefix and prefix[0] == os.pardir:
        return []
    out: list[tuple[str, list[str]]] = []
    glob = _global_excludes_path()
    if glob:
        out.append((glob, prefix))
    out.append((os.path.join(common_dir(git_dir), "info", "exclude"), prefix))
    d = real_root
    for i in range(len(prefix)):
        out.append((os.path.join(d, ".gitignore"), prefix[i:]))
        d = os.path.join(d, prefix[i])
    return out


def signature(sources: list[tuple[str, list[str]]]) -> tuple:
    """What changes when any source changes (paths, sizes, mtimes)."""
    sig = []
    for path, prefix in sources:
        try:
            st = os.stat(path)
            sig.append((path, tuple(prefix), st.st_size, st.st_mtime_ns))
        except OSError:
            sig.append((path, tuple(prefix), -1, -1))
    return tuple(sig)


def render(sources: list[tuple[str, list[str]]]) -> str:
    """The shadow repository's ``info/exclude`` text."""
    parts = [HEADER]
    for path, prefix in sources:
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                text = f.read(1 << 20)
        except OSError:
            continue
        lines = rebase(text, prefix)
        if lines:
            parts.append(f"# from {path}\n" + "\n".join(lines) + "\n")
    return "".join(parts)
