"""Recording checkpoints: first touch, new-turn snapshots, the stat fast path, replay."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from ama.checkpoints import BlobStore, CheckpointTracker, FileRecord
from ama.checkpoints.gc import registered_dirs
from ama.messages import UserMessage
from ama.session.entries import CustomEntry
from ama.session.store import Session
from tests.checkpoints.helpers import OLD, ama_write, git, put, read, turn


def customs(session: Session, ctype: str) -> list[dict]:
    return [e.data for e in session.entries if isinstance(e, CustomEntry) and e.custom_type == ctype]


def test_first_touch_backs_up_once_and_joins_the_turn(session, tracker, ws, ama_home):
    put(ws / "a.txt", "original\n")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "changed\n")
    ama_write(tracker, ws / "a.txt", "changed again\n")
    tracks = customs(session, "ama.checkpoint-track")
    assert len(tracks) == 1
    t = tracks[0]
    assert (t["v"], t["userEntryId"], t["path"]) == (1, uid, "a.txt")
    assert t["record"]["realParentDir"] == os.path.realpath(ws)
    assert BlobStore(ama_home).get(t["record"]["blob"]) == b"original\n"
    cp = tracker.checkpoints()[uid]
    assert cp.files["a.txt"].blob == t["record"]["blob"]
    assert cp.files["a.txt"].size == 9
    assert tracker.last_written["a.txt"] == __import__("hashlib").sha256(b"changed again\n").hexdigest()


def test_a_new_file_is_recorded_as_absent(session, tracker, ws):
    uid = turn(session, tracker)
    ama_write(tracker, ws / "sub" / "new.py", "x = 1\n")
    rec = tracker.checkpoints()[uid].files["sub/new.py"]
    assert rec == FileRecord(blob=None, real_parent_dir=os.path.realpath(ws / "sub"))


def test_checkpoint_resnapshots_tracked_files_with_outside_changes(session, tracker, ws, ama_home):
    turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "by ama\n")
    put(ws / "a.txt", "by bash afterwards\n")  # outside ama, same turn
    put(ws / "untracked.txt", "never tracked\n")
    uid2 = turn(session, tracker)
    cps = customs(session, "ama.checkpoint")
    assert [c["userEntryId"] for c in cps][-1] == uid2
    files = cps[-1]["files"]
    assert set(files) == {"a.txt"}
    assert BlobStore(ama_home).get(files["a.txt"]["blob"]) == b"by bash afterwards\n"
    assert files["a.txt"]["size"] == len(b"by bash afterwards\n")


def test_fast_path_reuses_the_record_without_reading(session, tracker, ws):
    put(ws / "a.txt", "aaaa\n", mtime_ns=OLD)
    turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "bbbb\n")
    os.utime(ws / "a.txt", ns=(OLD, OLD))
    uid2 = turn(session, tracker)
    rec2 = tracker.checkpoints()[uid2].files["a.txt"]
    assert rec2.mtime_ns == OLD and rec2.size == 5
    # same size, mode and mtime: the content is not read, the record is reused as it is
    put(ws / "a.txt", "cccc\n", mtime_ns=OLD)
    uid3 = turn(session, tracker)
    assert tracker.checkpoints()[uid3].files["a.txt"] == rec2
    # a new mtime makes it read the file
    put(ws / "a.txt", "dddd\n", mtime_ns=OLD + 10**9)
    uid4 = turn(session, tracker)
    assert tracker.checkpoints()[uid4].files["a.txt"].blob != rec2.blob
    # the same content under a new mtime keeps the blob
    os.utime(ws / "a.txt", ns=(OLD + 5 * 10**9, OLD + 5 * 10**9))
    uid5 = turn(session, tracker)
    rec5 = tracker.checkpoints()[uid5].files["a.txt"]
    assert rec5.blob == tracker.checkpoints()[uid4].files["a.txt"].blob
    assert rec5.mtime_ns == OLD + 5 * 10**9


def test_a_just_modified_file_gets_no_mtime_so_the_next_checkpoint_reads_it(session, tracker, ws):
    turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "aaaa\n")
    uid = turn(session, tracker)
    rec = tracker.checkpoints()[uid].files["a.txt"]
    assert rec.blob is not None and rec.mtime_ns is None
    st = os.stat(ws / "a.txt")
    put(ws / "a.txt", "bbbb\n")
    os.utime(ws / "a.txt", ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime
    uid2 = turn(session, tracker)
    assert tracker.checkpoints()[uid2].files["a.txt"].blob != rec.blob


def test_large_files_and_non_regular_files_are_not_backed_up(session, make_tracker, ws, ama_home):
    tracker = make_tracker(max_file_bytes=10)
    put(ws / "big.bin", b"x" * 11)
    put(ws / "target.txt", "t\n")
    os.symlink("target.txt", ws / "link.txt")
    uid = turn(session, tracker)
    ama_write(tracker, ws / "big.bin", b"y")
    tracker.before_write(str(ws / "link.txt"))
    files = tracker.checkpoints()[uid].files
    assert files["big.bin"].skipped == "too_large" and files["big.bin"].blob is None
    assert files["big.bin"].size == 11
    assert files["link.txt"].skipped == "not_regular" and files["link.txt"].blob is None
    assert not os.path.isdir(BlobStore(ama_home).root) or all(
        not names for _d, _s, names in os.walk(BlobStore(ama_home).root)
    )


def test_in_memory_sessions_and_mode_off_record_nothing(ws, ama_home, sessions_dir):
    mem = Session.in_memory(str(ws))
    t = CheckpointTracker(session=mem, cwd=str(ws), data_dir=str(ama_home))
    assert not t.enabled
    uid = mem.append_message(UserMessage(content="hi")).id
    assert t.checkpoint(uid) is None
    t.before_write(str(ws / "a.txt"))
    assert mem.entries[-1].id == uid
    s = Session.create(str(ws), sessions_dir)
    off = CheckpointTracker(session=s, cwd=str(ws), data_dir=str(ama_home), mode="off")
    assert not off.enabled
    uid = s.append_message(UserMessage(content="hi")).id
    assert off.checkpoint(uid) is None
    assert not off.has_checkpoint(uid)
    with pytest.raises(Exception) as e:
        off.restore(uid)
    assert getattr(e.value, "code", None) == "no_checkpoint"
    s.close()


def test_before_write_never_raises(session, tracker, ws, notices):
    turn(session, tracker)
    session.readonly_reason = "a test made it read-only"
    ama_write(tracker, ws / "a.txt", "still written\n")
    assert read(ws / "a.txt") == "still written\n"
    assert len(notices) == 1 and "could not back up" in notices[0]
    # not retried within the same turn: a later backup would hold ama's own bytes
    ama_write(tracker, ws / "a.txt", "again\n")
    assert len(notices) == 1
    session.readonly_reason = None


def test_checkpoint_failure_is_reported_not_raised(session, tracker, notices):
    uid = session.append_message(UserMessage(content="x")).id
    session.readonly_reason = "read-only"
    assert tracker.checkpoint(uid) is None
    assert notices and "could not record a checkpoint" in notices[-1]
    session.readonly_reason = None


def test_replay_covers_the_whole_file_and_every_branch(session, tracker, ws, ama_home):
    put(ws / "a.txt", "v0\n")
    u1 = turn(session, tracker)
    ama_write(tracker, ws / "a.txt", "v1\n")
    u2 = turn(session, tracker)
    ama_write(tracker, ws / "b.txt", "b1\n")
    # conversation rewind: back to before u2, then a new turn on another branch
    session.navigate(session.tree.by_id[u2].parent_id)
    u3 = turn(session, tracker, "another way")
    path = session.path
    session.close()
    resumed = Session.open(path)
    try:
        t2 = CheckpointTracker(session=resumed, cwd=str(ws), data_dir=str(ama_home))
        assert list(t2.checkpoints()) == [u1, u2, u3]
        assert t2.history.tracked == ["a.txt", "b.txt"]
        assert "b.txt" in t2.checkpoints()[u2].files  # the track joined u2, off the active branch
        assert t2.checkpoints()[u3].files["b.txt"].blob is not None
        # a file first touched later falls back to its earliest record
        assert "b.txt" not in t2.checkpoints()[u1].files
        assert t2.history.target_record(u1, "b.txt") == {"blob": None, "realParentDir": os.path.realpath(ws)}
    finally:
        resumed.close()


def test_a_track_before_its_checkpoint_waits_for_it(session, tracker, ws):
    uid = session.append_message(UserMessage(content="x")).id
    ama_write(tracker, ws / "a.txt", "new\n")  # no checkpoint yet: joins the latest user message
    tracker.checkpoint(uid)
    assert tracker.checkpoints()[uid].files["a.txt"].blob is None


def test_keep_limits_the_rewind_points(session, make_tracker):
    tracker = make_tracker(keep=2)
    ids = [turn(session, tracker, f"t{i}") for i in range(4)]
    assert [tracker.has_checkpoint(i) for i in ids] == [False, False, True, True]
    assert len(tracker.checkpoints()) == 4
    with pytest.raises(Exception) as e:
        tracker.restore(ids[0])
    assert e.value.code == "no_checkpoint"


def test_git_head_is_recorded_and_a_move_is_hinted(session, tracker, ws):
    git(ws, "init", "-q", "-b", "main")
    put(ws / "f.txt", "1\n")
    git(ws, "add", "f.txt")
    git(ws, "commit", "-q", "-m", "one")
    first = git(ws, "rev-parse", "HEAD")
    uid = turn(session, tracker)
    assert tracker.checkpoints()[uid].git == {"head": first, "branch": "main"}
    assert tracker.git_hint(uid) is None
    put(ws / "f.txt", "2\n")
    git(ws, "commit", "-q", "-am", "two")
    second = git(ws, "rev-parse", "HEAD")
    assert tracker.git_hint(uid) == {
        "recordedHead": first,
        "currentHead": second,
        "recordedBranch": "main",
        "currentBranch": "main",
    }


def test_a_sessions_dir_outside_the_default_is_registered(ws, ama_home, tmp_path):
    other = tmp_path / "elsewhere"
    s = Session.create(str(ws), other)
    t = CheckpointTracker(session=s, cwd=str(ws), data_dir=str(ama_home))
    turn(s, t)
    ama_write(t, ws / "a.txt", "x\n")
    assert registered_dirs(ama_home) == [str(other)]
    s.close()
    with open(ama_home / "file-history" / "roots.json") as f:
        assert json.load(f) == {"v": 1, "sessionsDirs": [str(other)]}


def test_paths_outside_cwd_are_absolute_keys(session, tracker, ws, tmp_path):
    outside = tmp_path / "outside.txt"
    put(outside, "o\n")
    uid = turn(session, tracker)
    ama_write(tracker, outside, "changed\n")
    assert list(tracker.checkpoints()[uid].files) == [str(outside)]


def test_the_write_and_edit_tools_call_the_hooks(session, tracker, ws, tmp_path):
    from ama.tools import ReadFiles, ToolContext
    from ama.tools.edit import make_edit_tool
    from ama.tools.write import make_write_tool

    put(ws / "a.py", "x = 1\n")
    uid = turn(session, tracker)
    ctx = ToolContext(
        cwd=str(ws),
        abort=asyncio.Event(),
        read_files=ReadFiles(),
        output_dir=str(tmp_path / "out"),
        before_write=tracker.before_write,
        after_write=tracker.after_write,
    )
    ctx.read_files.record(str(ws / "a.py"))

    async def run() -> None:
        await make_edit_tool().execute(
            "c1", {"path": "a.py", "old_string": "1", "new_string": "2"}, ctx, None
        )
        await make_write_tool().execute("c2", {"path": "new.py", "content": "y = 3\n"}, ctx, None)

    asyncio.run(run())
    files = tracker.checkpoints()[uid].files
    assert set(files) == {"a.py", "new.py"}
    assert files["new.py"].blob is None
    result = tracker.restore(uid, read_files=ctx.read_files)
    assert (result.restored, result.deleted) == (["a.py"], ["new.py"])
    assert read(ws / "a.py") == "x = 1\n" and not (ws / "new.py").exists()
    assert str(ws / "a.py") not in ctx.read_files.paths()


def test_importing_the_package_starts_nothing(tmp_path: Path):
    import subprocess
    import sys

    code = "import sys, ama.checkpoints; print(sorted(m for m in ('subprocess', 'msgspec', 'httpx') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
