"""``isolation: "worktree"``: a task works in a fresh git worktree of the parent's repository.

The worktree is ``<data dir>/worktrees/<taskId>`` on a new branch ``ama/task-<taskId>`` made
from the parent's ``HEAD``.  At the end ``changed`` says whether the child left uncommitted
changes or new commits there; nothing is merged: the parent (or the user) decides.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from ama.errors import AmaError

TIMEOUT_S = 60


def _git(cwd: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
    )


@dataclass(frozen=True)
class Worktree:
    path: str
    branch: str
    base: str  # the commit it started from

    def result(self) -> dict:
        """``{branch, changed, path, base}`` (``subagent_end.worktree`` has the first two)."""
        status = _git(self.path, "status", "--porcelain")
        head = _git(self.path, "rev-parse", "HEAD")
        changed = bool(status.stdout.strip()) or (head.returncode == 0 and head.stdout.strip() != self.base)
        return {"branch": self.branch, "changed": changed, "path": self.path, "base": self.base}


def create_worktree(cwd: str, data_dir: str, task_id: str) -> Worktree:
    """A new worktree of the repository containing ``cwd``; raises ``AmaError`` when ``cwd``
    is not in a git repository with a commit."""
    try:
        top = _git(cwd, "rev-parse", "--show-toplevel")
    except (OSError, subprocess.SubprocessError) as e:
        raise AmaError("invalid_arguments", f"isolation \"worktree\" needs git: {e}") from None
    if top.returncode != 0:
        raise AmaError("invalid_arguments", f'isolation "worktree" needs a git repository, and {cwd} is not in one')
    head = _git(cwd, "rev-parse", "HEAD")
    if head.returncode != 0:
        raise AmaError("invalid_arguments", f'isolation "worktree" needs a commit to start from; the repository at {top.stdout.strip()} has none')
    root = os.path.join(data_dir, "worktrees")
    os.makedirs(root, exist_ok=True)
    path = os.path.join(root, task_id)
    branch = f"ama/task-{task_id}"
    made = _git(cwd, "worktree", "add", "-b", branch, path, "HEAD")
    if made.returncode != 0:
        raise AmaError("task_failed", f"git worktree add failed: {made.stderr.strip() or made.stdout.strip()}")
    rel = os.path.relpath(os.path.abspath(cwd), top.stdout.strip())
    sub = path if rel == "." else os.path.join(path, rel)
    return Worktree(sub, branch, head.stdout.strip())


__all__ = ["Worktree", "create_worktree"]
