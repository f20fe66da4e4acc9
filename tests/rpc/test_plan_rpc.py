"""Plan approval over RPC: the golden ``plan.out.jsonl`` round trip and the other answers
(revise, reject, edited Markdown, unattended approve), end to end with the scripted provider."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agent.helpers import write_script
from tests.rpc.helpers import Rpc
from tests.rpc.test_golden import compare

PLAN_REPLY = """I read the code. Here is my plan.

<proposed_plan>
# Add a greeting

The module has no greet function yet.

1. Add `greet()` to hello.py
2. Test it {dependsOn=1}
</proposed_plan>"""

PLAN_TYPES = ("ama.plan", "ama.plan_state", "ama.plan_mode", "ama.plan_mode_exit", "ama.plan_approved", "ama.todo")


def _kept(seen: list[dict]) -> list[dict]:
    """The transcript without entry_appended (except plan and todo entries) and message_update."""
    out = []
    for m in seen:
        if m["type"] == "message_update":
            continue
        if m["type"] == "entry_appended" and m["entry"].get("customType") not in PLAN_TYPES:
            continue
        out.append(m)
    return out


def _stable(lines: list[dict], plan: dict) -> list[dict]:
    text = json.dumps(lines).replace(plan["id"], "<plan1>").replace(plan["sourceEntryId"], "<source>")
    return json.loads(text)


def test_plan_transcript(tmp_path: Path, ama_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    model = write_script(tmp_path / "s.json", [PLAN_REPLY, "Added greet() and its test."], mode="sequence")
    rpc = Rpc(ws, "--model", model)
    try:
        rpc.event("session_start")
        rpc.call("set_client_capabilities", capabilities=["plans"])
        rpc.call("set_permission_mode", mode="plan")
        rpc.call("prompt", message="add a greeting")
        proposed = rpc.event("plan_proposed")
        rpc.event("agent_settled")
        plan = rpc.call("get_plan")["data"]
        assert plan["status"] == "proposed" and plan["id"] == proposed["planId"]
        assert [s["id"] for s in plan["steps"]] == ["1", "2"] and plan["steps"][1]["dependsOn"] == ["1"]
        answer = rpc.call("plan_response", planId=plan["id"], decision="approve")
        assert answer["data"]["mode"] == "default"
        rpc.event("agent_settled")
        todos = rpc.call("get_todos")["data"]["items"]
        assert [(t["planStep"], t["status"]) for t in todos] == [("1", "in_progress"), ("2", "pending")]
        assert rpc.call("get_plan")["data"]["status"] == "approved"
    finally:
        assert rpc.close() == 0
    path = Path(plan["filePath"])
    assert path == ws / ".ama" / "plans" / "add-a-greeting-v1.md"
    assert "1. Add `greet()` to hello.py" in path.read_text()
    kept = _kept(rpc.seen)
    types = [m["type"] if m["type"] != "response" else f"response:{m['command']}" for m in kept]
    settled = types.index("agent_settled")
    assert types.index("plan_proposed") < settled
    answer_at = types.index("response:plan_response")
    between = [t for t in types[settled:answer_at] if t in ("todo_updated", "plan_resolved", "permission_mode_changed")]
    assert between == ["todo_updated", "plan_resolved", "permission_mode_changed"]
    compare("plan.out.jsonl", _stable(kept, plan), tmp_path, ama_home, ws)


def _plan_session(tmp_path: Path, turns: list, *extra: str) -> tuple[Rpc, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    model = write_script(tmp_path / "s.json", turns, mode="sequence")
    rpc = Rpc(ws, "--model", model, "--permission-mode", "plan", *extra)
    rpc.event("session_start")
    return rpc, ws


def test_revise_then_reject(tmp_path: Path, ama_home: Path) -> None:
    second = PLAN_REPLY.replace("2. Test it {dependsOn=1}", "2. Test it\n3. Document it")
    rpc, ws = _plan_session(tmp_path, [PLAN_REPLY, second])
    try:
        rpc.call("set_client_capabilities", capabilities=["plans"])
        rpc.call("prompt", message="add a greeting")
        first = rpc.event("plan_proposed")
        rpc.event("agent_settled")
        bad = rpc.call("plan_response", planId="plan-nope", decision="approve")
        assert bad["error"]["code"] == "plan_not_found" and "plan-nope" in bad["error"]["message"]
        odd = rpc.call("plan_response", planId=first["planId"], decision="maybe")
        assert odd["error"]["code"] == "invalid_arguments" and "maybe" in odd["error"]["message"]
        rpc.call("plan_response", planId=first["planId"], decision="revise", feedback="also document it")
        again = rpc.event("plan_proposed")
        rpc.event("agent_settled")
        assert (again["planId"], again["version"]) == (first["planId"], 2)
        assert [s["text"] for s in again["steps"]][-1] == "Document it"
        state = rpc.call("get_state")["data"]
        assert state["permissionMode"] == "plan"
        rpc.call("plan_response", planId=first["planId"], decision="reject")
        assert rpc.call("get_plan")["data"]["status"] == "rejected"
        assert rpc.call("get_state")["data"]["permissionMode"] == "plan"
        entries = rpc.call("get_entries")["data"]["entries"]
    finally:
        assert rpc.close() == 0
    statuses = [(e["data"]["version"], e["data"]["status"]) for e in entries if e.get("customType") == "ama.plan"]
    assert statuses == [(1, "proposed"), (1, "superseded"), (2, "proposed"), (2, "rejected")]
    users = [e["message"]["content"] for e in entries if e["type"] == "message" and e["message"]["role"] == "user"]
    assert users == ["add a greeting", "also document it"]
    names = sorted(p.name for p in (ws / ".ama" / "plans").iterdir())
    assert names == ["add-a-greeting-v1.md", "add-a-greeting-v2.md"]


def test_edited_markdown_is_a_new_version_then_approved(tmp_path: Path, ama_home: Path) -> None:
    rpc, ws = _plan_session(tmp_path, [PLAN_REPLY, "[DONE:1]\nAdded greet().", "[DONE:2]\nTested."])
    try:
        rpc.call("set_client_capabilities", capabilities=["plans"])
        rpc.call("prompt", message="add a greeting")
        first = rpc.event("plan_proposed")
        rpc.event("agent_settled")
        edited = "# Add a greeting\n\n1. Add greet()\n2. Test greet()\n"
        ans = rpc.call("plan_response", planId=first["planId"], decision="approve", mode="auto-edit", editedMarkdown=edited)
        assert ans["data"]["version"] == 2 and ans["data"]["mode"] == "auto-edit"
        rpc.event("agent_settled")
        todos = rpc.call("get_todos")["data"]["items"]
        rpc.call("prompt", message="continue")
        rpc.event("agent_settled")
        later = rpc.call("get_todos")["data"]["items"]
        plan = rpc.call("get_plan")["data"]
    finally:
        assert rpc.close() == 0
    assert plan["version"] == 2 and plan["status"] == "approved" and plan["markdown"] == edited.strip()
    assert [(t["text"], t["status"]) for t in todos] == [("Add greet()", "done"), ("Test greet()", "in_progress")]
    assert [t["status"] for t in later] == ["done", "done"]
    updates = [m for m in rpc.seen if m["type"] == "todo_updated"]
    assert len(updates) == 3  # approval, [DONE:1], [DONE:2]
    assert (ws / ".ama" / "plans" / "add-a-greeting-v2.md").read_text().endswith("2. Test greet()\n")


def test_plan_mode_refuses_writes(tmp_path: Path, ama_home: Path) -> None:
    call = {"toolCalls": [{"name": "write", "arguments": {"path": "x.txt", "content": "x"}}]}
    rpc, ws = _plan_session(tmp_path, [call, PLAN_REPLY])
    try:
        rpc.call("set_client_capabilities", capabilities=["plans", "approvals"])
        rpc.call("prompt", message="write x")
        end = rpc.event("tool_execution_end")
        rpc.event("agent_settled")
    finally:
        assert rpc.close() == 0
    assert end["isError"] and "plan mode" in json.dumps(end["result"])
    assert not (ws / "x.txt").exists()


def test_unattended_stop_and_approve(tmp_path: Path, ama_home: Path) -> None:
    import subprocess

    from tests.conftest import ama_cmd

    ws = tmp_path / "ws"
    ws.mkdir()
    model = write_script(tmp_path / "s.json", [PLAN_REPLY, "Executed the plan."], mode="sequence")
    base = ["-p", "add a greeting", "--model", model, "--permission-mode", "plan", "--output-format", "json"]
    out = subprocess.run(ama_cmd(*base), cwd=ws, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "<proposed_plan>" in json.loads(out.stdout)["text"]  # stop: the plan waits
    (ama_home / "config.json").write_text(json.dumps({"plan": {"unattended": "approve"}}))
    out = subprocess.run(ama_cmd(*base), cwd=ws, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["text"] == "Executed the plan."


def test_approve_fresh_starts_a_new_session_with_the_plan(tmp_path: Path, ama_home: Path) -> None:
    rpc, ws = _plan_session(tmp_path, [PLAN_REPLY, "Working on it."])
    try:
        rpc.call("set_client_capabilities", capabilities=["plans"])
        rpc.call("prompt", message="add a greeting")
        first = rpc.event("plan_proposed")
        rpc.event("agent_settled")
        old = rpc.call("get_state")["data"]["sessionId"]
        ans = rpc.call("plan_response", planId=first["planId"], decision="approve_fresh", mode="auto-edit")
        start = next(m for m in rpc.seen if m["type"] == "session_start" and m["reason"] == "new")
        rpc.event("agent_settled")
        state = rpc.call("get_state")["data"]
        msgs = rpc.call("get_messages")["data"]["messages"]
        todos = rpc.call("get_todos")["data"]["items"]
        plan = rpc.call("get_plan")["data"]
    finally:
        assert rpc.close() == 0
    assert ans["data"]["sessionId"] == start["sessionId"] == state["sessionId"] != old
    assert state["permissionMode"] == "auto-edit"
    users = [m for m in msgs if m["role"] == "user"]
    assert len(users) == 1 and users[0]["content"].startswith("# Add a greeting") and users[0]["origin"] == "plan"
    assert [t["planStep"] for t in todos] == ["1", "2"] and plan["status"] == "approved"


def test_rpc_without_plans_capability_uses_plan_unattended(tmp_path: Path, ama_home: Path) -> None:
    (ama_home / "config.json").write_text(json.dumps({"plan": {"unattended": "approve"}}))
    rpc, ws = _plan_session(tmp_path, [PLAN_REPLY, "Executed."])
    try:
        rpc.call("prompt", message="add a greeting")
        rpc.event("plan_proposed")
        rpc.event("agent_settled")
        resolved = rpc.event("plan_resolved")
        rpc.event("agent_settled")
        text = rpc.call("get_last_assistant_text")["data"]["text"]
        mode = rpc.call("get_state")["data"]["permissionMode"]
    finally:
        assert rpc.close() == 0
    assert resolved["decision"] == "approve" and text == "Executed." and mode == "default"


def test_approve_compact_compacts_then_executes_with_the_plan(tmp_path: Path, ama_home: Path) -> None:
    turns = ["I looked at hello.py.", PLAN_REPLY, "Summary: hello.py has no greet().", "[DONE:1]\nAdded greet()."]
    rpc, ws = _plan_session(tmp_path, turns)
    try:
        rpc.call("set_client_capabilities", capabilities=["plans"])
        rpc.call("prompt", message="look at hello.py")
        rpc.event("agent_settled")
        rpc.call("prompt", message="plan a greeting")
        first = rpc.event("plan_proposed")
        rpc.event("agent_settled")
        ans = rpc.call("plan_response", planId=first["planId"], decision="approve_compact", mode="auto-edit")
        rpc.event("agent_settled")
        entries = rpc.call("get_entries")["data"]["entries"]
        msgs = rpc.call("get_messages")["data"]["messages"]
        todos = rpc.call("get_todos")["data"]["items"]
        plan = rpc.call("get_plan")["data"]
        state = rpc.call("get_state")["data"]
    finally:
        assert rpc.close() == 0
    assert ans["success"] and ans["data"]["compacted"] is True and ans["data"]["mode"] == "auto-edit"
    types = [m["type"] if m["type"] != "response" else f"response:{m['command']}" for m in rpc.seen]
    at = types.index("response:plan_response")
    order = [t for t in types[:at] if t in ("todo_updated", "plan_resolved", "permission_mode_changed", "compaction_end")]
    assert order[-4:] == ["todo_updated", "plan_resolved", "permission_mode_changed", "compaction_end"]
    kinds = [e.get("customType") or e["type"] for e in entries if e.get("customType") not in ("ama.reminder", "ama.run")]
    comp = kinds.index("compaction")
    assert kinds[comp + 1] == "ama.plan_approved" and kinds[comp + 2] == "message"  # then the execution turn
    summary = next(e for e in entries if e["type"] == "compaction")["summary"]
    assert "Todo list:" in summary and "Add `greet()` to hello.py" in summary  # the plan's steps survive
    assert f"Active plan: {first['planId']} v1 (approved)" in summary  # and a pointer to the plan
    assert plan["status"] == "approved" and state["permissionMode"] == "auto-edit"
    assert [(t["planStep"], t["status"]) for t in todos] == [("1", "done"), ("2", "in_progress")]
    users = [m for m in msgs if m["role"] == "user"]
    assert users[-1]["content"] == "The plan is approved. Go ahead." and users[-1]["origin"] == "plan"
    assert "look at hello.py" not in json.dumps(msgs[2:])  # the planning talk is summarized away
    assert any("2. Test it" in json.dumps(m) for m in msgs)  # the approved note carries the plan


def test_approve_compact_that_cannot_compact_still_executes(tmp_path: Path, ama_home: Path) -> None:
    (ama_home / "config.json").write_text(json.dumps({"compaction": {"enabled": False}}))
    rpc, ws = _plan_session(tmp_path, [PLAN_REPLY, "Executed."])
    try:
        rpc.call("set_client_capabilities", capabilities=["plans"])
        rpc.call("prompt", message="add a greeting")
        first = rpc.event("plan_proposed")
        rpc.event("agent_settled")
        ans = rpc.call("plan_response", planId=first["planId"], decision="approve_compact")
        warn = next(m for m in rpc.seen if m["type"] == "notification" and m.get("level") == "warn")
        rpc.event("agent_settled")
        text = rpc.call("get_last_assistant_text")["data"]["text"]
    finally:
        assert rpc.close() == 0
    assert ans["data"]["compacted"] is False and "not compacted before the plan" in warn["message"]
    assert "compaction is off" in warn["message"]
    assert text == "Executed."
