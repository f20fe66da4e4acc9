"""Fork from a stable snapshot; trash, restore and prune."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from ama.errors import AmaError, Busy, NotFound
from ama.session.fork import fork_session, stable_read
from ama.session.reader import read_session
from ama.session.store import Session
from ama.session.trash import prune_trash, restore_session, trash_session
from tests.session.helpers import assistant, simple_session, user


def test_fork_holds_the_effective_branch_and_same_context(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir, turns=2)
    first_user = s.entries[0].id
    s.append_custom("ama.run", {"executionId": "e1", "status": "COMPLETED"})
    s.append_custom("ama.todo", {"items": [{"id": "1", "text": "x", "status": "pending"}]})
    s.navigate(s.entries[3].id)  # abandon turn 2
    s.append_message(user("alternative"))
    s.append_message(assistant("alt answer"))
    s.set_label(s.entries[5].id, "off-branch label")  # points outside the branch
    s.set_label(first_user, "start")
    s.append_context_edit(s.entries[2].id, "[pruned]", "prune")
    parent_ctx = s.context().to_json()
    s.close()
    child_id, child_path = fork_session(s.path, str(sessions_dir))
    child = read_session(child_path)
    assert child.header.parent_session == os.path.abspath(s.path) and child.header.cwd == s.cwd
    assert child.header.id == child_id != s.id
    types = [(e.type, getattr(e, "custom_type", None)) for e in child.entries]
    assert ("custom", "ama.run") not in types  # runtime state stripped
    assert ("custom", "ama.todo") not in types  # it was on the abandoned branch
    assert len([t for t in types if t[0] == "label"]) == 1
    assert Session.load(child_path).context().to_json() == parent_ctx
    # the child is independent: appending to it leaves the parent unchanged
    before = Path(s.path).read_bytes()
    with Session.open(child_path) as c:
        c.append_message(user("in the child"))
    assert Path(s.path).read_bytes() == before


def test_fork_at_entry_and_preserves_unknown_fields(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir, turns=2)
    s.close()
    lines = Path(s.path).read_text().splitlines()
    obj = json.loads(lines[2])
    obj["futureField"] = {"kept": True}
    lines[2] = json.dumps(obj, separators=(",", ":"))
    Path(s.path).write_text("\n".join(lines) + "\n")
    at = json.loads(lines[4])["id"]
    _, child_path = fork_session(s.path, str(sessions_dir), at=at)
    child_lines = Path(child_path).read_text().splitlines()
    assert len(child_lines) == 1 + 4
    assert json.loads(child_lines[2])["futureField"] == {"kept": True}
    assert child_lines[1:] == lines[1:5]  # byte-identical copies
    with pytest.raises(NotFound):
        fork_session(s.path, str(sessions_dir), at="nope0000")


def test_fork_refuses_a_source_that_keeps_changing(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir, turns=1)
    s.close()
    opened = []

    def appending_open(path, mode):
        f = open(path, mode)  # noqa: SIM115 - returned to the caller, who closes it
        with open(path, "ab") as w:  # another writer appends during every read
            w.write(b'{"type":"custom","id":"%08x","parentId":null,"timestamp":"t","customType":"x","data":null}\n' % len(opened))
        opened.append(path)
        return f

    with pytest.raises(Busy) as err:
        stable_read(s.path, open_=appending_open)
    assert len(opened) == 3 and "kept changing" in err.value.message
    assert stable_read(s.path) == Path(s.path).read_bytes()


def test_fork_of_a_pi_v2_file_writes_current_format(sessions_dir: Path) -> None:
    from tests.conftest import FIXTURES

    _, path = fork_session(str(FIXTURES / "pi" / "v2-session.jsonl"), str(sessions_dir))
    d = read_session(path)
    assert d.header.version == 3 and d.readonly_reason is None and d.problems == []
    assert [type(e.message).__name__ for e in d.entries] == ["UserMessage", "CustomMessage", "AssistantMessage"]


def test_rm_restore_prune(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir)
    s.close()
    content = Path(s.path).read_bytes()
    res = trash_session(str(sessions_dir), s.id[:6])
    assert not os.path.exists(s.path) and Path(res["trashPath"]).read_bytes() == content
    assert ".trash" in res["trashPath"]
    with pytest.raises(NotFound):
        trash_session(str(sessions_dir), s.id)
    assert prune_trash(str(sessions_dir), older_than_s=3600)["removed"] == []
    restore_session(str(sessions_dir), s.id)
    assert Path(s.path).read_bytes() == content
    trash_session(str(sessions_dir), s.id)
    dry = prune_trash(str(sessions_dir), older_than_s=0, dry_run=True)
    assert dry["removed"] == [res["trashPath"]] and os.path.exists(res["trashPath"])
    time.sleep(0.01)
    done = prune_trash(str(sessions_dir), older_than_s=0)
    assert done["removed"] == [res["trashPath"]] and not os.path.exists(res["trashPath"])
    assert done["bytes"] == len(content)


def test_rm_refuses_a_session_being_written(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir)
    try:
        with pytest.raises(Busy):
            trash_session(str(sessions_dir), s.id)
    finally:
        s.close()
    assert os.path.exists(s.path)


def test_restore_never_overwrites(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir)
    s.close()
    content = Path(s.path).read_bytes()
    trash_session(str(sessions_dir), s.id)
    Path(s.path).write_bytes(b"someone else's file\n")
    with pytest.raises(AmaError) as err:
        restore_session(str(sessions_dir), s.id)
    assert err.value.code == "exists"
    assert Path(s.path).read_bytes() == b"someone else's file\n"
    # the trashed copy is still there
    from ama.session.layout import iter_session_files

    trashed = list(iter_session_files(str(sessions_dir), trash=True))
    assert [Path(p).read_bytes() for p in trashed] == [content]
