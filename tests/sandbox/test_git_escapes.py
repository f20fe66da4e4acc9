"""Git-hook persistence, with real git and the real sandbox, as root and as an unprivileged user.

Each attack plants something inside the sandbox that git would run later, *outside* it; the
verdict is what the host's git does afterwards: a planted hook touches a marker file outside
the workspace when it runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ama.sandbox.gitguard import git_read_only, protected_ancestors

from .conftest import Box

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

HOOK = "#!/bin/sh\ntouch {marker}\n"


def host_git(box: Box, *args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """git on the host, as the box's user, the way the user would run it later."""
    box.own()
    argv = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", *args]
    return subprocess.run(
        box.as_user(argv),
        cwd=str(cwd or box.ws),
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(box.home), "GIT_CONFIG_NOSYSTEM": "1"},
        capture_output=True,
        text=True,
        check=check,
    )


def plant(marker: Path) -> str:
    """Shell text that writes an executable hook body to the file named by $1 (one argument)."""
    return f"printf '#!/bin/sh\\ntouch {marker}\\n'"


def test_git_init_in_a_workspace_without_git_cannot_plant_a_hook(box: Box):
    marker = box.outside / "pwned"
    cmd = (
        f"git init -q . ; mkdir -p .git/hooks; {plant(marker)} > .git/hooks/pre-commit; "
        "chmod +x .git/hooks/pre-commit; rm -rf .git; mv .git .git-x; git init -q --separate-git-dir=g2 ."
    )
    result = box.run(cmd)
    git = box.ws / ".git"
    # a placeholder: an empty directory, which git (outside too) does not take for a repository
    assert git.is_dir() and os.listdir(git) == [] and not (box.ws / "g2").exists()
    assert "Read-only file system" in result["output"] and result["hint"] is not None
    # later, outside: the user makes the repository and commits; nothing planted runs
    host_git(box, "init", "-q", ".")
    host_git(box, "commit", "-q", "--allow-empty", "-m", "x")
    assert not marker.exists()


def test_commondir_pointing_at_a_copied_git_dir_is_refused(box: Box):
    marker = box.outside / "pwned"
    host_git(box, "init", "-q", ".")
    host_git(box, "commit", "-q", "--allow-empty", "-m", "first")
    cmd = (
        f"cp -r .git copy && {plant(marker)} > copy/hooks/pre-commit && chmod +x copy/hooks/pre-commit && "
        f'echo "$PWD/copy" > .git/commondir; echo "$PWD/copy" > .git/commondir.tmp && mv .git/commondir.tmp .git/commondir'
    )
    result = box.run(cmd)
    assert (box.ws / "copy" / "hooks" / "pre-commit").exists()  # the copy itself is allowed
    assert not (box.ws / ".git" / "commondir").exists()
    assert "Read-only file system" in result["output"]
    host_git(box, "commit", "-q", "--allow-empty", "-m", "second")
    assert not marker.exists()


def test_worktree_pointer_file_and_its_git_dirs_are_read_only(box: Box):
    """A linked worktree: .git is a `gitdir:` file; its git dir and the common dir hold hooks."""
    marker = box.outside / "pwned"
    main = box.base / "main"
    main.mkdir()
    host_git(box, "init", "-q", ".", cwd=main)
    host_git(box, "commit", "-q", "--allow-empty", "-m", "first", cwd=main)
    shutil.rmtree(box.ws)
    host_git(box, "worktree", "add", "-q", str(box.ws), cwd=main)
    pointer = (box.ws / ".git").read_text()
    assert pointer.startswith("gitdir:")
    cmd = (
        f"cp -r {main}/.git evil && {plant(marker)} > evil/hooks/pre-commit && chmod +x evil/hooks/pre-commit; "
        'echo "gitdir: $PWD/evil" > .git; rm -f .git; mv .git .git-old; '
        f"{plant(marker)} > {main}/.git/hooks/pre-commit; "
        f"echo evil > {main}/.git/worktrees/{box.ws.name}/commondir"
    )
    result = box.run(cmd)
    assert (box.ws / ".git").read_text() == pointer and not (box.ws / ".git-old").exists()
    assert not (main / ".git" / "hooks" / "pre-commit").exists()
    assert "Read-only file system" in result["output"] or "Device or resource busy" in result["output"]
    host_git(box, "commit", "-q", "--allow-empty", "-m", "second")
    assert not marker.exists()


def test_worktree_git_dir_inside_the_workspace_is_protected_with_its_parents(box: Box):
    """The git dir a pointer names lies inside the workspace: it is read-only, and its
    parents cannot be renamed away (which would free its path to be made again)."""
    marker = box.outside / "pwned"
    store = box.ws / "store"
    store.mkdir()
    host_git(box, "init", "-q", "--separate-git-dir", str(store / "repo.git"), ".")
    host_git(box, "commit", "-q", "--allow-empty", "-m", "first")
    cmd = (
        "mv store store-old; mv store/repo.git store/r2; "
        f"{plant(marker)} > store/repo.git/hooks/pre-commit; chmod +x store/repo.git/hooks/pre-commit"
    )
    result = box.run(cmd)
    assert not (box.ws / "store-old").exists() and (store / "repo.git" / "HEAD").exists()
    assert not (store / "repo.git" / "hooks" / "pre-commit").exists()
    assert "Device or resource busy" in result["output"]
    host_git(box, "commit", "-q", "--allow-empty", "-m", "second")
    assert not marker.exists()


def test_git_reads_still_work_inside(box: Box):
    box.write(box.ws / "a.txt", "a\n")
    host_git(box, "init", "-q", ".")
    host_git(box, "add", "a.txt")
    host_git(box, "commit", "-q", "-m", "first")
    box.write(box.ws / "a.txt", "b\n")
    result = box.run("git log --oneline; git status --short; git diff --stat; git -c user.name=t -c user.email=t@e commit -qam x")
    assert "first" in result["output"] and "M a.txt" in result["output"]
    assert "Read-only file system" in result["output"]  # writing the repository needs sandbox:false
    assert "first" in host_git(box, "log", "-1", "--format=%s").stdout


# ---------------------------------------------------------------------------- pure


def test_git_read_only_resolves_pointers(tmp_path: Path):
    ws, main = tmp_path / "ws", tmp_path / "main"
    (main / ".git" / "worktrees" / "ws").mkdir(parents=True)
    ws.mkdir()
    (ws / ".git").write_text(f"gitdir: {main}/.git/worktrees/ws\n")
    (main / ".git" / "worktrees" / "ws" / "commondir").write_text("../..\n")
    assert git_read_only(str(ws)) == [str(ws / ".git"), str(main / ".git" / "worktrees" / "ws"), str(main / ".git")]
    # relative pointers are relative to the file's directory; a missing target is not listed
    (ws / ".git").write_text("gitdir: ../main/.git\n")
    assert git_read_only(str(ws)) == [str(ws / ".git"), str(main / ".git")]
    (ws / ".git").write_text("not a pointer\n")
    assert git_read_only(str(ws)) == [str(ws / ".git")]
    (ws / ".git").unlink()
    assert git_read_only(str(ws)) == [str(ws / ".git")]  # missing: still protected (placeholder)


def test_protected_ancestors_between_root_and_path():
    assert protected_ancestors(["/w/a/b/.git", "/w/.ama", "/elsewhere/x"], ["/w", "/t"]) == ["/w/a", "/w/a/b"]
    # an ancestor inside another protected path is never made writable again
    assert protected_ancestors(["/w/.git", "/w/.git/worktrees/x"], ["/w"]) == []
