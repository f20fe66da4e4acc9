"""Lineage in the header: ``parentSession`` is the parent's file path (what pi writes; ids of
older files still read), ``rootId`` and ``relationType`` beside it, so ``sessions show`` knows
the lineage even when the parent's file is gone."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from ama.errors import AmaError
from ama.session.fork import fork_session
from ama.session.reader import read_session
from ama.session.store import Session
from tests.session.helpers import simple_session
from tests.session.test_cli_sessions import ama


def test_fork_writes_the_parent_path_root_and_relation(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir)
    s.close()
    child_id, child_path = fork_session(s.path, str(sessions_dir))
    first = json.loads(Path(child_path).read_bytes().splitlines()[0])
    assert first["parentSession"] == os.path.abspath(s.path)
    assert first["rootId"] == s.id and first["relationType"] == "fork"
    assert list(first).index("rootId") == list(first).index("parentSession") + 1
    _, grandchild = fork_session(child_path, str(sessions_dir))
    h = read_session(grandchild).header
    assert h.parent_session == os.path.abspath(child_path) and h.root_id == s.id  # the first of the lineage


def test_show_prints_the_lineage_and_keeps_it_when_the_parent_file_is_gone(sessions_dir: Path, tmp_path: Path) -> None:
    s = simple_session(sessions_dir)
    s.close()
    child_id, child_path = fork_session(s.path, str(sessions_dir))
    parent = json.loads(ama("sessions", "show", s.id, "--json", "--session-dir", str(sessions_dir)).stdout)
    assert parent["forks"] == [child_id]  # found through the path in the child's header
    shown = json.loads(ama("sessions", "show", child_id, "--json", "--session-dir", str(sessions_dir)).stdout)
    assert shown["lineage"] == {
        "parentId": s.id, "parentPath": os.path.abspath(s.path), "rootId": s.id, "relationType": "fork"
    }  # fmt: skip
    human = ama("sessions", "show", child_id, "--session-dir", str(sessions_dir)).stdout
    assert f"Parent    {s.id} · fork · root {s.id}" in human
    shutil.move(s.path, tmp_path / "elsewhere.jsonl")
    gone = json.loads(ama("sessions", "show", child_id, "--json", "--session-dir", str(sessions_dir)).stdout)
    assert gone["lineage"]["parentId"] is None and gone["lineage"]["rootId"] == s.id
    assert gone["lineage"]["relationType"] == "fork"
    assert "(not found) · fork · root " + s.id in ama("sessions", "show", child_id, "--session-dir", str(sessions_dir)).stdout


def test_an_older_id_reference_still_resolves(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir)
    s.close()
    old = Session.create(s.cwd, sessions_dir, parent_session=s.id)  # what ama wrote before
    old.append_message(s.entries[0].message)  # type: ignore[union-attr]
    old.close()
    shown = json.loads(ama("sessions", "show", old.id, "--json", "--session-dir", str(sessions_dir)).stdout)
    assert shown["lineage"]["parentId"] == s.id and shown["lineage"]["relationType"] == "fork"
    assert json.loads(ama("sessions", "show", s.id, "--json", "--session-dir", str(sessions_dir)).stdout)["forks"] == [old.id]


def test_a_task_child_and_a_bad_relation(sessions_dir: Path) -> None:
    t = Session.create("/x", sessions_dir, parent_session="/p/a.jsonl", root_id="r00t", relation_type="task")
    assert (t.header.root_id, t.header.relation_type) == ("r00t", "task")
    with pytest.raises(AmaError) as err:
        Session.create("/x", sessions_dir, relation_type="sibling")
    assert err.value.code == "invalid_arguments" and "'sibling'" in err.value.message
