"""Catalog metadata (seed 002): error count, pending interaction, task status -- one
derivation for the scan, the index and ``sessions show``."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

from ama.messages import AssistantMessage, ToolCall, Usage
from ama.session.meta import derive
from ama.session.store import Session
from tests.conftest import ama_cmd
from tests.session.helpers import assistant, result, user


def ama(*args: str, cwd: Path) -> str:
    p = subprocess.run(ama_cmd(*args), cwd=cwd, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _run(status: str) -> dict:
    return {"executionId": f"run-{status}", "status": status, "createdAt": "2026-03-01T10:00:00.000Z"}


def _sessions(sessions_dir: Path, cwd: Path) -> dict[str, Session]:
    out = {}
    s = out["plain"] = Session.create(str(cwd), sessions_dir)
    s.append_message(user("plain"))
    s.append_message(assistant("fine"))
    s = out["errors"] = Session.create(str(cwd), sessions_dir)
    s.append_message(user("errors"))
    s.append_message(assistant("", stop="error"))
    s.append_message(assistant("", stop="error"))
    # a tool call whose arguments carry the same words is not an error
    s.append_message(
        AssistantMessage(
            content=[ToolCall(id="c1", name="write", arguments={"stopReason": "error"})],
            api="anthropic-messages",
            provider="anthropic",
            model="m",
            usage=Usage(),
            stop_reason="toolUse",
            timestamp=1,
        )
    )
    s.append_message(result("c1"))
    s.append_message(assistant("done"))
    s.append_custom("ama.run", {**_run("FAILED"), "terminalReason": "error"})
    s = out["pending"] = Session.create(str(cwd), sessions_dir)
    s.append_message(user("pending"))
    s.append_custom("ama.run", _run("RUNNING"))
    s.append_message(assistant("let me edit", [("c2", "edit")]))
    s = out["approval"] = Session.create(str(cwd), sessions_dir)
    s.append_message(user("approval"))
    s.append_message(assistant("ok"))
    s.append_custom("ama.pending_approval", {"toolCallId": "c9", "toolName": "bash"})
    for s in out.values():
        s.close()
    return out


EXPECTED = {
    "plain": (0, None, "completed"),
    "errors": (2, None, "failed"),
    "pending": (0, "tool_result", "interrupted"),  # RUNNING, but nobody holds the lease
    "approval": (0, "approval", "completed"),
}


def test_list_json_index_and_scan_and_show_agree(sessions_dir: Path, tmp_path: Path) -> None:
    made = _sessions(sessions_dir, tmp_path)
    by_id = {s.id: name for name, s in made.items()}
    for extra in ([], ["--no-cache"]):
        page = json.loads(ama("sessions", "list", "--json", *extra, cwd=tmp_path))
        got = {
            by_id[r["id"]]: (r["errorCount"], r["pendingInteraction"], r["taskStatus"])
            for r in page["sessions"]
        }
        assert got == EXPECTED, extra
    for name, s in made.items():
        shown = json.loads(ama("sessions", "show", s.id, "--json", cwd=tmp_path))
        assert (shown["errorCount"], shown["pendingInteraction"], shown["taskStatus"]) == EXPECTED[name]
    human = ama("sessions", "show", made["errors"].id, cwd=tmp_path)
    assert "Status    task failed · 2 errors" in human
    assert "[2 errors] [failed]" in ama("sessions", "list", cwd=tmp_path)


def test_index_rows_carry_the_metadata(sessions_dir: Path, tmp_path: Path, ama_home: Path) -> None:
    made = _sessions(sessions_dir, tmp_path)
    ama("sessions", "list", cwd=tmp_path)  # builds the index
    db = sqlite3.connect(ama_home / "index.db")
    rows = {
        sid: (n, p, t)
        for sid, n, p, t in db.execute(
            "SELECT session_id, error_count, pending_interaction, task_status FROM files"
        )
    }
    assert rows[made["errors"].id] == (2, None, "failed")
    assert rows[made["pending"].id] == (0, "tool_result", "running")  # as recorded; readers settle it
    assert rows[made["approval"].id] == (0, "approval", "completed")


def test_derive_ignores_damage_and_other_key_orders() -> None:
    line = {"message": {"stopReason": "error", "role": "assistant"}, "id": "a", "type": "message"}
    data = b'{"type":"session","id":"x","cwd":"/"}\n' + json.dumps(line, separators=(",", ":")).encode() + b"\n1 x\n"
    m = derive(data)
    assert (m.error_count, m.pending_interaction, m.task_status) == (1, None, "completed")
    resolved = b'{"type":"custom","id":"b","customType":"ama.pending_approval","data":{"resolved":true}}\n'
    assert derive(data + resolved).pending_interaction is None


def test_derive_counts_errors_in_any_json_spacing() -> None:
    """Files written by Python's json (``", "`` and ``": "``) count their errors too."""
    err = {"type": "message", "id": "a", "message": {"role": "assistant", "stopReason": "error"}}
    quoted = {"type": "message", "id": "b", "message": {"role": "user", "content": 'said "stopReason": "error"'}}
    data = b"".join(json.dumps(x).encode() + b"\n" for x in ({"type": "session", "id": "x", "cwd": "/"}, err, quoted, err))
    assert derive(data).error_count == 2  # the one in a string is not an error
