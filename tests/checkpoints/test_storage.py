"""The blob store, reading git HEAD from files, and the line counter."""

from __future__ import annotations

import hashlib
import os

from ama.checkpoints import BlobStore, read_git_head
from ama.checkpoints.linediff import count_changes
from tests.checkpoints.helpers import git, put


def test_blobs_are_content_addressed_original_bytes(tmp_path):
    store = BlobStore(tmp_path)
    data = b"\xef\xbb\xbfline one\r\nline two\r\n\x00binary"
    sha = store.put(data)
    assert sha == hashlib.sha256(data).hexdigest()
    assert store.path(sha) == os.path.join(tmp_path, "file-history", "blobs", sha[:2], sha)
    with open(store.path(sha), "rb") as f:
        assert f.read() == data
    assert store.get(sha) == data
    assert os.stat(store.path(sha)).st_mode & 0o777 == 0o600
    assert os.listdir(os.path.dirname(store.path(sha))) == [sha]  # no temporary file left


def test_an_existing_blob_is_never_rewritten_only_touched(tmp_path):
    store = BlobStore(tmp_path)
    sha = store.put(b"hello")
    old = 1_000_000_000 * 10**9
    os.utime(store.path(sha), ns=(old, old))
    ino = os.stat(store.path(sha)).st_ino
    assert store.put(b"hello") == sha
    st = os.stat(store.path(sha))
    assert st.st_ino == ino and st.st_mtime_ns > old


def test_a_cut_short_blob_is_replaced(tmp_path):
    store = BlobStore(tmp_path)
    sha = store.put(b"complete content")
    with open(store.path(sha), "wb") as f:
        f.write(b"compl")
    assert store.get(sha) is None
    store.put(b"complete content")
    assert store.get(sha) == b"complete content"


def test_put_file_streams_and_get_checks_the_hash(tmp_path):
    store = BlobStore(tmp_path)
    src = tmp_path / "src.bin"
    src.write_bytes(os.urandom(3 << 20))
    sha = store.put_file(src)
    assert store.get(sha) == src.read_bytes()
    assert store.put_file(src) == sha
    assert sorted(os.listdir(store.root)) == [sha[:2]]
    assert store.get("0" * 64) is None
    assert store.get("../../etc/passwd") is None


def test_git_head_of_branch_detached_packed_and_worktree(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    assert read_git_head(str(repo)) is None
    git(repo, "init", "-q", "-b", "trunk")
    assert read_git_head(str(repo)) is None  # unborn branch
    put(repo / "a.txt", "1\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "one")
    head = git(repo, "rev-parse", "HEAD")
    (repo / "sub" / "dir").mkdir(parents=True)
    assert read_git_head(str(repo / "sub" / "dir")) == {"head": head, "branch": "trunk"}
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "trunk").exists()
    assert read_git_head(str(repo)) == {"head": head, "branch": "trunk"}
    git(repo, "checkout", "-q", "--detach")
    assert read_git_head(str(repo)) == {"head": head}
    git(repo, "checkout", "-q", "trunk")
    git(repo, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "wt"))
    put(tmp_path / "wt" / "b.txt", "2\n")
    git(tmp_path / "wt", "add", "b.txt")
    git(tmp_path / "wt", "commit", "-q", "-m", "two")
    wt_head = git(tmp_path / "wt", "rev-parse", "HEAD")
    assert (tmp_path / "wt" / ".git").is_file()
    assert read_git_head(str(tmp_path / "wt")) == {"head": wt_head, "branch": "feature"}
    assert read_git_head(str(repo)) == {"head": head, "branch": "trunk"}


def test_line_counts():
    assert count_changes(b"a\nb\nc\n", b"a\nB\nc\nd\n") == (2, 1)
    assert count_changes(b"", b"x\ny\n") == (2, 0)
    assert count_changes(b"x\n", b"") == (0, 1)
    assert count_changes(b"same\n", b"same\n") == (0, 0)
    assert count_changes(b"no newline", b"no newline\n") == (1, 1)
