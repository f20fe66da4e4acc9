"""`ama sessions ...` end to end, as a user types it (real processes, real files)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from ama.messages import ImageContent, TextContent, UserMessage
from ama.session.store import Session
from tests.conftest import FIXTURES, ama_cmd
from tests.session.helpers import assistant, simple_session, user


def ama(*args: str, cwd: str | Path | None = None, check_rc: int | None = 0) -> subprocess.CompletedProcess:
    p = subprocess.run(ama_cmd(*args), cwd=cwd, capture_output=True, text=True, timeout=60)
    if check_rc is not None:
        assert p.returncode == check_rc, (p.returncode, p.stdout, p.stderr)
    return p


def test_version_and_help() -> None:
    assert ama("--version").stdout.startswith("ama ")
    out = ama("--help").stdout
    assert "sessions" in out
    for sub in ("list", "show", "fork", "archive", "unarchive", "rename", "rm", "restore", "prune"):
        assert f"usage: ama sessions {sub}" in ama("sessions", sub, "--help").stdout


def test_list_defaults_to_current_directory_and_paginates(sessions_dir: Path, tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    made = []
    for _ in range(3):
        s = simple_session(sessions_dir, cwd=str(proj), turns=1)
        s.close()
        made.append(s.id)
    other = simple_session(sessions_dir, cwd="/somewhere/else", turns=1)
    other.close()
    out = ama("sessions", "list", cwd=proj).stdout
    assert "question 1" in out and other.id[:8] not in out
    assert all(i[:8] in out for i in made)
    assert other.id[:8] in ama("sessions", "list", "--all", cwd=proj).stdout
    page1 = json.loads(ama("sessions", "list", "--limit", "2", "--json", cwd=proj).stdout)
    assert len(page1["sessions"]) == 2 and page1["nextCursor"]
    page2 = json.loads(ama("sessions", "list", "--limit", "2", "--json", "--cursor", page1["nextCursor"], cwd=proj).stdout)
    assert len(page2["sessions"]) == 1 and page2["nextCursor"] is None
    assert {x["id"] for x in page1["sessions"] + page2["sessions"]} == set(made)
    # the same cursor with another scope: refused, exit 2
    bad = ama("sessions", "list", "--all", "--limit", "2", "--cursor", page1["nextCursor"], cwd=proj, check_rc=2)
    assert "different query" in bad.stderr and "Traceback" not in bad.stderr


def test_show_numbers_user_messages_with_origin_and_images(sessions_dir: Path) -> None:
    s = Session.create("/p", sessions_dir)
    s.append_message(user("fix the parser"))
    s.append_message(assistant("done"))
    s.append_message(UserMessage(content="also this", origin="steer"))
    s.append_message(
        UserMessage(content=[TextContent(text="see screenshot"), ImageContent(data="AA==", mime_type="image/png")])
    )
    s.set_name("Parser work")
    s.close()
    out = ama("sessions", "show", s.id[:8]).stdout
    assert f"User messages (reuse with ama --from {s.id[:8]}#<n>):" in out
    lines = [ln for ln in out.splitlines() if ln.strip().startswith("#")]
    assert lines[0].split()[0] == "#1" and lines[0].endswith("fix the parser")
    assert "[steer] also this" in lines[1]
    assert "[1 image] see screenshot" in lines[2]
    assert "Parser work" in out
    data = json.loads(ama("sessions", "show", s.id, "--json").stdout)
    assert [u["n"] for u in data["userMessages"]] == [1, 2, 3]
    assert data["userMessages"][1]["origin"] == "steer" and data["userMessages"][2]["images"] == 1
    assert data["counts"]["user"] == 3 and data["name"] == "Parser work"


def test_show_context_json_is_the_projection(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir, turns=1)
    s.append_context_edit(s.entries[2].id, None, "prune")
    s.close()
    data = json.loads(ama("sessions", "show", s.id, "--context", "--json").stdout)
    roles = [m["role"] for m in data["messages"]]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    assert data["messages"][2]["isError"] is True  # the pruned result is replaced by the missing-result marker
    assert data["model"] == {"provider": "anthropic", "modelId": "claude-sonnet-4-5", "channel": None}


def test_pi_file_reads_through_session_dir(tmp_path: Path) -> None:
    pi_dir = tmp_path / "pi-sessions" / "--home-me-proj--"
    pi_dir.mkdir(parents=True)
    (pi_dir / "2026-02-20T20-17-15-095Z_1a6f6bc4-2b1e-4c7a-9d3e-5f8a0b1c2d3e.jsonl").write_bytes(
        (FIXTURES / "pi" / "v3-session.jsonl").read_bytes()
    )
    listing = json.loads(ama("sessions", "list", "--all", "--json", "--session-dir", str(tmp_path / "pi-sessions")).stdout)
    (row,) = listing["sessions"]
    assert row["name"] == "Parser crash" and row["cwd"] == "/home/me/proj" and row["messageCount"] == 10
    out = ama("sessions", "show", "1a6f", "--session-dir", str(tmp_path / "pi-sessions")).stdout
    assert "#1" in out and "fix the parser crash on empty input" in out


def test_errors_exit_codes_and_messages(sessions_dir: Path, tmp_path: Path) -> None:
    nf = ama("sessions", "show", "ffffffff", check_rc=5)
    assert "no session 'ffffffff'" in nf.stderr and str(sessions_dir) in nf.stderr
    short = ama("sessions", "show", "ab", check_rc=2)
    assert "too short" in short.stderr
    s = simple_session(sessions_dir)  # held open by this test process
    try:
        busy = ama("sessions", "rename", s.id, "new name", check_rc=3)
        assert "is being written by process" in busy.stderr and s.path in busy.stderr
    finally:
        s.close()
    assert ama("sessions", "prune", "--older-than", "soon", check_rc=2).stderr.count("invalid duration") == 1
    for out in (nf, short, busy):
        assert "Traceback" not in out.stderr


def test_damaged_header_listed_and_shown_never_changed(sessions_dir: Path) -> None:
    bad = sessions_dir / "--p--" / "x_bad.jsonl"
    bad.parent.mkdir(parents=True)
    body = b'garbage header\n{"type":"message","id":"00000001","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}\n'
    bad.write_bytes(body)
    listing = ama("sessions", "list", "--all")
    assert f"[damaged header: line 1 is not valid JSON] {bad}" in listing.stdout
    shown = ama("sessions", "show", str(bad))
    assert "Damaged" in shown.stdout and "#1" in shown.stdout
    refused = ama("sessions", "fork", str(bad), check_rc=1).stderr
    assert "is not a readable session (damaged header: line 1 is not valid JSON)" in refused and str(bad) in refused
    assert bad.read_bytes() == body


def test_fork_archive_rename_rm_restore_prune_flow(sessions_dir: Path, tmp_path: Path) -> None:
    proj = tmp_path / "w"
    proj.mkdir()
    s = simple_session(sessions_dir, cwd=str(proj))
    s.close()
    child = ama("sessions", "fork", s.id[:8]).stdout.strip()
    assert len(child) == 36
    shown = json.loads(ama("sessions", "show", s.id, "--json").stdout)
    assert shown["forks"] == [child]
    ama("sessions", "archive", s.id[:8])
    assert ama("sessions", "list", cwd=proj).stdout == ""
    archived = json.loads(ama("sessions", "list", "--archived", "--json", cwd=proj).stdout)
    assert {x["id"] for x in archived["sessions"]} == {s.id, child}
    assert json.loads(ama("sessions", "show", child, "--json").stdout)["archived"] is True
    ama("sessions", "unarchive", s.id[:8])
    ama("sessions", "rename", child[:8], "the fork")
    assert "the fork" in ama("sessions", "list", cwd=proj).stdout
    ama("sessions", "rm", child[:8])
    assert child[:8] not in ama("sessions", "list", cwd=proj).stdout
    ama("sessions", "restore", child[:8])
    assert child[:8] in ama("sessions", "list", cwd=proj).stdout
    ama("sessions", "rm", child[:8])
    pruned = json.loads(ama("sessions", "prune", "--older-than", "0s", "--json").stdout)
    assert len(pruned["removed"]) == 1 and child in pruned["removed"][0]


def test_prune_keeps_every_backup_while_a_session_file_cannot_be_read(sessions_dir: Path, tmp_path: Path) -> None:
    link = sessions_dir / "on-another-disk.jsonl"
    link.symlink_to(tmp_path / "not-mounted" / "s.jsonl")
    r = ama("sessions", "prune")
    assert f"cannot read session file {link}" in r.stderr
    assert "kept all 0 backup blob(s): 1 session file(s) could not be read" in r.stdout
    data = json.loads(ama("sessions", "prune", "--json").stdout)
    assert data["fileHistory"]["unreadable"] == [str(link)] and data["fileHistory"]["removed"] == 0


def test_a_fifo_named_like_a_session_never_blocks_a_reader(sessions_dir: Path, tmp_path: Path) -> None:
    """Every reader opens session files without waiting: a FIFO is skipped by listings and
    refused, with a clear error, when named directly."""
    ws = tmp_path / "w"
    ws.mkdir()
    simple_session(sessions_dir, str(ws))
    fifo = sessions_dir / "pipe.jsonl"
    os.mkfifo(fifo)
    assert "pipe" not in ama("sessions", "list", "--all").stdout
    ama("stats")
    ama("sessions", "search", "anything", "--all", check_rc=None)
    for argv in (("sessions", "show", str(fifo)), ("sessions", "export", str(fifo))):
        r = ama(*argv, check_rc=1)
        assert "not a regular file" in r.stderr and "Traceback" not in r.stderr
