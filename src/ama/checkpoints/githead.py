"""Read a repository's HEAD from its files, without starting git.

Finds ``.git`` in ``cwd`` or the nearest parent: a directory, or a file ``gitdir: <path>``
(worktrees, submodules).  ``HEAD`` is either a commit id (detached) or ``ref: refs/heads/x``,
resolved through loose refs (in the worktree's git dir, then the common dir named by its
``commondir`` file) and ``packed-refs``.  Returns None outside a repository, for an unborn
branch, or for storage this reader does not understand (reftable).
"""

from __future__ import annotations

import os

_MAX_FILE = 1 << 16


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(_MAX_FILE).decode("utf-8", "replace")
    except OSError:
        return None


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def find_git_dir(cwd: str) -> tuple[str, str] | None:
    """``(git_dir, work_tree_root)`` of the repository containing ``cwd``, or None."""
    d = os.path.abspath(cwd)
    while True:
        dot = os.path.join(d, ".git")
        if os.path.isdir(dot):
            return dot, d
        if os.path.isfile(dot):
            text = _read(dot) or ""
            for line in text.splitlines():
                if line.startswith("gitdir:"):
                    target = line[len("gitdir:") :].strip()
                    if target:
                        return os.path.normpath(os.path.join(d, target)), d
            return None
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def common_dir(git_dir: str) -> str:
    """The shared git dir of a worktree (``commondir`` file), else ``git_dir`` itself."""
    text = _read(os.path.join(git_dir, "commondir"))
    if text and text.strip():
        return os.path.normpath(os.path.join(git_dir, text.strip()))
    return git_dir


def _packed(common: str, ref: str) -> str | None:
    text = _read_big(os.path.join(common, "packed-refs"))
    if not text:
        return None
    suffix = " " + ref
    for line in text.splitlines():
        if line.endswith(suffix) and not line.startswith(("#", "^")):
            oid = line[: -len(suffix)].strip()
            if _is_oid(oid):
                return oid
    return None


def _read_big(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return None


def _resolve(git_dir: str, common: str, ref: str, depth: int = 0) -> str | None:
    if depth > 5 or ".." in ref.split("/"):
        return None
    for base in (git_dir, common) if git_dir != common else (git_dir,):
        text = _read(os.path.join(base, ref))
        if text is None:
            continue
        value = text.strip()
        if value.startswith("ref:"):
            return _resolve(git_dir, common, value[4:].strip(), depth + 1)
        return value if _is_oid(value) else None
    return _packed(common, ref)


def read_git_head(cwd: str) -> dict | None:
    """``{head, branch?}`` of the repository containing ``cwd``, or None."""
    found = find_git_dir(cwd)
    if found is None:
        return None
    git_dir = found[0]
    text = _read(os.path.join(git_dir, "HEAD"))
    if text is None:
        return None
    value = text.strip()
    if _is_oid(value):
        return {"head": value}
    if not value.startswith("ref:"):
        return None
    ref = value[4:].strip()
    oid = _resolve(git_dir, common_dir(git_dir), ref)
    if oid is None:
        return None
    out: dict = {"head": oid}
    if ref.startswith("refs/heads/"):
        out["branch"] = ref[len("refs/heads/") :]
    return out
