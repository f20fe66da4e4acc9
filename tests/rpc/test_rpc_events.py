"""Seed 004's event table: ``session_changed`` and ``permission_request.preview``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ama.sandbox import detect
from tests.agent.helpers import write_script
from tests.rpc.helpers import Rpc


def _last_changed(rpc: Rpc) -> dict:
    return next(m for m in reversed(rpc.seen) if m.get("type") == "session_changed")


def test_session_changed_on_new_switch_and_fork(tmp_path: Path, ama_home: Path) -> None:
    model = write_script(tmp_path / "s.json", ["one", "two"])
    rpc = Rpc(tmp_path, "--model", model)
    try:
        first = rpc.event("session_start")
        rpc.call("prompt", message="hello")
        rpc.event("agent_settled")
        rpc.call("new_session")  # session_start and session_changed come before the response
        new = _last_changed(rpc)
        assert new["sessionId"] != first["sessionId"]
        assert new["sessionFile"].endswith(".jsonl") and Path(new["sessionFile"]).parent.is_dir()
        rpc.call("switch_session", sessionId=first["sessionId"])
        back = _last_changed(rpc)
        assert back == {"type": "session_changed", "sessionId": first["sessionId"], "sessionFile": first["sessionFile"]}
        msgs = rpc.call("get_fork_messages")["data"]["messages"]
        fork = rpc.call("fork", entryId=msgs[0]["entryId"])
        forked = _last_changed(rpc)
        assert forked["sessionId"] == fork["data"]["sessionId"] != first["sessionId"]
    finally:
        assert rpc.close() == 0
    changed = [m for m in rpc.seen if m.get("type") == "session_changed"]
    assert len(changed) == 3  # not at startup: session_start says which session that is
    # each change comes right after the session_start of the new session
    for m in changed:
        i = rpc.seen.index(m)
        assert rpc.seen[i - 1]["type"] == "session_start" and rpc.seen[i - 1]["sessionId"] == m["sessionId"]


def test_session_changed_without_a_file(tmp_path: Path, ama_home: Path) -> None:
    model = write_script(tmp_path / "s.json", ["one"])
    rpc = Rpc(tmp_path, "--model", model, "--no-session")
    try:
        rpc.event("session_start")
        rpc.call("new_session")
        changed = _last_changed(rpc)
        assert set(changed) == {"type", "sessionId"}
    finally:
        rpc.close()
    assert not list(ama_home.rglob("*.jsonl"))  # --no-session: new_session stays in memory too


def _asks(tmp_path: Path, calls: list[dict], answers: int) -> list[dict]:
    model = write_script(tmp_path / "s.json", [{"toolCalls": calls}, "done"])
    rpc = Rpc(tmp_path, "--model", model)
    try:
        rpc.event("session_start")
        rpc.call("set_client_capabilities", capabilities=["approvals"])
        rpc.call("prompt", message="go")
        asks = []
        for _ in range(answers):
            req = rpc.event("permission_request")
            asks.append(req)
            rpc.call("permission_response", requestId=req["requestId"], decision="allow")
        rpc.event("agent_settled")
    finally:
        rpc.close()
    return asks


def test_permission_request_preview_of_edit_write_and_bash(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    (tmp_path / "b.txt").write_text("old\n")
    calls = [
        {"id": "r", "name": "read", "arguments": {"path": "a.txt"}},
        {"id": "e", "name": "edit", "arguments": {"path": "a.txt", "old_string": "two", "new_string": "TWO"}},
        {"id": "w", "name": "write", "arguments": {"path": "b.txt", "content": "new\n"}},
        {"id": "n", "name": "write", "arguments": {"path": "c.txt", "content": "fresh\n"}},
        {"id": "b", "name": "bash", "arguments": {"command": "echo hi > made.txt"}},
        {"id": "x", "name": "edit", "arguments": {"path": "a.txt", "old_string": "absent", "new_string": "y"}},
    ]
    edit, write, created, bash, failing = _asks(tmp_path, calls, 5)
    assert edit["preview"] == {
        "kind": "diff",
        "path": str(tmp_path / "a.txt"),
        "diff": "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
    }
    assert write["preview"]["diff"] == "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-old\n+new\n"
    assert write["preview"]["created"] is False
    assert created["preview"]["created"] is True and "+fresh\n" in created["preview"]["diff"]
    assert bash["preview"] == {
        "kind": "command",
        "command": "echo hi > made.txt",
        "background": False,
        "sandboxed": False,
        "sandbox": "none",  # sandbox.bash is off by default
    }
    assert "preview" not in failing  # old_string does not match: nothing to show, the call fails
    assert (tmp_path / "a.txt").read_text() == "one\nTWO\nthree\n"  # the preview wrote nothing itself


@pytest.mark.skipif(detect(refresh=True).kind != "bwrap", reason="no working bubblewrap here")
def test_bash_preview_names_the_sandbox(tmp_path: Path, ama_home: Path) -> None:
    (ama_home / "config.json").write_text(json.dumps({"sandbox": {"bash": "auto"}}))
    calls = [{"id": "b", "name": "bash", "arguments": {"command": "echo out", "sandbox": False}}]
    (bash,) = _asks(tmp_path, calls, 1)
    assert bash["preview"]["sandbox"] == "bwrap" and bash["preview"]["sandboxed"] is False
