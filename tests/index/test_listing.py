"""``sessions list`` from the index gives the scan's pages: the same sessions in the same
order, the same cursors, lineage and archive inheritance, damaged and unreadable files, and
the same short ids -- decoding only the summaries of the page."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from ama.index import db as D
from ama.index import listing
from ama.index.access import with_index
from ama.index.listing import Listing, page, shown_ids
from ama.session.catalog import list_page, scan
from ama.session.layout import name_id
from ama.session.shortid import abbreviate
from tests.index.helpers import ama, schema_back_to


def _line(obj: dict) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def _session(
    d: Path,
    sid: str,
    cwd: str,
    last: str,
    *,
    name: str | None = None,
    parent: str | None = None,
    task_parent: str | None = None,
    archived: bool | None = None,
    spaced: bool = False,
) -> Path:
    header: dict = {
        "type": "session",
        "version": 3,
        "id": sid,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": cwd,
    }
    if parent is not None:
        header["parentSession"] = parent
    lines = [header]
    if task_parent is not None:
        lines.append({"type": "custom", "id": "t0", "parentId": None, "timestamp": last, "customType": "ama.task",
                      "data": {"agent": "general", "parentSession": task_parent}})  # fmt: skip
    lines.append({"type": "message", "id": "m1", "parentId": None, "timestamp": last,
                  "message": {"role": "user", "content": f"hello from {sid}", "timestamp": 1}})  # fmt: skip
    if name is not None:
        lines.append({"type": "session_info", "id": "n1", "parentId": "m1", "timestamp": last, "name": name})
    if archived is not None:
        lines.append({"type": "custom", "id": "a1", "parentId": "m1", "timestamp": last, "customType": "ama.archive",
                      "data": {"archived": archived}})  # fmt: skip
    path = d / f"--{cwd.strip('/').replace('/', '-')}--" / f"2026-01-01T00-00-00-000Z_{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    if spaced:
        path.write_bytes(b"".join(json.dumps(x).encode() + b"\n" for x in lines))
    else:
        path.write_bytes(b"".join(_line(x) for x in lines))
    return path


def _corpus(d: Path, cwd: str, *, unreadable: bool = True) -> None:
    """Ties, lineage by id, by path and by a moved path's file name, archive flags up and
    down the lineage, sub-agents, a copied file (two rows, one id), time-ordered ids that
    share long prefixes, file names whose id is not the header's, damaged and unreadable
    files."""
    same = "2026-05-05T05:05:05.000Z"
    for i in range(7):  # equal times: order by workspace, then id, then the walk
        _session(d, f"0197aaaa-0000-7000-8000-00000000000{i}", cwd if i % 2 else "/b", same)
    root = _session(d, "0197bbbb-0000-7000-8000-000000000001", cwd, "2026-05-01T00:00:00.000Z", archived=True)
    child = _session(d, "0197bbbb-0000-7000-8000-000000000002", cwd, "2026-05-02T00:00:00.000Z",
                     parent=str(root))  # fmt: skip
    _session(d, "0197bbbb-0000-7000-8000-000000000003", cwd, "2026-05-03T00:00:00.000Z",
             parent="/moved/elsewhere/" + child.name, archived=False)  # fmt: skip
    _session(d, "0197bbbb-0000-7000-8000-000000000004", cwd, "2026-05-04T00:00:00.000Z",
             parent="0197bbbb-0000-7000-8000-000000000001", name="by id")  # fmt: skip
    _session(d, "0197cccc-0000-7000-8000-000000000001", cwd, "2026-05-06T00:00:00.000Z",
             task_parent="0197bbbb-0000-7000-8000-000000000004")  # fmt: skip
    own = _session(d, "0197cccc-0000-7000-8000-000000000002", "/b", "2026-05-07T00:00:00.000Z", archived=True)
    _session(d, "0197cccc-0000-7000-8000-000000000003", "/b", "2026-05-07T00:00:00.000Z", parent=str(own),
             archived=False, spaced=True)  # fmt: skip
    loop_a = _session(d, "0197dddd-0000-7000-8000-00000000000a", cwd, "2026-04-01T00:00:00.000Z",
                      parent="0197dddd-0000-7000-8000-00000000000b")  # fmt: skip
    _session(d, "0197dddd-0000-7000-8000-00000000000b", cwd, "2026-04-02T00:00:00.000Z", parent=str(loop_a))
    _session(
        d,
        "0197eeee-0000-7000-8000-000000000001",
        cwd,
        "2026-04-03T00:00:00.000Z",
        parent="0197eeee-0000-7000-8000-000000000001",
    )  # fmt: skip  (its own parent)
    copy = d / "--copies--" / "2026-01-01T00-00-00-000Z_copied.jsonl"
    copy.parent.mkdir()
    copy.write_bytes(
        (d / "--b--" / "2026-01-01T00-00-00-000Z_0197aaaa-0000-7000-8000-000000000000.jsonl").read_bytes()
    )
    other = d / "--copies--" / "2026-01-01T00-00-00-000Z_0197aaaa-0000-7000-8000-0000000000ff.jsonl"
    other.write_bytes(
        _line({"type": "session", "version": 3, "id": "0197ffff-1", "timestamp": same, "cwd": cwd})
    )
    for i in range(3):
        (d / "--x--").mkdir(exist_ok=True)
        (d / "--x--" / f"2026-01-01T00-00-00-000Z_0197aaaa-0000-7000-8000-00000000010{i}.jsonl").write_bytes(
            b"{not json\n"
        )
    (d / "--x--" / "no-id-in-name.jsonl").write_bytes(b"")
    if unreadable:  # files the indexer cannot read: listed from the file system, as the scan does
        (d / "--x--" / "2026-01-01T00-00-00-000Z_0197abab-dir.jsonl").mkdir()
        os.symlink(d / "nowhere", d / "--x--" / "2026-01-01T00-00-00-000Z_0197abab-dangling.jsonl")
    enc = d / f"--{cwd.strip('/').replace('/', '-')}--"
    enc.mkdir(exist_ok=True)
    (enc / "2026-01-01T00-00-00-000Z_0197abab-damaged-here.jsonl").write_bytes(b"[1]\n")


def _scanned(root: str, opts: dict) -> Listing:
    summaries = scan(root)
    result = list_page(summaries, **opts)
    among = [s.id for s in summaries] + [name_id(s.path) for s in summaries]
    return Listing(result, abbreviate(shown_ids(result), among=among))


def _indexed(root: str, opts: dict) -> Listing:
    res = with_index(root, lambda db, info: page(db, info, root, short=True, **opts))
    assert res is not None
    return res[0]


def _pages(fn, root: str, opts: dict) -> list[tuple[dict, dict]]:
    out, cursor = [], None
    for _ in range(100):
        got = fn(root, {**opts, "cursor": cursor})
        out.append((got.page.to_json(), got.short))
        cursor = got.page.next_cursor
        if cursor is None:
            return out
    raise AssertionError("pages without end")


SCOPES = [
    {},
    {"archived": True},
    {"include_subagents": True},
    {"archived": True, "include_subagents": True},
]


@pytest.mark.parametrize("limit", [1, 3, 50])
@pytest.mark.parametrize("way", ["sql", "rows", "rows-lineage"])
def test_every_page_and_cursor_is_the_scans(
    sessions_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int, way: str
) -> None:
    """Pages chosen by SQL (every file has rows) and in memory (some file cannot be read;
    more sessions with a parent or a flag than are looked up one by one)."""
    cwd = str(tmp_path / "work")
    _corpus(sessions_dir, cwd, unreadable=way == "rows")
    if way == "rows-lineage":
        monkeypatch.setattr(listing, "MAX_LINEAGE_ROWS", 3)
    root = str(sessions_dir)
    for scope in SCOPES:
        for where in (None, cwd, "/b"):
            opts = {"cwd": where, "limit": limit, **scope}
            want = _pages(_scanned, root, opts)
            assert _pages(_indexed, root, opts) == want, opts
            if where is None and not scope:
                listed = [s for p, _ in want for s in p["sessions"]]
                assert len(listed) > 10 and want[0][0]["damaged"]
    archived = {
        s["id"] for p, _ in _pages(_indexed, root, {"cwd": cwd, "archived": True}) for s in p["sessions"]
    }
    assert {
        "0197bbbb-0000-7000-8000-000000000001",  # its own flag
        "0197bbbb-0000-7000-8000-000000000002",  # its parent's (by path)
        "0197bbbb-0000-7000-8000-000000000003",  # its grandparent's (the parent's path moved)
        "0197bbbb-0000-7000-8000-000000000004",  # its parent's (by id)
    } <= archived


def test_a_change_between_two_pages_is_seen(sessions_dir: Path, tmp_path: Path) -> None:
    cwd = str(tmp_path / "work")
    _corpus(sessions_dir, cwd)
    root = str(sessions_dir)
    opts = {"cwd": None, "limit": 4}
    first = _indexed(root, opts)
    assert first.page.next_cursor
    # an archive flag on a parent hides its descendants from the next page too
    with open(
        sessions_dir / "--b--" / "2026-01-01T00-00-00-000Z_0197cccc-0000-7000-8000-000000000002.jsonl", "ab"
    ) as f:
        f.write(_line({"type": "custom", "id": "a2", "parentId": "m1", "timestamp": "2026-05-08T00:00:00.000Z",
                       "customType": "ama.archive", "data": {"archived": False}}))  # fmt: skip
    _session(sessions_dir, "0197ffff-0000-7000-8000-000000000009", cwd, "2026-06-01T00:00:00.000Z")
    for cursor in (None, first.page.next_cursor):
        a, b = _indexed(root, {**opts, "cursor": cursor}), _scanned(root, {**opts, "cursor": cursor})
        assert (a.page.to_json(), a.short) == (b.page.to_json(), b.short)


def test_the_cli_table_and_json_are_the_scans(sessions_dir: Path, tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    _corpus(sessions_dir, str(cwd))
    for args in (["--all"], ["--all", "--limit", "5"], ["--archived"], ["--all", "--include-subagents"], []):
        for extra in ([], ["--json"]):
            a = ama("sessions", "list", *args, *extra, cwd=cwd)
            b = ama("sessions", "list", *args, *extra, "--no-cache", cwd=cwd)
            assert (a.stdout, a.stderr) == (b.stdout, b.stderr.replace(" --no-cache", "")), args + extra
    out = ama("sessions", "list", "--all", cwd=cwd).stdout
    assert "0197aaaa-0000-7000-8000-000000000003 " in out  # time-ordered ids: printed long enough
    assert "0197aaaa-0000-7000-8000-00000000010" in out and "[damaged header" in out


def test_an_index_from_before_the_catalog_table_is_upgraded_without_reading_files(
    sessions_dir: Path, tmp_path: Path
) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    _corpus(sessions_dir, str(cwd))
    want = ama("sessions", "list", "--all", "--no-cache", cwd=cwd).stdout
    assert ama("sessions", "list", "--all", cwd=cwd).stdout == want
    db = sqlite3.connect(D.path())
    files = db.execute("SELECT id, offset FROM files ORDER BY id").fetchall()
    schema_back_to(db, 6)
    # one summary with other fields (an older ama's): that file is listed the old way
    db.execute(
        "UPDATE file_data SET summary = json_set(summary, '$.gone', 1) WHERE file_id = ?", (files[0][0],)
    )
    db.commit()
    db.close()
    assert ama("sessions", "list", "--all", cwd=cwd).stdout == want  # migrated, then read again
    db = sqlite3.connect(D.path())
    try:
        assert db.execute("SELECT max(version) FROM schema_migrations").fetchone() == (len(D.MIGRATIONS),)
        (rows,) = db.execute("SELECT count(*) FROM catalog").fetchone()
        assert rows == len(files)
    finally:
        db.close()
    db = sqlite3.connect(D.path())
    schema_back_to(db, 6)
    db.commit()
    db.close()
    assert ama("sessions", "list", "--all", cwd=cwd).stdout == want
    db = sqlite3.connect(D.path())
    try:
        assert db.execute("SELECT id, offset FROM files ORDER BY id").fetchall() != []
        (rows,) = db.execute("SELECT count(*) FROM catalog").fetchone()
        (nfiles,) = db.execute("SELECT count(*) FROM files").fetchone()
        assert rows == nfiles
    finally:
        db.close()


def test_rows_without_a_catalog_row_are_listed_from_their_summaries(
    sessions_dir: Path, tmp_path: Path
) -> None:
    cwd = str(tmp_path / "work")
    _corpus(sessions_dir, cwd)
    root = str(sessions_dir)
    opts = {"cwd": None, "limit": 7}
    want = _pages(_scanned, root, opts)
    assert _pages(_indexed, root, opts) == want
    db = sqlite3.connect(D.path())
    files = db.execute("SELECT id, offset FROM files ORDER BY id").fetchall()
    db.execute("DELETE FROM catalog WHERE file_id = (SELECT min(file_id) FROM catalog)")
    db.commit()
    db.close()
    assert _pages(_indexed, root, opts) == want
    db = sqlite3.connect(D.path())
    try:
        assert (
            db.execute("SELECT id, offset FROM files ORDER BY id").fetchall() == files
        )  # nothing read again
    finally:
        db.close()


def test_a_plain_page_counts_the_files_without_making_their_paths(sessions_dir: Path) -> None:
    """``RefreshInfo.files`` is ``len(paths)`` (after a build and when current), and a page
    with no archived session and no ties does not make the list of paths (for 10,000 files,
    ~3 ms of an indexed ``sessions list``)."""
    from ama.index.indexer import RefreshInfo

    assert RefreshInfo(1).files == 0 == len(RefreshInfo(1).paths)
    for i in range(5):
        _session(sessions_dir, f"0197aaaa-0000-7000-8000-00000000000{i}", "/p", f"2026-05-0{i + 1}T00:00:00.000Z")
    root = str(sessions_dir)
    seen = []

    def listed(db, info):
        seen.append(info)
        return page(db, info, root, cwd=None, limit=2, short=True)

    for _ in range(2):  # a build, then a current index
        res = with_index(root, listed)
        assert res is not None and len(res[0].page.sessions) == 2
    assert [(info.files, info._disk._paths) for info in seen] == [(5, None), (5, None)]
    info_paths = []
    with_index(root, lambda db, info: info_paths.append((info.files, len(info.paths))))
    assert info_paths == [(5, 5)]
