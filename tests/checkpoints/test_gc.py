"""Backup clean-up (``ama sessions prune``) and the usage numbers for ``ama doctor``."""

from __future__ import annotations

import json
import os

from ama.checkpoints import BlobStore, CheckpointTracker, collect_garbage, register_sessions_dir, usage
from ama.session.store import Session
from ama.session.trash import trash_session
from tests.checkpoints.helpers import ama_write, put, turn

OLD = 3 * 86400  # seconds back


def age(path: str, seconds: float = OLD) -> None:
    t = os.stat(path).st_mtime - seconds
    os.utime(path, (t, t))


def session_with_blob(ws, sessions_dir, data_dir, content: str) -> tuple[Session, str]:
    s = Session.create(str(ws), sessions_dir)
    t = CheckpointTracker(session=s, cwd=str(ws), data_dir=str(data_dir))
    put(ws / "f.txt", content)
    uid = turn(s, t)
    ama_write(t, ws / "f.txt", "changed\n")
    blob = t.checkpoints()[uid].files["f.txt"].blob
    s.close()
    os.unlink(ws / "f.txt")
    return s, blob


def test_unreferenced_old_blobs_go_referenced_and_young_ones_stay(ws, ama_home, sessions_dir, tmp_path):
    store = BlobStore(ama_home)
    live, live_blob = session_with_blob(ws, sessions_dir, ama_home, "live\n")
    trashed, trashed_blob = session_with_blob(ws, sessions_dir, ama_home, "trashed\n")
    trash_session(str(sessions_dir), trashed.id)
    other_dir = tmp_path / "other-sessions"
    _other, other_blob = session_with_blob(ws, other_dir, ama_home, "other\n")  # registers other_dir
    orphan_old = store.put(b"nobody names me")
    orphan_young = store.put(b"nobody names me either, but I am new")
    for sha in (live_blob, trashed_blob, other_blob, orphan_old):
        age(store.path(sha))
    leftover = store.path(orphan_old) + ".tmp-99999-0"
    put(leftover, "half written")
    age(leftover)

    dry = collect_garbage(ama_home, [str(sessions_dir)], dry_run=True)
    assert (dry["removed"], dry["kept"], dry["dryRun"]) == (1, 4, True)
    assert dry["bytes"] == len(b"nobody names me") + len(b"half written")
    assert os.path.exists(store.path(orphan_old))

    res = collect_garbage(ama_home, [str(sessions_dir)])
    assert res["referenced"] == 3 and res["sessions"] == 3
    assert (res["removed"], res["kept"]) == (1, 4)
    assert not os.path.exists(store.path(orphan_old)) and not os.path.exists(leftover)
    for sha in (live_blob, trashed_blob, other_blob, orphan_young):
        assert store.get(sha) is not None
    assert live.id  # kept its blob


def test_registered_dirs_that_vanished_are_dropped(ama_home, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    register_sessions_dir(ama_home, gone)
    register_sessions_dir(ama_home, gone)
    register_sessions_dir(ama_home, ama_home / "sessions")  # the default is never listed
    with open(ama_home / "file-history" / "roots.json") as f:
        assert json.load(f)["sessionsDirs"] == [str(gone)]
    gone.rmdir()
    assert collect_garbage(ama_home, [])["missingDirs"] == [str(gone)]
    with open(ama_home / "file-history" / "roots.json") as f:
        assert json.load(f)["sessionsDirs"] == []


def test_usage_counts_blobs_and_shadow_repos(ama_home):
    assert usage(ama_home) == {
        "blobs": 0,
        "blobBytes": 0,
        "shadowRepos": 0,
        "shadowBytes": 0,
        "path": str(ama_home / "file-history"),
    }
    store = BlobStore(ama_home)
    store.put(b"12345")
    store.put(b"678")
    repo = ama_home / "file-history" / "shadow" / "0123456789abcdef"
    repo.mkdir(parents=True)
    (repo / "HEAD").write_text("ref: refs/heads/main\n")
    u = usage(ama_home)
    assert (u["blobs"], u["blobBytes"], u["shadowRepos"], u["shadowBytes"]) == (2, 8, 1, 21)


def prune(*argv: str, capsys) -> str:
    from ama.cli.sessions import build_parser

    args = build_parser("ama sessions").parse_args(["prune", *argv])
    assert args.func(args) == 0
    return capsys.readouterr().out


def test_sessions_prune_collects_blobs(ws, ama_home, sessions_dir, capsys):
    store = BlobStore(ama_home)
    _s, kept = session_with_blob(ws, sessions_dir, ama_home, "kept\n")
    orphan = store.put(b"orphan")
    age(store.path(orphan))
    age(store.path(kept))
    fh = json.loads(prune("--dry-run", "--json", capsys=capsys))["fileHistory"]
    assert (fh["removed"], fh["bytes"], fh["dryRun"]) == (1, 6, True)
    assert store.get(orphan) is not None
    out = prune(capsys=capsys)
    assert "deleted 1 unreferenced backup blob(s), 6 bytes; 1 kept" in out
    assert store.get(orphan) is None and store.get(kept) is not None


def test_an_unreadable_session_file_stops_the_sweep(ws, ama_home, sessions_dir, tmp_path):
    """A session file that is listed but cannot be read may name any blob: delete nothing."""
    store = BlobStore(ama_home)
    orphan = store.put(b"maybe named by the unreadable session")
    age(store.path(orphan))
    # a session kept on a disk that is not mounted now: the link's target is missing
    os.symlink(tmp_path / "unmounted" / "s.jsonl", sessions_dir / "elsewhere.jsonl")
    loop = sessions_dir / "sub" / "loop.jsonl"
    loop.parent.mkdir()
    os.symlink(loop, loop)  # ELOOP: exists as a name, cannot be opened
    res = collect_garbage(ama_home, [str(sessions_dir)])
    assert res["removed"] == 0 and res["bytes"] == 0 and res["kept"] == 1
    assert sorted(res["unreadable"]) == sorted([str(sessions_dir / "elsewhere.jsonl"), str(loop)])
    assert store.get(orphan) is not None
    os.unlink(loop)
    os.unlink(sessions_dir / "elsewhere.jsonl")
    res = collect_garbage(ama_home, [str(sessions_dir)])
    assert (res["removed"], res["unreadable"]) == (1, [])


def test_special_files_named_like_sessions_are_skipped_unopened(ama_home, sessions_dir):
    os.mkfifo(sessions_dir / "pipe.jsonl")  # opening it for reading would block for ever
    (sessions_dir / "dir.jsonl").mkdir()
    store = BlobStore(ama_home)
    orphan = store.put(b"orphan")
    age(store.path(orphan))
    res = collect_garbage(ama_home, [str(sessions_dir)])
    assert (res["removed"], res["unreadable"], res["sessions"]) == (1, [], 1)  # the FIFO is not listed
