"""The tree built in one loop is the tree built entry by entry, and the path it remembers
is the path walked afresh, through appends and leaf moves."""

from __future__ import annotations

from pathlib import Path

import msgspec

from ama.session.reader import parse_session
from ama.session.tree import SessionTree, name_of, path_of
from tests.session.test_overview import _rich_bytes, extra_lines


def _one_by_one(entries: list, leaf: str | None) -> SessionTree:
    t = SessionTree()
    for e in entries:
        t.add(e)
    if leaf is None or leaf in t.by_id:
        t.leaf_id = leaf
    return t


def test_the_bulk_build_is_add_for_each_entry(sessions_dir: Path) -> None:
    raw = _rich_bytes(sessions_dir).rstrip(b"\n")
    lines = raw.split(b"\n")
    data = parse_session(b"\n".join([*lines[:6], *extra_lines(raw), *lines[6:]]) + b"\n")
    assert data.damaged and any(e.parent_id == "gone" for e in data.entries)
    bulk = SessionTree(data.entries, data.leaf_id)
    slow = _one_by_one(data.entries, data.leaf_id)
    for attr in ("entries", "by_id", "position", "parent", "marks", "reparented", "leaf_id", "name"):
        assert getattr(bulk, attr) == getattr(slow, attr), attr
    assert bulk.reparented >= 2 and bulk.marks
    assert bulk.path_ids() == slow.path_ids() and bulk.tips() == slow.tips()
    # entries of another tree appended to a built one: the same again
    half = len(data.entries) // 2
    t = SessionTree(data.entries[:half])
    t._extend(data.entries[half:])
    assert t.parent == bulk.parent and t.reparented == bulk.reparented and t.marks == bulk.marks


def test_the_remembered_path_follows_appends_and_moves(sessions_dir: Path) -> None:
    data = parse_session(_rich_bytes(sessions_dir))
    tree = SessionTree()
    for i, e in enumerate(data.entries):
        tree.add(e)
        if i % 3 == 0:
            assert tree.path_ids() == path_of(tree.leaf_id, tree.parent)
        if i % 5 == 0:
            got = tree.branch()
            assert got == [tree.by_id[x] for x in path_of(tree.leaf_id, tree.parent)]
            got.clear()  # the caller's copy
        if i % 7 == 0 and i:
            other = data.entries[i // 2].id
            assert tree.path_ids(other) == path_of(other, tree.parent)
    for e in data.entries:
        tree.set_leaf(e.id)
        assert tree.branch() == [tree.by_id[x] for x in path_of(e.id, tree.parent)]
        got = tree.path_ids()
        assert got == path_of(e.id, tree.parent)
        got.append("x")  # the caller's copy
        assert tree.path_ids() == path_of(e.id, tree.parent)
    tree.set_leaf(None)
    assert tree.path_ids() == [] and tree.branch() == []


def test_an_id_given_again_forgets_the_path(sessions_dir: Path) -> None:
    data = parse_session(_rich_bytes(sessions_dir))
    tree = SessionTree(data.entries)
    old = data.entries[3]
    assert len(tree.path_ids()) > 1 and old.id in tree.path_ids()
    tree.add(msgspec.structs.replace(old, parent_id=None))  # the same id, now a root and the leaf
    assert tree.leaf_id == old.id and tree.path_ids() == [old.id]


def test_the_name_is_the_latest_one_set_as_entries_come(sessions_dir: Path) -> None:
    raw = _rich_bytes(sessions_dir).rstrip(b"\n")
    lines = raw.split(b"\n")
    data = parse_session(b"\n".join([*lines[:6], *extra_lines(raw), *lines[6:]]) + b"\n")
    tree = SessionTree()
    names = set()
    for i, e in enumerate(data.entries):
        tree.add(e)
        assert tree.name == name_of(data.entries[: i + 1])
        names.add(tree.name)
        if i % 9 == 0:
            assert SessionTree(data.entries[: i + 1]).name == tree.name
    assert {None, "parser work", "renamed"} <= names
