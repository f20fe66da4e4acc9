"""Sub-agents over RPC: the golden subagent.out.jsonl (a foreground explore task, get_tasks,
get_agents) and a task read back as interrupted after the parent process was killed."""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

from tests.agent.helpers import write_script
from tests.rpc.helpers import Rpc
from tests.rpc.test_golden import compare

KEPT = ("tool_execution_start", "tool_execution_end", "subagent_start", "subagent_update", "subagent_end", "agent_settled")


def _project(ws: Path, child: str) -> None:
    (ws / ".ama").mkdir(parents=True)
    (ws / ".ama" / "config.json").write_text(json.dumps({"tasks": {"exploreModel": child}}))


def _stable(lines: list[dict]) -> list[dict]:
    """Task ids (12 hex) as <task1>…; the rest is normalized by compare()."""
    text = json.dumps(lines)
    ids: dict[str, str] = {}
    for m in re.finditer(r'"taskId": "([0-9a-f]{12})"', text):
        ids.setdefault(m.group(1), f"<task{len(ids) + 1}>")
    for raw, name in ids.items():
        text = text.replace(raw, name)
    return json.loads(text)


def test_subagent_transcript(tmp_path: Path, ama_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("the answer is 42\n")
    child = write_script(
        tmp_path / "child.json",
        [
            {"toolCalls": [{"name": "grep", "arguments": {"pattern": "answer"}}], "usage": {"input": 20, "output": 5}},
            {"text": "notes.txt:1 says the answer is 42", "usage": {"input": 30, "output": 9, "cacheRead": 10}},
        ],
        mode="sequence",
    )
    _project(ws, child)
    call = {"name": "task", "arguments": {"agent": "explore", "description": "find the answer", "prompt": "Where is the answer?"}}
    parent = write_script(tmp_path / "p.json", [{"toolCalls": [call]}, "It is 42 (notes.txt)."], mode="sequence")
    rpc = Rpc(ws, "--model", parent)
    try:
        rpc.event("session_start")
        rpc.call("prompt", message="what is the answer?")
        rpc.event("agent_settled")
        tasks = rpc.call("get_tasks")["data"]["tasks"]
        agents = rpc.call("get_agents")["data"]["agents"]
    finally:
        assert rpc.close() == 0
    assert [t["status"] for t in tasks] == ["completed"] and tasks[0]["usage"]["input"] == 50
    assert [a["name"] for a in agents if a.get("runner") == "ama"][-2:] == ["general", "explore"]
    kept = [m for m in rpc.seen if m["type"] in KEPT or m["type"] == "response"]
    for m in kept:  # durations and the per-run output dir vary
        if m.get("type") == "response" and m.get("command") == "get_tasks":
            for t in m["data"]["tasks"]:
                t["outputFile"] = "<output>"
        if m.get("type") == "response" and m.get("command") == "get_agents":  # external agents vary by machine
            m["data"]["agents"] = [a for a in m["data"]["agents"] if a.get("runner") == "ama"]
        if m.get("type") == "subagent_end":
            m["outputFile"] = "<output>"
        if m.get("type") == "tool_execution_end" and m["toolName"] == "task":
            m["result"]["details"]["outputFile"] = "<output>"
    compare("subagent.out.jsonl", _stable(kept), tmp_path, ama_home, ws)


def test_a_task_running_when_the_parent_is_killed_reads_interrupted_on_resume(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    child = write_script(tmp_path / "child.json", [{"text": "never", "delayMs": 60_000}], mode="sequence")
    _project(ws, child)
    call = {"name": "task", "arguments": {"agent": "explore", "description": "slow", "prompt": "wait", "background": True}}
    parent = write_script(tmp_path / "p.json", [{"toolCalls": [call]}, "started"], mode="sequence")
    rpc = Rpc(ws, "--model", parent)
    try:
        started = rpc.event("session_start")
        rpc.call("prompt", message="go")
        rpc.event("agent_settled")
        running = rpc.call("get_tasks")["data"]["tasks"]
        assert [t["status"] for t in running] == ["running"]
        os.kill(rpc.proc.pid, signal.SIGKILL)
        rpc.proc.wait(timeout=30)
    finally:
        if rpc.proc.poll() is None:
            rpc.proc.kill()
    again = Rpc(ws, "--model", parent, "--resume", started["sessionFile"])
    try:
        again.event("session_start")
        tasks = again.call("get_tasks")["data"]["tasks"]
    finally:
        assert again.close() == 0
    assert [t["status"] for t in tasks] == ["interrupted"]
    assert tasks[0]["taskId"] == running[0]["taskId"] and tasks[0]["sessionRef"]["sessionFile"]


def test_a_child_approval_reaches_the_rpc_client_with_its_context(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    child = write_script(
        tmp_path / "child.json", [{"toolCalls": [{"name": "bash", "arguments": {"command": "touch made"}}]}, "made it"], mode="sequence"
    )
    _project(ws, child)
    call = {"name": "task", "arguments": {"agent": "general", "description": "make", "prompt": "touch made", "model": child}}
    parent = write_script(tmp_path / "p.json", [{"toolCalls": [call]}, "done"], mode="sequence")
    rpc = Rpc(ws, "--model", parent)
    try:
        rpc.event("session_start")
        rpc.call("set_client_capabilities", capabilities=["approvals"])
        rpc.call("prompt", message="go")
        start = rpc.event("subagent_start")
        req = rpc.event("permission_request")
        assert req["toolName"] == "bash" and req["context"] == {"depth": 1, "taskId": start["taskId"]}
        assert rpc.call("permission_response", requestId=req["requestId"], decision="allow")["success"]
        end = rpc.event("subagent_end")
        rpc.event("agent_settled")
    finally:
        assert rpc.close() == 0
    assert end["status"] == "completed" and (ws / "made").exists()
