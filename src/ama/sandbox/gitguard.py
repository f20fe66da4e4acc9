"""The workspace's git repository, as a sandboxed command must not change it.

Whatever git reads from its git directory can run code later, when git runs *outside* the
sandbox: hooks, ``core.hooksPath`` / ``core.fsmonitor`` / aliases in a config, and the
pointers that send git to another git directory (``commondir``, a ``gitdir:`` file).  A
sandboxed command could plant any of them without touching ``hooks/`` or ``config``:
``git init`` in a workspace without ``.git``, ``echo ../copy > .git/commondir`` after copying
``.git`` with its own hooks, or rewriting a worktree's ``gitdir:`` pointer file.

So the workspace's git directory is read-only inside the sandbox, as a whole:

====================  ========================================================================
``.git`` is           read-only in the sandbox
====================  ========================================================================
a directory           ``.git`` (hooks, config, commondir, info, modules: nothing can be added)
a ``gitdir:`` file    the pointer file, the git directory it names, and that directory's
                      ``commondir`` target (a linked worktree or a submodule)
a symlink             its target (the link itself can be replaced: a known limitation)
missing               a placeholder: bwrap mounts an empty directory read-only (so ``git init``
                      and ``mkdir .git`` fail); SBPL refuses creating the path
====================  ========================================================================

Reading the repository works (``git status``, ``log``, ``diff``); commands that write it
(``add``, ``commit``, ``checkout``, ``stash``) fail with "Read-only file system" and need
``sandbox: false``.  An empty ``.git`` directory is no repository to git, outside or inside.

``protected_ancestors`` lists the directories between a writable root and a protected path:
bwrap binds them onto themselves, because a directory that holds a mount can still be
renamed, and a renamed parent would leave the protected path free to be made again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

_MAX_POINTER_BYTES = 4096


def _read_small(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            data = f.read(_MAX_POINTER_BYTES)
    except OSError:
        return None
    text = data.decode("utf-8", "replace").strip()
    return text or None


def read_gitdir_pointer(path: str) -> str | None:
    """The realpath a ``gitdir: <path>`` file names (relative to the file's directory)."""
    text = _read_small(path)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = text[len("gitdir:") :].strip()
    if not target:
        return None
    return os.path.realpath(os.path.join(os.path.dirname(path), target))


def read_commondir(gitdir: str) -> str | None:
    """The realpath ``<gitdir>/commondir`` names (relative to ``gitdir``), if any."""
    text = _read_small(os.path.join(gitdir, "commondir"))
    if text is None:
        return None
    return os.path.realpath(os.path.join(gitdir, text.splitlines()[0].strip()))


def git_read_only(workspace: str) -> list[str]:
    """Realpaths to keep read-only for the repository of ``workspace`` (a realpath).

    Always starts with ``<workspace>/.git`` itself (or its symlink target), existing or not;
    then the git directory a pointer names and its ``commondir`` target, when they exist.
    """
    dot = os.path.join(workspace, ".git")
    out = [os.path.realpath(dot)]
    gitdir: str | None = None
    if os.path.isdir(dot):
        gitdir = out[0]
    elif os.path.isfile(dot):
        gitdir = read_gitdir_pointer(dot)
        if gitdir is not None and os.path.isdir(gitdir):
            out.append(gitdir)
        else:
            gitdir = None
    if gitdir is not None:
        common = read_commondir(gitdir)
        if common is not None and os.path.isdir(common):
            out.append(common)
    return list(dict.fromkeys(out))


def _inside(parent: str, path: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def protected_ancestors(protected: Iterable[str], writable: Iterable[str]) -> list[str]:
    """Directories strictly between the deepest writable root holding a protected path and
    that path (realpaths, parents first), except those inside a protected path themselves."""
    protected = list(dict.fromkeys(protected))
    roots = sorted(set(writable), key=len, reverse=True)
    out: list[str] = []
    for path in protected:
        root = next((r for r in roots if _inside(r, path) and r != path), None)
        if root is None:
            continue
        parent = os.path.dirname(path)
        chain = []
        while parent != root and _inside(root, parent) and parent != "/":
            chain.append(parent)
            parent = os.path.dirname(parent)
        out.extend(reversed(chain))
    return [
        a for a in dict.fromkeys(out) if not any(_inside(p, a) for p in protected)
    ]
