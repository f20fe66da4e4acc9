"""Damaged and unreadable session files stay visible; the list's layout; short ids.

Tests run as root, so ``chmod 000`` does not make a file unreadable: a directory named
``*.jsonl`` (EISDIR) and a symbolic link to itself (ELOOP) are honest unreadable files.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from ama.index.db import unusable
from ama.messages import SystemMessage
from ama.session.layout import encode_cwd
from ama.session.shortid import abbreviate
from ama.session.store import Session
from tests.agent.helpers import write_script
from tests.conftest import ama_cmd
from tests.rpc.helpers import Rpc
from tests.session.helpers import simple_session, user


def ama(
    *args: str, cwd: str | Path, check_rc: int | None = 0, merged: bool = False
) -> subprocess.CompletedProcess:
    p = subprocess.run(
        ama_cmd(*args),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merged else subprocess.PIPE,
        text=True,
        timeout=60,
    )
    if check_rc is not None:
        assert p.returncode == check_rc, (p.returncode, p.stdout, p.stderr)
    return p


def _problem_files(sessions_dir: Path, cwd: Path) -> dict[str, Path]:
    d = sessions_dir / encode_cwd(str(cwd))
    d.mkdir(parents=True, exist_ok=True)
    damaged = d / "2026-01-01T00-00-00-000Z_dddddddd-1111-2222-3333-444444444444.jsonl"
    damaged.write_bytes(
        b'1 x\n{"type":"message","id":"00000001","parentId":null,"timestamp":"t",'
        b'"message":{"role":"user","content":"hi","timestamp":1}}\n'
    )
    a_dir = d / "2026-01-01T00-00-00-000Z_eeeeeeee-1111-2222-3333-444444444444.jsonl"
    a_dir.mkdir()
    loop = d / "2026-01-01T00-00-00-000Z_ffffffff-1111-2222-3333-444444444444.jsonl"
    os.symlink(loop.name, loop)
    return {"damaged": damaged, "dir": a_dir, "loop": loop}


@pytest.mark.parametrize("cache", [[], ["--no-cache"]], ids=["index", "scan"])
def test_damaged_and_unreadable_sessions_are_rows_of_the_default_listing(
    sessions_dir: Path, tmp_path: Path, cache: list[str]
) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    simple_session(sessions_dir, cwd=str(proj)).close()
    files = _problem_files(sessions_dir, proj)
    out = ama("sessions", "list", *cache, cwd=proj).stdout
    assert f"[damaged header: line 1 is not valid JSON] {files['damaged']}" in out
    assert f"[unreadable: Is a directory] {files['dir']}" in out
    assert f"[unreadable: Too many levels of symbolic links] {files['loop']}" in out
    assert "dddddddd" in out  # the id its file name gives, for `show`
    page = json.loads(ama("sessions", "list", "--json", *cache, cwd=proj).stdout)
    states = {d["path"]: (d["state"], d["error"]) for d in page["damaged"]}
    assert states == {
        str(files["damaged"]): ("damaged", "line 1 is not valid JSON"),
        str(files["dir"]): ("unreadable", "Is a directory"),
        str(files["loop"]): ("unreadable", "Too many levels of symbolic links"),
    }
    assert len(page["sessions"]) == 1
    # another workspace does not list them; the archived view neither
    other = tmp_path / "other"
    other.mkdir()
    assert "damaged" not in ama("sessions", "list", *cache, cwd=other, check_rc=0).stdout
    assert (
        json.loads(ama("sessions", "list", "--archived", "--json", *cache, cwd=proj).stdout)["damaged"] == []
    )


def test_show_of_a_damaged_prefix_says_what_is_wrong_and_rm_trashes_it(
    sessions_dir: Path, tmp_path: Path
) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    files = _problem_files(sessions_dir, proj)
    shown = ama("sessions", "show", "dddddddd", cwd=proj)
    assert "header: line 1 is not valid JSON" in shown.stdout and "#1" in shown.stdout
    for key, why in (("dir", "Is a directory"), ("loop", "Too many levels of symbolic links")):
        p = ama("sessions", "show", files[key].name.split("_")[1][:8], cwd=proj, check_rc=1)
        assert f"cannot read session file {files[key]}: {why}" in p.stderr
        assert "no session" not in p.stderr and "Traceback" not in p.stderr and "reindex" not in p.stderr
    # other commands refuse it by prefix, saying what is wrong
    refused = ama("sessions", "rename", "dddddddd", "x", cwd=proj, check_rc=1).stderr
    assert "not a readable session (damaged header: line 1 is not valid JSON)" in refused
    for key in ("damaged", "dir", "loop"):
        out = ama("sessions", "rm", str(files[key]), cwd=proj).stdout
        assert "to the trash" in out
        assert not os.path.lexists(files[key])
        assert os.path.lexists(sessions_dir / ".trash" / files[key].parent.name / files[key].name)
    assert json.loads(ama("sessions", "list", "--json", cwd=proj).stdout)["damaged"] == []


def test_a_locked_index_does_not_suggest_reindexing() -> None:
    assert "reindex" not in unusable(sqlite3.OperationalError("database is locked")).message
    assert "reindex" not in unusable(sqlite3.OperationalError("attempt to write a readonly database")).message
    assert "ama doctor --reindex" in unusable(sqlite3.DatabaseError("file is not a database")).message


def test_list_layout_more_hint_on_its_own_line_and_aligned_project(
    sessions_dir: Path, tmp_path: Path
) -> None:
    short_cwd, long_cwd = tmp_path / "a", tmp_path / "a-much-longer-project-name"
    for d in (short_cwd, long_cwd):
        d.mkdir()
        simple_session(sessions_dir, cwd=str(d), turns=1).close()
    out = ama("sessions", "list", "--all", "--limit", "1", cwd=tmp_path, merged=True).stdout
    lines = out.splitlines()
    assert lines[-2] == "" and lines[-1].startswith("more: ama sessions list --all --limit 1 --cursor ")
    rows = ama("sessions", "list", "--all", cwd=tmp_path).stdout.splitlines()
    assert [r.index("question 1") for r in rows[1:]] == [rows[0].index("TITLE")] * 2


def test_show_counts_add_up_to_the_total(sessions_dir: Path, tmp_path: Path) -> None:
    s = Session.create(str(tmp_path), sessions_dir)
    s.append_message(SystemMessage(content="be brief"))
    s.append_message(user("hi"))
    s.close()
    out = ama("sessions", "show", s.id, cwd=tmp_path).stdout
    assert "Messages  2 (user 1, assistant 0, tool results 0, system 1)" in out


def test_abbreviate_is_the_shortest_unique_prefix_of_at_least_eight() -> None:
    ids = ["019a1b2c-0000-7000", "019a1b2c-0001-7000", "019a1b2d-9999", "abcdef01"]
    assert abbreviate(ids) == {
        "019a1b2c-0000-7000": "019a1b2c-0000",
        "019a1b2c-0001-7000": "019a1b2c-0001",
        "019a1b2d-9999": "019a1b2d",
        "abcdef01": "abcdef01",
    }
    assert abbreviate(["019a1b2d-9999"], among=["019a1b2d-9998"]) == {"019a1b2d-9999": "019a1b2d-9999"}


def test_time_ordered_ids_get_unique_prefixes_everywhere_they_are_printed(
    sessions_dir: Path, tmp_path: Path
) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    ids = [f"019ad6f0-7c3{i}-7000-8000-00000000000{i}" for i in range(4)]  # one minute of UUIDv7
    for sid in ids:
        s = Session.create(str(proj), sessions_dir, session_id=sid)
        s.append_message(user(f"needle {sid[-1]}"))
        s.close()
    rows = ama("sessions", "list", cwd=proj).stdout.splitlines()[1:]
    shown = [r.split()[0] for r in rows]
    assert sorted(shown) == sorted(i[:13] for i in ids)
    for prefix in shown:  # each printed id resolves to its one session
        out = ama("sessions", "show", prefix, cwd=proj).stdout
        assert f"reuse with ama --from {prefix}#<n>" in out
    hits = ama("sessions", "search", "needle", cwd=proj).stdout.splitlines()
    assert sorted(h.split()[0] for h in hits) == sorted(f"{i[:13]}#1" for i in ids)
    refs = [
        json.loads(x)["ref"]
        for x in ama("sessions", "search", "needle", "--json", cwd=proj).stdout.splitlines()
    ]
    assert sorted(refs) == sorted(f"{i[:13]}#1" for i in ids)
    model = write_script(tmp_path / "none.json", [])
    rpc = Rpc(proj, "--model", model, "--no-session")  # RPC search: the same prefixes
    try:
        res = rpc.call("search", query="needle")
        assert sorted(h["ref"] for h in res["data"]["hits"]) == sorted(f"{i[:13]}#1" for i in ids)
    finally:
        rpc.close()


def test_a_hit_is_abbreviated_against_sessions_without_hits(sessions_dir: Path, tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    ids = [f"019ad6f0-7c3{i}-7000-8000-00000000000{i}" for i in range(3)]
    for n, sid in enumerate(ids):
        s = Session.create(str(proj), sessions_dir, session_id=sid)
        s.append_message(user("needle" if n == 1 else "hay"))
        s.close()
    for extra in ([], ["--no-cache"]):  # the index's file list and the scan's walk agree
        hits = ama("sessions", "search", "needle", *extra, cwd=proj).stdout.splitlines()
        assert [h.split()[0] for h in hits] == [f"{ids[1][:13]}#1"]
    assert ama("sessions", "search", "nothing-at-all", cwd=proj, check_rc=None).stdout == ""


def test_abbreviate_agrees_with_the_definition_on_random_ids() -> None:
    import random

    rng = random.Random(7)
    pool = ["".join(rng.choice("0123456789abcdef") for _ in range(rng.randint(6, 14))) for _ in range(400)]
    pool += [p[: rng.randint(1, len(p))] for p in pool[:50]]  # ids that are prefixes of others
    for _ in range(20):
        wanted = rng.sample(pool, 15)
        among = rng.sample(pool, 200)
        known = {x.lower() for x in (*wanted, *among)}
        got = abbreviate(wanted, among=among, min_len=8)
        for w in wanted:
            others = known - {w.lower()}
            n = next((n for n in range(8, len(w) + 1) if not any(o.startswith(w[:n].lower()) for o in others)), len(w))
            assert got[w] == w[:n], (w, got[w])
