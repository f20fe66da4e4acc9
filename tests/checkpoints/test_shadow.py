"""Shadow git mode (docs/rewind-plan.md §6) in real temporary repositories."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ama.checkpoints import CheckpointTracker, shadow_repo_dir
from ama.checkpoints.ignores import rebase
from ama.session.store import Session
from tests.checkpoints.helpers import ama_write, dir_fingerprint, git, put, read, tree, turn

ORIGINAL = {
    ".gitignore": b"build/\n*.log\n",
    "README.md": b"# project\n",
    "src/a.py": b"a = 1\n",
    "src/b.py": b"b = 2\n",
    "tool.sh": b"#!/bin/sh\necho hi\n",
    "crlf.txt": b"one\r\ntwo\nthree\r\n",
}
IGNORED = {"build/out.o": b"\x00obj", "debug.log": b"log 1\n", "secret.txt": b"from info/exclude\n"}


@pytest.fixture
def repo(ws: Path) -> Path:
    """ws as the user's repository: committed files, ignored files, an info/exclude rule."""
    for rel, data in {**ORIGINAL, **IGNORED}.items():
        put(ws / rel, data)
    os.chmod(ws / "tool.sh", 0o755)
    git(ws, "init", "-q", "-b", "main")
    with open(ws / ".git" / "info" / "exclude", "a") as f:
        f.write("secret.txt\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "initial")
    return ws


def shadow_files(data_dir: Path, cwd: Path, commit: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_DIR=shadow_repo_dir(data_dir, str(cwd)), GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull
    )
    out = subprocess.run(
        ["git", "ls-tree", "-r", "-z", "--name-only", commit], env=env, capture_output=True, check=True
    ).stdout
    return sorted(p.decode() for p in out.split(b"\0") if p)


def test_bash_changes_renames_and_deletes_are_rewound(session, make_tracker, repo, ama_home, notices):
    tracker = make_tracker(mode="shadow-git")
    user_git = dir_fingerprint(repo / ".git")
    u1 = turn(session, tracker)
    commit = tracker.checkpoints()[u1].shadow_commit
    assert commit and notices == []
    assert shadow_files(ama_home, repo, commit) == sorted(ORIGINAL)
    # a turn of bash-style work: nothing goes through edit/write
    put(repo / "src" / "a.py", "a = 100\n")
    os.rename(repo / "src" / "b.py", repo / "src" / "c.py")
    os.unlink(repo / "README.md")
    put(repo / "new" / "file.txt", "created\n")
    os.chmod(repo / "tool.sh", 0o644)
    put(repo / "crlf.txt", "changed\n")
    put(repo / "build" / "out.o", b"\x00rebuilt")
    put(repo / "build" / "more.o", b"\x00new")
    put(repo / "debug.log", "log 2\n")
    put(repo / "secret.txt", "rotated\n")
    changed = tree(repo)
    u2 = turn(session, tracker)
    assert tracker.checkpoints()[u2].shadow_commit not in (None, commit)

    res = tracker.restore(u1)
    assert res.restored == ["README.md", "crlf.txt", "src/a.py", "src/b.py", "tool.sh"]
    assert res.deleted == ["new/file.txt", "src/c.py"]
    assert (res.conflicts, res.skipped, res.failed) == ([], [], [])
    assert (res.insertions, res.deletions) == (6, 4)  # crlf.txt: +3 -1
    now = tree(repo)
    assert {k: v for k, v in now.items() if k in ORIGINAL or k.startswith(("new/", "src/"))} == ORIGINAL
    assert os.stat(repo / "tool.sh").st_mode & 0o777 == 0o755
    for rel in ("build/out.o", "build/more.o", "debug.log", "secret.txt"):  # ignored: untouched
        assert now[rel] == changed[rel]
    assert dir_fingerprint(repo / ".git") == user_git

    # and forward again: the disk now holds what the restore wrote, so no conflict
    res = tracker.restore(u2)
    assert res.conflicts == [] and tree(repo) == changed
    assert dir_fingerprint(repo / ".git") == user_git


def test_dry_run_changes_nothing(session, make_tracker, repo):
    tracker = make_tracker(mode="shadow-git")
    u1 = turn(session, tracker)
    put(repo / "src" / "a.py", "a = 2\nmore\n")
    turn(session, tracker)
    before = dir_fingerprint(repo)
    res = tracker.restore(u1, dry_run=True)
    assert (res.restored, res.insertions, res.deletions) == (["src/a.py"], 1, 2)
    assert dir_fingerprint(repo) == before
    assert tracker.differing_files(u1) == ["src/a.py"]


def test_changes_after_the_last_snapshot_are_conflicts(session, make_tracker, repo):
    tracker = make_tracker(mode="shadow-git")
    u1 = turn(session, tracker)
    put(repo / "src" / "a.py", "snapshotted\n")
    turn(session, tracker)
    put(repo / "src" / "a.py", "typed by the user just now\n")
    put(repo / "fresh.txt", "brand new, never snapshotted\n")
    ama_write(tracker, repo / "src" / "b.py", "b = 'by ama'\n")
    res = tracker.restore(u1)
    assert res.conflicts == ["fresh.txt", "src/a.py"]
    assert res.restored == ["src/b.py"]
    assert read(repo / "fresh.txt") == "brand new, never snapshotted\n"
    res = tracker.restore(u1, on_conflict="overwrite")
    assert (res.restored, res.deleted) == (["src/a.py"], ["fresh.txt"])
    assert read(repo / "src" / "a.py") == "a = 1\n"


def test_symlinks_are_not_restored_and_links_in_the_way_are_skipped(session, make_tracker, repo, tmp_path):
    tracker = make_tracker(mode="shadow-git")
    os.symlink("README.md", repo / "link.md")
    u1 = turn(session, tracker)
    os.unlink(repo / "link.md")
    put(tmp_path / "outside.py", "outside\n")
    os.unlink(repo / "src" / "a.py")
    os.symlink(tmp_path / "outside.py", repo / "src" / "a.py")
    turn(session, tracker)
    res = tracker.restore(u1, on_conflict="overwrite")
    assert res.skipped == [
        {"path": "link.md", "reason": "symlink"},
        {"path": "src/a.py", "reason": "symlink"},
    ]
    assert read(tmp_path / "outside.py") == "outside\n"


def test_files_that_became_ignored_are_left_alone(session, make_tracker, repo):
    tracker = make_tracker(mode="shadow-git")
    u1 = turn(session, tracker)
    put(repo / "src" / "a.py", "changed\n")
    with open(repo / ".gitignore", "a") as f:
        f.write("src/a.py\n")
    u2 = turn(session, tracker)
    assert "src/a.py" not in shadow_files(tracker.data_dir, repo, tracker.checkpoints()[u2].shadow_commit)
    res = tracker.restore(u1)
    assert res.restored == [".gitignore"] and read(repo / "src" / "a.py") == "changed\n"


def test_ignored_files_touched_by_edit_and_write_use_their_tools_records(
    session, make_tracker, repo, tmp_path
):
    tracker = make_tracker(mode="shadow-git")
    u1 = turn(session, tracker)
    ama_write(tracker, repo / "debug.log", "written by ama\n")
    ama_write(tracker, tmp_path / "outside.cfg", "x\n")
    res = tracker.restore(u1)
    assert res.restored == ["debug.log"] and res.deleted == [str(tmp_path / "outside.cfg")]
    assert read(repo / "debug.log") == "log 1\n"


def test_a_deleted_shadow_repository_falls_back_to_tools_records(session, make_tracker, repo, ama_home):
    import shutil

    tracker = make_tracker(mode="shadow-git")
    u1 = turn(session, tracker)
    ama_write(tracker, repo / "src" / "a.py", "by ama\n")
    put(repo / "src" / "b.py", "by bash\n")
    shutil.rmtree(shadow_repo_dir(ama_home, str(repo)))
    res = tracker.restore(u1)
    assert res.restored == ["src/a.py"]  # the bash change is not known to tools records
    assert read(repo / "src" / "b.py") == "by bash\n"


def test_the_users_parent_ignores_and_excludes_apply_to_a_subdirectory(sessions_dir, ama_home, tmp_path):
    root = tmp_path / "mono"
    put(root / ".gitignore", "/pkg/generated/\n*.tmp\n/top-only.txt\npkg/*.cache\n")
    put(root / "pkg" / "src.py", "s\n")
    put(root / "pkg" / "generated" / "g.py", "g\n")
    put(root / "pkg" / "x.tmp", "t\n")
    put(root / "pkg" / "top-only.txt", "kept: the rule is anchored at the root\n")
    put(root / "pkg" / "data.cache", "c\n")
    put(root / "pkg" / "private.key", "k\n")
    git(root, "init", "-q")
    with open(root / ".git" / "info" / "exclude", "a") as f:
        f.write("*.key\n")
    cwd = root / "pkg"
    s = Session.create(str(cwd), sessions_dir)
    t = CheckpointTracker(session=s, cwd=str(cwd), data_dir=str(ama_home), mode="shadow-git")
    uid = turn(s, t)
    assert shadow_files(ama_home, cwd, t.checkpoints()[uid].shadow_commit) == ["src.py", "top-only.txt"]
    s.close()


def test_user_git_config_filters_and_line_endings_do_not_apply(
    session, make_tracker, repo, tmp_path, monkeypatch
):
    home = tmp_path / "home"
    marker = tmp_path / "filter-ran"
    put(
        home / ".gitconfig",
        f'[core]\n\tautocrlf = true\n[filter "mark"]\n\tclean = touch {marker}; cat\n\tsmudge = cat\n',
    )
    monkeypatch.setenv("HOME", str(home))
    put(repo / ".gitattributes", "* text=auto eol=crlf\n*.dat filter=mark\n")
    put(repo / "blob.dat", b"raw\r\nbytes\n")
    tracker = make_tracker(mode="shadow-git")
    u1 = turn(session, tracker)
    put(repo / "blob.dat", "other\n")
    put(repo / "crlf.txt", "lf only\n")
    turn(session, tracker)
    tracker.restore(u1)
    with open(repo / "blob.dat", "rb") as f:
        assert f.read() == b"raw\r\nbytes\n"
    with open(repo / "crlf.txt", "rb") as f:
        assert f.read() == ORIGINAL["crlf.txt"]
    assert not marker.exists()


def test_too_many_files_downgrades_once(session, make_tracker, repo, notices):
    tracker = make_tracker(mode="shadow-git", shadow_max_files=3)
    u1 = turn(session, tracker)
    ama_write(tracker, repo / "src" / "a.py", "edited\n")
    u2 = turn(session, tracker)
    assert tracker.mode == "tools"
    assert len(notices) == 1 and "more than 3 files" in notices[0]
    cps = tracker.checkpoints()
    assert cps[u1].shadow_commit is None and cps[u2].shadow_commit is None
    assert tracker.restore(u1).restored == ["src/a.py"]


def test_a_slow_snapshot_keeps_its_commit_and_downgrades(session, make_tracker, repo, notices):
    tracker = make_tracker(mode="shadow-git", shadow_max_seconds=0)
    u1 = turn(session, tracker)  # builds the index: hashing everything once is not held against it
    assert notices == []
    u2 = turn(session, tracker)
    assert len(notices) == 1 and "took" in notices[0]
    u3 = turn(session, tracker)
    cps = tracker.checkpoints()
    assert cps[u1].shadow_commit and cps[u2].shadow_commit and cps[u3].shadow_commit is None
    assert tracker.mode == "tools"


def test_no_git_on_path_means_tools_mode_with_one_notice(
    session, make_tracker, repo, tmp_path, monkeypatch, notices
):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    tracker = make_tracker(mode="shadow-git")
    u1 = turn(session, tracker)
    ama_write(tracker, repo / "src" / "a.py", "edited\n")
    turn(session, tracker)
    assert tracker.mode == "tools"
    assert len(notices) == 1 and "git was not found" in notices[0]
    assert tracker.restore(u1).restored == ["src/a.py"]


def test_home_directory_is_not_snapshotted(session, make_tracker, repo, monkeypatch, notices):
    monkeypatch.setenv("HOME", str(repo))
    tracker = make_tracker(mode="shadow-git")
    uid = turn(session, tracker)
    assert tracker.checkpoints()[uid].shadow_commit is None
    assert len(notices) == 1 and "home or root directory" in notices[0]


def test_sessions_of_one_workspace_share_the_repository(session, make_tracker, repo, sessions_dir, ama_home):
    t1 = make_tracker(mode="shadow-git")
    u1 = turn(session, t1)
    s2 = Session.create(str(repo), sessions_dir)
    t2 = CheckpointTracker(session=s2, cwd=str(repo), data_dir=str(ama_home), mode="shadow-git")
    u2 = turn(s2, t2)
    c1, c2 = t1.checkpoints()[u1].shadow_commit, t2.checkpoints()[u2].shadow_commit
    repo_dir = shadow_repo_dir(ama_home, str(repo))
    assert shadow_files(ama_home, repo, c1) == shadow_files(ama_home, repo, c2)
    indexes = [n for n in os.listdir(repo_dir) if n.startswith("index-")]
    assert len(indexes) == 2  # one per tracker
    refs = sorted(os.listdir(os.path.join(repo_dir, "refs", "ama")))
    assert refs == sorted([session.id, s2.id])
    s2.close()


def test_rebase_of_ignore_patterns():
    text = "# c\n\n*.o\n/build/\npkg/gen/\n!pkg/keep.txt\npkg/*/deep\nother/x\n**/logs\npkg/**\n/pkg\n"
    assert rebase(text, []) == [
        "*.o",
        "/build/",
        "pkg/gen/",
        "!pkg/keep.txt",
        "pkg/*/deep",
        "other/x",
        "**/logs",
        "pkg/**",
        "/pkg",
    ]
    assert rebase(text, ["pkg"]) == ["*.o", "/gen/", "!/keep.txt", "/*/deep", "**/logs", "/**", "*"]
    assert rebase("a/b/c\n!a/*/c\n", ["a", "b"]) == ["/c", "!/c"]
    assert rebase("a/b\n", ["a", "b", "c"]) == ["*"]  # cwd is inside an ignored directory


def test_indexes_of_dead_processes_are_removed(session, make_tracker, repo, ama_home):
    import subprocess

    dead = subprocess.Popen(["true"])
    dead.wait()
    repo_dir = shadow_repo_dir(ama_home, str(repo))
    os.makedirs(repo_dir)
    stale = os.path.join(repo_dir, f"index-{dead.pid}-0badc0de")
    put(stale, "stale index")
    tracker = make_tracker(mode="shadow-git")
    turn(session, tracker)
    assert not os.path.exists(stale)
