"""Catalog: order, scope-bound cursors, id resolution, lineage and archive inheritance."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from ama.errors import AmaError, Busy, InvalidArguments, NotFound
from ama.session.archive import set_archived
from ama.session.catalog import list_page, resolve, scan
from ama.session.entries import SessionHeader, encode_line
from ama.session.fork import fork_session
from ama.session.store import Session
from tests.session.helpers import simple_session, user


def write_session(sessions_dir: Path, sid: str, cwd: str, last_ts: str, **header) -> Path:
    """A tiny session file with one user message at ``last_ts``."""
    h = SessionHeader(version=3, id=sid, timestamp="2026-01-01T00:00:00.000Z", cwd=cwd, **header)
    path = sessions_dir / "--x--" / f"f_{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {
        "type": "message",
        "id": "00000001",
        "parentId": None,
        "timestamp": last_ts,
        "message": {"role": "user", "content": f"hi {sid}", "timestamp": 1},
    }
    path.write_bytes(encode_line(h) + json.dumps(entry).encode() + b"\n")
    return path


def ids(page) -> list[str]:
    return [s.id for s in page.sessions]


def test_order_is_last_message_desc_then_cwd_then_id(sessions_dir: Path) -> None:
    write_session(sessions_dir, "bbbb0001", "/b", "2026-03-01T00:00:00Z")
    write_session(sessions_dir, "aaaa0002", "/b", "2026-03-01T00:00:00Z")
    write_session(sessions_dir, "cccc0003", "/a", "2026-03-01T00:00:00Z")
    write_session(sessions_dir, "dddd0004", "/z", "2026-04-01T00:00:00+02:00")  # 2026-03-31T22:00Z
    write_session(sessions_dir, "eeee0005", "/a", "2026-02-01T00:00:00Z")
    page = list_page(scan(str(sessions_dir)), cwd=None)
    assert ids(page) == ["dddd0004", "cccc0003", "aaaa0002", "bbbb0001", "eeee0005"]
    assert page.next_cursor is None


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5, 6, 7])
def test_every_page_boundary_returns_each_session_exactly_once(sessions_dir: Path, limit: int) -> None:
    # equal timestamps on purpose: the tie-breakers must make pages exact
    for i in range(6):
        write_session(sessions_dir, f"{i:04d}abcd", "/same" if i % 2 else "/other", "2026-05-05T05:05:05Z")
    summaries = scan(str(sessions_dir))
    everything = ids(list_page(summaries, cwd=None, limit=100))
    got, cursor = [], None
    for _ in range(20):
        page = list_page(summaries, cwd=None, limit=limit, cursor=cursor)
        got += ids(page)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert got == everything and len(got) == 6


def test_cursor_from_another_scope_is_refused(sessions_dir: Path) -> None:
    for i in range(3):
        write_session(sessions_dir, f"{i:04d}ffff", "/w", f"2026-05-0{i + 1}T00:00:00Z")
    summaries = scan(str(sessions_dir))
    cursor = list_page(summaries, cwd="/w", limit=1).next_cursor
    assert cursor
    assert len(ids(list_page(summaries, cwd="/w", limit=1, cursor=cursor))) == 1
    for kwargs in ({"cwd": "/other"}, {"cwd": None}, {"cwd": "/w", "archived": True}, {"cwd": "/w", "include_subagents": True}):
        with pytest.raises(InvalidArguments) as err:
            list_page(summaries, limit=1, cursor=cursor, **kwargs)
        assert "different query" in err.value.message


def test_tampered_cursor_is_refused(sessions_dir: Path) -> None:
    for i in range(3):
        write_session(sessions_dir, f"{i:04d}eeee", "/w", f"2026-05-0{i + 1}T00:00:00Z")
    summaries = scan(str(sessions_dir))
    cursor = list_page(summaries, cwd="/w", limit=1).next_cursor
    raw = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    raw["after"][0] += 1  # move the position without re-signing
    forged = base64.urlsafe_b64encode(json.dumps(raw, sort_keys=True, separators=(",", ":")).encode()).rstrip(b"=").decode()
    padded = cursor + "=="  # non-canonical encoding of the same bytes
    flipped = ("A" if cursor[5] != "A" else "B").join([cursor[:5], cursor[6:]])
    for bad in (forged, padded, flipped, "!!!", "", "e30"):
        if bad == "":
            continue
        with pytest.raises(InvalidArguments):
            list_page(summaries, cwd="/w", limit=1, cursor=bad)


def test_default_scope_is_one_workspace_and_hides_archived_and_subagents(sessions_dir: Path) -> None:
    a = simple_session(sessions_dir, cwd="/proj")
    a.close()
    b = simple_session(sessions_dir, cwd="/elsewhere")
    b.close()
    sub = Session.create("/proj", sessions_dir)
    sub.append_custom("ama.task", {"parentToolCallId": "t1", "description": "look", "parentSession": a.id})
    sub.append_message(user("sub task"))
    sub.close()
    summaries = scan(str(sessions_dir))
    assert ids(list_page(summaries, cwd="/proj")) == [a.id]
    assert set(ids(list_page(summaries, cwd="/proj", include_subagents=True))) == {a.id, sub.id}
    assert set(ids(list_page(summaries, cwd=None))) == {a.id, b.id}


def test_resolve_prefix_rules(sessions_dir: Path) -> None:
    write_session(sessions_dir, "abcd1111-x", "/one", "2026-01-01T00:00:00Z")
    write_session(sessions_dir, "abcd2222-y", "/two", "2026-01-01T00:00:00Z")
    assert resolve(str(sessions_dir), "abcd1").id == "abcd1111-x"
    with pytest.raises(AmaError) as err:
        resolve(str(sessions_dir), "abcd")
    assert err.value.code == "ambiguous"
    assert "/one" in err.value.message and "/two" in err.value.message
    with pytest.raises(InvalidArguments):
        resolve(str(sessions_dir), "abc")
    with pytest.raises(NotFound):
        resolve(str(sessions_dir), "ffff")


def test_names_are_not_trusted_headers_are(sessions_dir: Path) -> None:
    # a file whose directory and name claim another id and workspace
    p = write_session(sessions_dir, "realid00", "/real", "2026-01-01T00:00:00Z")
    fake = sessions_dir / "--fake--" / "2026_fakeid00.jsonl"
    fake.parent.mkdir()
    os.rename(p, fake)
    assert resolve(str(sessions_dir), "realid").cwd == "/real"
    with pytest.raises(NotFound):
        resolve(str(sessions_dir), "fakeid")


def test_damaged_header_is_listed_as_damaged(sessions_dir: Path) -> None:
    bad = sessions_dir / "--x--" / "bad.jsonl"
    bad.parent.mkdir(parents=True)
    bad.write_text("not json\n")
    page = list_page(scan(str(sessions_dir)), cwd=None)
    assert page.sessions == [] and [d.path for d in page.damaged] == [str(bad)]
    assert bad.read_text() == "not json\n"


def test_archive_inherits_down_the_lineage_and_unarchive_keeps_child_own_flag(sessions_dir: Path) -> None:
    root = simple_session(sessions_dir, cwd="/p")
    root.close()
    child_id, _ = fork_session(root.path, str(sessions_dir))
    grandchild_id, _ = fork_session(resolve(str(sessions_dir), child_id).path, str(sessions_dir))
    res = set_archived(str(sessions_dir), root.id, True)
    assert res["changed"] and set(res["lineage"]) == {child_id, grandchild_id}
    summaries = scan(str(sessions_dir))
    assert ids(list_page(summaries, cwd="/p")) == []
    assert len(ids(list_page(summaries, cwd="/p", archived=True))) == 3
    # only the root got an entry
    assert [s.archived_own for s in sorted(summaries, key=lambda s: s.id != root.id)][0] is True
    assert sum(s.archived_own for s in summaries) == 1
    set_archived(str(sessions_dir), grandchild_id, True)
    set_archived(str(sessions_dir), root.id, False)
    active = ids(list_page(scan(str(sessions_dir)), cwd="/p"))
    assert set(active) == {root.id, child_id}  # the grandchild keeps its own archive
    again = set_archived(str(sessions_dir), root.id, False)
    assert again["changed"] is False


def test_archive_fails_with_zero_writes_when_any_member_is_busy(sessions_dir: Path) -> None:
    root = simple_session(sessions_dir, cwd="/p")
    root.close()
    child_id, child_path = fork_session(root.path, str(sessions_dir))
    before = {p: Path(p).read_bytes() for p in (root.path, child_path)}
    busy = Session.open(child_path)
    try:
        with pytest.raises(Busy):
            set_archived(str(sessions_dir), root.id, True)
    finally:
        busy.close()
    assert {p: Path(p).read_bytes() for p in before} == before
    Session.open(root.path).close()  # no lease left behind
