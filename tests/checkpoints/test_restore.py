"""Restoring code (docs/rewind-plan.md §3.2): every outcome and every safety check."""

from __future__ import annotations

import os
import shutil

import pytest

from ama.checkpoints import BlobStore, CheckpointTracker
from ama.errors import AmaError
from ama.session.store import Session
from ama.tools import ReadFiles
from tests.checkpoints.helpers import (
    ama_write,
    dir_fingerprint,
    make_unwritable,
    make_writable,
    put,
    read,
    turn,
)


def test_overwrite_restores_content_and_mode(session, tracker, ws):
    put(ws / "a.sh", "echo one\n")
    os.chmod(ws / "a.sh", 0o755)
    uid = turn(session, tracker)
    ama_write(tracker, ws / "a.sh", "echo two\necho three\n")
    os.chmod(ws / "a.sh", 0o600)
    res = tracker.restore(uid)
    assert res.to_json() == {
        "restored": ["a.sh"],
        "deleted": [],
        "conflicts": [],
        "skipped": [],
        "failed": [],
        "insertions": 1,
        "deletions": 2,
        "dryRun": False,
    }
    assert read(ws / "a.sh") == "echo one\n"
    assert os.stat(ws / "a.sh").st_mode & 0o777 == 0o755


def test_restore_keeps_the_inode(session, tracker, ws):
    put(ws / "a.txt", "one\n")
    ino = os.stat(ws / "a.txt").st_ino
    uid = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "two\n")
    tracker.restore(uid)
    assert os.stat(ws / "a.txt").st_ino == ino


def test_a_file_created_later_is_deleted(session, tracker, ws):
    uid = turn(session, tracker)
    ama_write(tracker, ws / "new" / "made.py", "a\nb\n")
    res = tracker.restore(uid)
    assert (res.deleted, res.restored, res.deletions, res.insertions) == (["new/made.py"], [], 2, 0)
    assert not (ws / "new" / "made.py").exists()


def test_a_deleted_file_is_recreated_with_its_parents(session, tracker, ws):
    put(ws / "pkg" / "deep" / "mod.py", "x = 1\n")
    os.chmod(ws / "pkg" / "deep" / "mod.py", 0o640)
    uid = turn(session, tracker)
    ama_write(tracker, ws / "pkg" / "deep" / "mod.py", "x = 2\n")
    shutil.rmtree(ws / "pkg")  # e.g. by bash
    res = tracker.restore(uid)
    assert (res.restored, res.conflicts, res.insertions) == (["pkg/deep/mod.py"], [], 1)
    assert read(ws / "pkg" / "deep" / "mod.py") == "x = 1\n"
    assert os.stat(ws / "pkg" / "deep" / "mod.py").st_mode & 0o777 == 0o640


def test_unchanged_files_are_not_counted(session, tracker, ws):
    put(ws / "a.txt", "same\n")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "same\n")
    res = tracker.restore(uid)
    assert res.to_json()["restored"] == [] and res.changed == 0


def test_a_conflict_is_skipped_by_default_and_overwritten_on_request(session, tracker, ws):
    put(ws / "a.txt", "v0\n")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "v1 by ama\n")
    put(ws / "a.txt", "v2 by the user\n")  # neither what ama wrote nor what was recorded
    res = tracker.restore(uid)
    assert (res.conflicts, res.restored) == (["a.txt"], [])
    assert read(ws / "a.txt") == "v2 by the user\n"
    res = tracker.restore(uid, on_conflict="overwrite")
    assert (res.conflicts, res.restored) == ([], ["a.txt"])
    assert read(ws / "a.txt") == "v0\n"


def test_content_recorded_by_the_latest_checkpoint_is_not_a_conflict(session, tracker, ws):
    put(ws / "a.txt", "v0\n")
    u1 = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "v1\n")
    put(ws / "a.txt", "v1 + bash\n")
    turn(session, tracker)  # records "v1 + bash"
    res = tracker.restore(u1)
    assert res.restored == ["a.txt"] and read(ws / "a.txt") == "v0\n"


def test_after_resuming_an_unrecorded_ama_write_is_a_conflict(session, tracker, ws, ama_home):
    put(ws / "a.txt", "v0\n")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "v1\n")  # lastWritten lives only in this process
    path = session.path
    session.close()
    resumed = Session.open(path)
    try:
        t2 = CheckpointTracker(session=resumed, cwd=str(ws), data_dir=str(ama_home))
        assert t2.restore(uid).conflicts == ["a.txt"]
        assert t2.restore(uid, on_conflict="overwrite").restored == ["a.txt"]
    finally:
        resumed.close()


def test_restored_content_is_known_afterwards(session, tracker, ws):
    put(ws / "a.txt", "v0\n")
    u1 = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "v1\n")
    u2 = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "v2\n")
    assert tracker.restore(u1).restored == ["a.txt"]
    res = tracker.restore(u2)  # the disk holds what the restore wrote: no conflict
    assert (res.restored, res.conflicts) == (["a.txt"], [])
    assert read(ws / "a.txt") == "v1\n"


def test_symlink_is_skipped(session, tracker, ws, tmp_path):
    put(ws / "a.txt", "v0\n")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "v1\n")
    put(tmp_path / "precious.txt", "do not touch\n")
    os.unlink(ws / "a.txt")
    os.symlink(tmp_path / "precious.txt", ws / "a.txt")
    res = tracker.restore(uid, on_conflict="overwrite")
    assert res.skipped == [{"path": "a.txt", "reason": "symlink"}]
    assert read(tmp_path / "precious.txt") == "do not touch\n"
    assert os.path.islink(ws / "a.txt")


def test_hardlink_is_skipped(session, tracker, ws, tmp_path):
    put(ws / "a.txt", "v0\n")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "v1\n")
    os.link(ws / "a.txt", tmp_path / "other-name.txt")
    res = tracker.restore(uid)
    assert res.skipped == [{"path": "a.txt", "reason": "hardlink"}]
    assert read(tmp_path / "other-name.txt") == "v1\n"


def test_a_created_file_with_a_second_link_is_not_deleted(session, tracker, ws, tmp_path):
    uid = turn(session, tracker)
    ama_write(tracker, ws / "new.txt", "n\n")
    os.link(ws / "new.txt", tmp_path / "keep.txt")
    res = tracker.restore(uid)
    assert res.skipped == [{"path": "new.txt", "reason": "hardlink"}] and res.deleted == []
    assert (ws / "new.txt").exists()


def test_a_moved_parent_directory_is_skipped(session, tracker, ws, tmp_path):
    put(ws / "src" / "a.txt", "v0\n")
    put(ws / "src" / "b.txt", "b0\n")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "src" / "a.txt", "v1\n")
    ama_write(tracker, ws / "src" / "b.txt", "b1\n")
    # the directory moved elsewhere and a link now stands in its place
    os.rename(ws / "src", tmp_path / "moved")
    os.symlink(tmp_path / "moved", ws / "src")
    res = tracker.restore(uid, on_conflict="overwrite")
    assert res.skipped == [
        {"path": "src/a.txt", "reason": "parent_moved"},
        {"path": "src/b.txt", "reason": "parent_moved"},
    ]
    assert read(tmp_path / "moved" / "a.txt") == "v1\n"


def test_a_missing_file_under_a_relinked_parent_is_not_created(session, tracker, ws, tmp_path):
    put(ws / "src" / "a.txt", "v0\n")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "src" / "a.txt", "v1\n")
    shutil.rmtree(ws / "src")
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", ws / "src")
    res = tracker.restore(uid)
    assert res.skipped == [{"path": "src/a.txt", "reason": "parent_moved"}]
    assert os.listdir(tmp_path / "elsewhere") == []


def test_a_non_regular_file_in_the_way_is_skipped(session, tracker, ws):
    put(ws / "a.txt", "v0\n")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "v1\n")
    os.unlink(ws / "a.txt")
    os.mkfifo(ws / "a.txt")
    res = tracker.restore(uid, on_conflict="overwrite")
    assert res.skipped == [{"path": "a.txt", "reason": "not_regular"}]


def test_records_that_were_not_backed_up_are_reported(session, make_tracker, ws):
    tracker = make_tracker(max_file_bytes=8)
    put(ws / "big.txt", "0123456789\n")
    put(ws / "real.txt", "r\n")
    os.symlink("real.txt", ws / "link.txt")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "big.txt", "small\n")
    tracker.before_write(str(ws / "link.txt"))
    res = tracker.restore(uid)
    assert res.skipped == [
        {"path": "big.txt", "reason": "too_large"},
        {"path": "link.txt", "reason": "not_regular"},
    ]
    assert read(ws / "big.txt") == "small\n"


def test_a_missing_backup_is_reported(session, tracker, ws, ama_home):
    put(ws / "a.txt", "v0\n")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "v1\n")
    blob = tracker.checkpoints()[uid].files["a.txt"].blob
    os.unlink(BlobStore(ama_home).path(blob))
    res = tracker.restore(uid)
    assert res.skipped == [{"path": "a.txt", "reason": "backup_missing"}]
    assert read(ws / "a.txt") == "v1\n"


def test_a_damaged_backup_counts_as_missing(session, tracker, ws, ama_home):
    put(ws / "a.txt", "v0\n")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "v1\n")
    blob = tracker.checkpoints()[uid].files["a.txt"].blob
    with open(BlobStore(ama_home).path(blob), "wb") as f:
        f.write(b"v9\n")
    assert tracker.restore(uid).skipped == [{"path": "a.txt", "reason": "backup_missing"}]


def test_dry_run_counts_lines_and_changes_nothing(session, tracker, ws, tmp_path):
    put(ws / "a.txt", "1\n2\n3\n")
    put(ws / "gone.txt", "g\n")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "1\nTWO\n3\n4\n")
    ama_write(tracker, ws / "new.txt", "n1\nn2\n")
    ama_write(tracker, ws / "gone.txt", "g2\n")
    os.unlink(ws / "gone.txt")
    before = dir_fingerprint(ws)
    read_files = ReadFiles()
    read_files.record(str(ws / "a.txt"))
    res = tracker.restore(uid, dry_run=True, read_files=read_files)
    assert res.to_json() == {
        "restored": ["a.txt", "gone.txt"],
        "deleted": ["new.txt"],
        "conflicts": [],
        "skipped": [],
        "failed": [],
        "insertions": 2,  # "2" and "g"
        "deletions": 4,  # "TWO", "4", "n1", "n2"
        "dryRun": True,
    }
    assert dir_fingerprint(ws) == before
    assert read_files.paths() == [os.path.realpath(ws / "a.txt")]
    assert tracker.restore(uid).to_json() | {"dryRun": True} == res.to_json()


def test_restored_and_deleted_files_leave_read_files(session, tracker, ws):
    put(ws / "a.txt", "v0\n")
    put(ws / "keep.txt", "k\n")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "v1\n")
    ama_write(tracker, ws / "b.txt", "new\n")
    read_files = ReadFiles()
    for name in ("a.txt", "b.txt", "keep.txt"):
        read_files.record(str(ws / name))
    tracker.restore(uid, read_files=read_files)
    assert read_files.paths() == [os.path.realpath(ws / "keep.txt")]


def test_files_outside_cwd_are_restored_with_absolute_paths(session, tracker, ws, tmp_path):
    put(tmp_path / "etc.conf", "a=1\n")
    uid = turn(session, tracker)
    ama_write(tracker, tmp_path / "etc.conf", "a=2\n")
    res = tracker.restore(uid)
    assert res.restored == [str(tmp_path / "etc.conf")]
    assert read(tmp_path / "etc.conf") == "a=1\n"


def test_unknown_checkpoint(tracker):
    with pytest.raises(AmaError) as e:
        tracker.restore("deadbeef")
    assert e.value.code == "no_checkpoint"
    with pytest.raises(AmaError) as e:
        tracker.restore("deadbeef", on_conflict="maybe")
    assert e.value.code == "invalid_arguments"


def test_all_failed_and_none_restored_is_rewind_failed(session, tracker, ws):
    put(ws / "a.txt", "v0\n")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "v1\n")
    make_unwritable(ws / "a.txt")
    try:
        with pytest.raises(AmaError) as e:
            tracker.restore(uid)
        assert e.value.code == "rewind_failed"
        assert e.value.data["failed"][0]["path"] == "a.txt"
        # a dry run reports instead of failing
        assert tracker.restore(uid, dry_run=True).restored == ["a.txt"]
    finally:
        make_writable(ws / "a.txt")
    assert read(ws / "a.txt") == "v1\n"


def test_a_partial_failure_is_reported_with_the_rest_restored(session, tracker, ws):
    put(ws / "a.txt", "v0\n")
    put(ws / "b.txt", "b0\n")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "v1\n")
    ama_write(tracker, ws / "b.txt", "b1\n")
    make_unwritable(ws / "a.txt")
    try:
        res = tracker.restore(uid)
    finally:
        make_writable(ws / "a.txt")
    assert res.restored == ["b.txt"]
    assert [f["path"] for f in res.failed] == ["a.txt"] and res.failed[0]["message"]


def test_differing_files_lists_tracked_files_that_moved_on(session, tracker, ws):
    put(ws / "a.txt", "v0\n")
    put(ws / "b.txt", "b0\n")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "v1\n")
    ama_write(tracker, ws / "b.txt", "b0\n")
    ama_write(tracker, ws / "c.txt", "new\n")
    assert tracker.differing_files(uid) == ["a.txt", "c.txt"]
    tracker.restore(uid)
    assert tracker.differing_files(uid) == []
