"""Task sub-agents in process: foreground, background, parallel, continued, caps, approvals,
rewind of a child's edits, worktrees (docs/agents.md).  Models are scripted files."""

from __future__ import annotations

import asyncio
import functools
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ama.agent.approvals import CallbackBroker
from ama.messages import ToolResultMessage, UserMessage
from ama.session.reader import read_session
from tests.agent.helpers import make_agent, write_script


def sync(fn: Any) -> Any:
    """Run an async test in a fresh event loop."""

    @functools.wraps(fn)
    def run(*args: Any, **kw: Any) -> Any:
        return asyncio.run(fn(*args, **kw))

    return run


def task_call(**args: Any) -> dict:
    return {"toolCalls": [{"name": "task", "arguments": {"description": "look", "prompt": "do it", **args}}]}


def setup(tmp_path: Path, child_turns: list, config: dict | None = None, **script: Any) -> tuple[Path, str]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    child = write_script(tmp_path / "child.json", child_turns, mode="sequence", **script)
    (ws / ".ama").mkdir(exist_ok=True)
    cfg = {"tasks": {"exploreModel": child, **(config or {})}}
    (ws / ".ama" / "config.json").write_text(json.dumps(cfg))
    return ws, child


def messages(path: str, cls: type) -> list[Any]:
    return [e.message for e in read_session(path).entries if isinstance(getattr(e, "message", None), cls)]


def of(events: list[dict], kind: str) -> list[dict]:
    return [e for e in events if e["type"] == kind]


def tool_result(events: list[dict], name: str = "task") -> dict:
    return next(e for e in events if e["type"] == "tool_execution_end" and e["toolName"] == name)


def text_of(ev: dict) -> str:
    return "".join(b.get("text", "") for b in ev["result"]["content"])


@sync
async def test_foreground_explore_runs_a_read_only_child_in_its_own_session(tmp_path: Path) -> None:
    ws, child = setup(
        tmp_path,
        [{"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}, {"name": "write", "arguments": {"path": "x", "content": "x"}}]}, "a.txt says hello"],
    )
    (ws / "a.txt").write_text("hello\n")
    parent = write_script(tmp_path / "p.json", [task_call(agent="explore"), "ok"], mode="sequence")
    agent, events = await make_agent(ws, parent, permission_mode="full-auto")
    try:
        r = await agent.prompt("go")
    finally:
        await agent.close()
    assert r.text == "ok"
    end = tool_result(events)
    assert not end["isError"] and text_of(end).startswith("a.txt says hello")
    assert not (ws / "x").exists()  # explore has no write tool, even in full-auto
    start, = of(events, "subagent_start")
    assert start["agent"] == "explore" and start["runner"] == "ama" and start["background"] is False
    assert start["model"] == child and start["cwd"] == str(ws)
    ends = of(events, "subagent_end")
    assert [e["status"] for e in ends] == ["completed"]
    assert [u["kind"] for u in of(events, "subagent_update")][:2] == ["turn", "tool"]
    # the child session: lineage to the parent, ama.task first entry without status
    data = read_session(start["sessionFile"])
    assert data.header.parent_session == agent.session.path and data.header.relation_type == "task"
    first = data.entries[0]
    assert first.custom_type == "ama.task" and "status" not in first.data
    assert first.data["taskId"] == start["taskId"] and first.data["agent"] == "explore"
    results = messages(start["sessionFile"], ToolResultMessage)
    assert "Unknown tool 'write'" in results[1].content[0].text
    # the parent's TaskInfo entries: at start and at the end
    infos = [e.data for e in read_session(agent.session.path).entries if getattr(e, "custom_type", None) == "ama.task"]
    assert [i["status"] for i in infos] == ["running", "completed"]
    assert infos[-1]["sessionRef"]["sessionFile"] == start["sessionFile"] and infos[-1]["turns"] == 2


@sync
async def test_background_task_notification_starts_a_new_turn(tmp_path: Path) -> None:
    ws, _ = setup(tmp_path, [{"text": "background result", "delayMs": 50}])
    parent = write_script(
        tmp_path / "p.json", [task_call(agent="explore", background=True), "started it", "saw the result"], mode="sequence"
    )
    agent, events = await make_agent(ws, parent)
    try:
        r = await agent.prompt("go")
        assert r.text == "started it"
        assert "Started background task" in text_of(tool_result(events))
        for _ in range(600):
            if len(of(events, "agent_settled")) >= 2:
                break
            await asyncio.sleep(0.05)
    finally:
        await agent.close()
    assert len(of(events, "agent_settled")) == 2
    users = [e["message"] for e in of(events, "message_end") if e["message"]["role"] == "user"]
    note = users[-1]
    assert note["origin"] == "task" and note["content"].startswith("<task-notification ")
    assert "background result" in note["content"] and 'status="completed"' in note["content"]
    assert agent.session.context().messages[-1].content[0].text == "saw the result"


@sync
async def test_two_task_calls_in_one_message_run_concurrently(tmp_path: Path) -> None:
    ws, _ = setup(tmp_path, [])
    a = write_script(tmp_path / "a.json", [{"text": "A done", "delayMs": 300}])
    b = write_script(tmp_path / "b.json", [{"text": "B done", "delayMs": 300}])
    calls = [
        {"name": "task", "arguments": {"agent": "general", "description": "a", "prompt": "a", "model": a}},
        {"name": "task", "arguments": {"agent": "general", "description": "b", "prompt": "b", "model": b}},
    ]
    parent = write_script(tmp_path / "p.json", [{"toolCalls": calls}, "both"], mode="sequence")
    agent, events = await make_agent(ws, parent)
    try:
        await agent.prompt("go")
    finally:
        await agent.close()
    kinds = [e["type"] for e in events if e["type"] in ("subagent_start", "subagent_end")]
    assert kinds == ["subagent_start", "subagent_start", "subagent_end", "subagent_end"]
    texts = [text_of(e) for e in of(events, "tool_execution_end")]
    assert texts[0].startswith("A done") and texts[1].startswith("B done")  # results in call order


@sync
async def test_max_parallel_one_runs_them_one_after_the_other(tmp_path: Path) -> None:
    ws, _ = setup(tmp_path, [], {"maxParallel": 1})
    a = write_script(tmp_path / "a.json", [{"text": "A done", "delayMs": 100}])
    b = write_script(tmp_path / "b.json", [{"text": "B done", "delayMs": 100}])
    calls = [
        {"name": "task", "arguments": {"description": "a", "prompt": "a", "model": a}},
        {"name": "task", "arguments": {"description": "b", "prompt": "b", "model": b}},
    ]
    parent = write_script(tmp_path / "p.json", [{"toolCalls": calls}, "both"], mode="sequence")
    agent, events = await make_agent(ws, parent)
    try:
        await agent.prompt("go")
    finally:
        await agent.close()
    kinds = [e["type"] for e in events if e["type"] in ("subagent_start", "subagent_end")]
    assert kinds == ["subagent_start", "subagent_end", "subagent_start", "subagent_end"]


@sync
async def test_task_id_continues_the_same_child_session(tmp_path: Path) -> None:
    ws, _ = setup(tmp_path, ["first answer", "second answer"])
    parent = write_script(tmp_path / "p.json", [task_call(agent="explore"), "one"], mode="sequence")
    agent, events = await make_agent(ws, parent)
    try:
        await agent.prompt("go")
        task_id = of(events, "subagent_start")[0]["taskId"]
        (tmp_path / "p.json").write_text(json.dumps({"turns": [task_call(taskId=task_id, prompt="and more"), "two"], "mode": "sequence"}))
        from ama.ai import scripted

        scripted.reset(tmp_path / "p.json")
        await agent.prompt("again")
    finally:
        await agent.close()
    starts = of(events, "subagent_start")
    assert [s["taskId"] for s in starts] == [task_id, task_id]
    assert starts[0]["sessionFile"] == starts[1]["sessionFile"]
    assert text_of(of(events, "tool_execution_end")[-1]).startswith("second answer")
    users = [m.content for m in messages(starts[0]["sessionFile"], UserMessage)]
    assert users == ["do it", "and more"]
    assert [i["status"] for i in agent.tasks.registry.view()] == ["completed"]


@sync
async def test_turn_cap_ends_the_task_max_turns_not_success(tmp_path: Path) -> None:
    loop_turn = {"toolCalls": [{"name": "ls", "arguments": {}}]}
    ws, _ = setup(tmp_path, [loop_turn] * 5, {"maxTurns": 2})
    parent = write_script(tmp_path / "p.json", [task_call(agent="explore"), "ok"], mode="sequence")
    agent, events = await make_agent(ws, parent)
    try:
        await agent.prompt("go")
    finally:
        await agent.close()
    end = tool_result(events)
    assert end["isError"] and "ended max_turns" in text_of(end)
    sub = of(events, "subagent_end")[0]
    assert sub["status"] == "max_turns"
    assert agent.tasks.registry.view()[0]["limit"]["kind"] == "turns"


@sync
async def test_cost_cap_and_wall_time_cap(tmp_path: Path) -> None:
    pricey = {"text": "", "toolCalls": [{"name": "ls", "arguments": {}}], "usage": {"input": 1, "output": 0}}
    ws, _ = setup(tmp_path, [pricey] * 4, {"maxCost": 1.5}, cost={"input": 1_000_000})
    parent = write_script(tmp_path / "p.json", [task_call(agent="explore"), "ok"], mode="sequence")
    agent, events = await make_agent(ws, parent)
    try:
        await agent.prompt("go")
    finally:
        await agent.close()
    info = agent.tasks.registry.view()[0]
    assert info["status"] == "max_turns" and info["limit"]["kind"] == "cost" and info["costUsd"] == 2.0

    slow_ws = tmp_path / "slow"
    slow_ws.mkdir()
    ws2, _ = setup(slow_ws, [{"text": "late", "delayMs": 20_000}], {"maxWallTime": 0.3})
    parent2 = write_script(slow_ws / "p.json", [task_call(agent="explore"), "ok"], mode="sequence")
    agent2, events2 = await make_agent(ws2, parent2)
    try:
        await agent2.prompt("go")
    finally:
        await agent2.close()
    info2 = agent2.tasks.registry.view()[0]
    assert info2["status"] == "max_turns" and info2["limit"]["kind"] == "wallTime"


@sync
async def test_max_per_session_and_max_depth(tmp_path: Path, ama_home: Path) -> None:
    ws, _ = setup(tmp_path, ["one", "two"], {"maxPerSession": 1})
    parent = write_script(tmp_path / "p.json", [task_call(agent="explore"), task_call(agent="explore"), "ok"], mode="sequence")
    agent, events = await make_agent(ws, parent)
    try:
        await agent.prompt("go")
    finally:
        await agent.close()
    ends = of(events, "tool_execution_end")
    assert not ends[0]["isError"] and ends[1]["isError"] and "tasks.maxPerSession" in text_of(ends[1])
    assert len(agent.tasks.registry.view()) == 1
    # depth: a child (depth 1) gets no task tool by default; maxDepth 2 gives it one
    from ama.agent.guard import Limits
    from ama.agent.subagents.definitions import BUILTINS
    from ama.agent.subagents.registry import TaskInfo
    from ama.agent.subagents.runner import ChildSpec, build_child, close_child

    for max_depth, expect in ((1, False), (2, True)):
        # a project may only lower tasks.maxDepth: the user's config raises it
        (ama_home / "config.json").write_text(json.dumps({"tasks": {"maxDepth": max_depth}}))
        agent, _ = await make_agent(ws, parent)
        info = TaskInfo("t1", "general", "ama", "d", False, "running", "", "c1", str(ws))
        child = build_child(agent, ChildSpec(info, BUILTINS[0], "p", None, 1, Limits(), max_depth=max_depth))
        child_tools = child.active_tool_names
        await close_child(child)
        await agent.close()
        assert ("task" in child_tools) is expect, (max_depth, child_tools)


@sync
async def test_child_approval_carries_context_and_denial_reaches_the_parent(tmp_path: Path) -> None:
    ws, _ = setup(tmp_path, [{"toolCalls": [{"name": "bash", "arguments": {"command": "touch made"}}]}, "could not run it"])
    asked: list[dict] = []

    async def answer(req: dict) -> str:
        asked.append(req)
        return "deny"

    child_model = str(tmp_path / "child.json")
    parent = write_script(tmp_path / "p.json", [task_call(agent="general", model=f"scripted/{child_model}"), "ok"], mode="sequence")
    agent, events = await make_agent(ws, parent, broker=CallbackBroker(answer))
    try:
        await agent.prompt("go")
    finally:
        await agent.close()
    task_id = of(events, "subagent_start")[0]["taskId"]
    assert len(asked) == 1 and asked[0]["toolName"] == "bash"
    assert asked[0]["context"] == {"depth": 1, "taskId": task_id}
    req, = of(events, "permission_request")  # relayed to the parent's listeners
    assert req["context"] == {"depth": 1, "taskId": task_id}
    assert of(events, "permission_resolved")[0]["decision"] == "deny"
    text = text_of(tool_result(events))
    assert "denied or not approved (bash)" in text
    assert not (ws / "made").exists()


@sync
async def test_plan_mode_parent_keeps_its_child_read_only(tmp_path: Path) -> None:
    ws, child = setup(tmp_path, [{"toolCalls": [{"name": "write", "arguments": {"path": "p.txt", "content": "x"}}]}, "blocked"])
    (ws / ".ama" / "agents").mkdir()
    (ws / ".ama" / "agents" / "writer.md").write_text(
        f"---\nname: writer\ndescription: writes\nmodel: {child}\npermissionMode: full-auto\n---\nWrite files.\n"
    )
    parent = write_script(tmp_path / "p.json", [task_call(agent="writer"), "ok"], mode="sequence")
    agent, events = await make_agent(ws, parent, permission_mode="plan")
    try:
        await agent.prompt("go")
    finally:
        await agent.close()
    assert not (ws / "p.txt").exists()
    child_file = of(events, "subagent_start")[0]["sessionFile"]
    results = messages(child_file, ToolResultMessage)
    assert "plan mode" in results[0].content[0].text


@sync
async def test_rewinding_the_parent_undoes_a_child_edit(tmp_path: Path) -> None:
    ws, _ = setup(tmp_path, [{"toolCalls": [{"name": "write", "arguments": {"path": "b.txt", "content": "child\n"}}]}, "wrote"])
    (ws / "a.txt").write_text("keep\n")
    child_model = str(tmp_path / "child.json")
    parent = write_script(
        tmp_path / "p.json", ["hi", task_call(agent="general", model=f"scripted/{child_model}"), "done"], mode="sequence"
    )
    agent, events = await make_agent(ws, parent, permission_mode="full-auto")
    try:
        await agent.prompt("first")
        await agent.prompt("let a task write b.txt")
        assert (ws / "b.txt").read_text() == "child\n"
        points = agent.rewind_points()
        await agent.rewind(points[1]["entryId"], "code")
    finally:
        await agent.close()
    assert not (ws / "b.txt").exists()


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@sync
async def test_worktree_task_reports_branch_and_changes(tmp_path: Path) -> None:
    ws, _ = setup(tmp_path, [{"toolCalls": [{"name": "write", "arguments": {"path": "new.txt", "content": "n\n"}}]}, "wrote it"])
    _git(ws, "init", "-q")
    (ws / "README").write_text("r\n")
    _git(ws, "add", "README")
    _git(ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    child_model = str(tmp_path / "child.json")
    parent = write_script(
        tmp_path / "p.json", [task_call(agent="general", model=f"scripted/{child_model}", isolation="worktree"), "ok"], mode="sequence"
    )
    agent, events = await make_agent(ws, parent, permission_mode="full-auto")
    try:
        await agent.prompt("go")
    finally:
        await agent.close()
    end = of(events, "subagent_end")[0]
    assert end["status"] == "completed"
    assert end["worktree"]["changed"] is True and end["worktree"]["branch"].startswith("ama/task-")
    start = of(events, "subagent_start")[0]
    assert start["cwd"] != str(ws) and (Path(start["cwd"]) / "new.txt").exists()
    assert not (ws / "new.txt").exists()  # nothing merged
    assert end["worktree"]["branch"] in _git(ws, "branch", "--list", "ama/*")


@sync
async def test_definitions_from_claude_agents_and_unknown_agent(tmp_path: Path) -> None:
    ws, _ = setup(tmp_path, ["r"])
    (ws / ".claude" / "agents").mkdir(parents=True)
    (ws / ".claude" / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep, Glob\nmodel: sonnet\n---\nReview.\n"
    )
    parent = write_script(tmp_path / "p.json", [task_call(agent="nope"), "ok"], mode="sequence")
    agent, events = await make_agent(ws, parent)
    try:
        agents = {a["name"]: a for a in agent.tasks.agents()}
        await agent.prompt("go")
    finally:
        await agent.close()
    assert agents["reviewer"]["tools"] == ["read", "grep", "find"] and agents["reviewer"]["scope"] == "project"
    assert {"general", "explore"} <= set(agents)
    end = tool_result(events)
    assert end["isError"] and "unknown agent 'nope'" in text_of(end) and "reviewer" in text_of(end)


@sync
async def test_an_absent_external_agent_fails_clearly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # no codex here
    ws, _ = setup(tmp_path, [])
    parent = write_script(tmp_path / "p.json", [task_call(agent="codex"), "ok"], mode="sequence")
    agent, events = await make_agent(ws, parent, permission_mode="full-auto")  # an external task asks otherwise
    try:
        await agent.prompt("go")
    finally:
        await agent.close()
    end = of(events, "subagent_end")[0]
    assert end["status"] == "failed" and "codex is not installed" in end["error"]
    assert "codex is not installed" in text_of(tool_result(events))


@sync
async def test_an_external_task_asks_like_a_command_and_plan_mode_refuses_it(tmp_path: Path) -> None:
    ws, _ = setup(tmp_path, [])
    parent = write_script(tmp_path / "p.json", [task_call(agent="acp:ama"), "ok"], mode="sequence")
    agent, events = await make_agent(ws, parent)  # default mode, nobody to answer: denied
    try:
        await agent.prompt("go")
    finally:
        await agent.close()
    denied = tool_result(events)
    assert not of(events, "subagent_start") and denied["isError"] is True
    assert [r["toolName"] for r in of(events, "permission_request")] in ([], ["task"])
    parent = write_script(tmp_path / "p2.json", [task_call(agent="claude"), "ok"], mode="sequence")
    agent, events = await make_agent(ws, parent, permission_mode="plan")
    try:
        await agent.prompt("go")
    finally:
        await agent.close()
    assert not of(events, "subagent_start") and "plan mode" in text_of(tool_result(events))


@pytest.mark.parametrize("status", ["running"])
@sync
async def test_resume_reads_a_running_task_as_interrupted(tmp_path: Path, status: str) -> None:
    ws, _ = setup(tmp_path, [])
    parent = write_script(tmp_path / "p.json", ["hi"], mode="sequence")
    agent, _ = await make_agent(ws, parent)
    await agent.prompt("hi")
    agent.session.append_custom(
        "ama.task",
        {"taskId": "abc", "agent": "explore", "runner": "ama", "description": "d", "background": True,
         "status": status, "startedAt": "2026-01-01T00:00:00Z", "parentToolCallId": "c", "cwd": str(ws)},
    )
    path = agent.session.path
    await agent.close()
    again, _ = await make_agent(ws, parent, session=path)
    try:
        assert [t["status"] for t in again.tasks.registry.view()] == ["interrupted"]
    finally:
        await again.close()


@sync
async def test_child_sessions_are_lineage_children_in_the_catalog(tmp_path: Path, sessions_dir: Path) -> None:
    from ama.session.archive import set_archived
    from ama.session.catalog import list_page, scan

    pricey = {"text": "found", "usage": {"input": 3, "output": 2}}
    ws, _ = setup(tmp_path, [pricey], cost={"input": 1_000_000})
    parent = write_script(tmp_path / "p.json", [task_call(agent="explore"), "ok"], mode="sequence")
    agent, events = await make_agent(ws, parent)
    try:
        await agent.prompt("go")
        stats = agent.stats()
    finally:
        await agent.close()
    assert stats["tasks"]["count"] == 1 and stats["tasks"]["cost"] == 3.0
    assert stats["tasks"]["byAgent"]["explore"]["usage"]["input"] == 3
    child_id = of(events, "subagent_start")[0]["sessionFile"]
    plain = [s.path for s in list_page(scan(str(sessions_dir)), cwd=str(ws)).sessions]
    every = [s.path for s in list_page(scan(str(sessions_dir)), cwd=str(ws), include_subagents=True).sessions]
    assert plain == [agent.session.path] and sorted(every) == sorted([agent.session.path, child_id])
    set_archived(str(sessions_dir), agent.session.path, True)  # archive follows the lineage
    archived = list_page(scan(str(sessions_dir)), cwd=str(ws), archived=True, include_subagents=True).sessions
    assert sorted(s.path for s in archived) == sorted([agent.session.path, child_id])


@sync
async def test_task_ctl_lists_shows_and_stops_a_background_task(tmp_path: Path) -> None:
    ws, _ = setup(tmp_path, [{"text": "never", "delayMs": 30_000}])
    parent = write_script(tmp_path / "p.json", [task_call(agent="explore", background=True), "started"], mode="sequence")
    agent, events = await make_agent(ws, parent)
    try:
        await agent.prompt("go")
        task_id = of(events, "subagent_start")[0]["taskId"]
        ctl = [
            {"name": "task_ctl", "arguments": {"action": "list"}},
            {"name": "task_ctl", "arguments": {"action": "output", "taskId": task_id}},
            {"name": "task_ctl", "arguments": {"action": "stop", "taskId": task_id}},
            {"name": "task_ctl", "arguments": {"action": "status", "taskId": task_id}},
            {"name": "task_ctl", "arguments": {"action": "status", "taskId": "nope"}},
        ]
        (tmp_path / "p.json").write_text(json.dumps({"turns": [{"toolCalls": ctl}, "stopped it", "noted"], "mode": "sequence"}))
        from ama.ai import scripted

        scripted.reset(tmp_path / "p.json")
        await agent.prompt("stop it")
        for _ in range(600):  # the stop's notification turn
            if len(of(events, "agent_settled")) >= 3:
                break
            await asyncio.sleep(0.05)
    finally:
        await agent.close()
    results = [text_of(e) for e in of(events, "tool_execution_end") if e["toolName"] == "task_ctl"]
    assert task_id in results[0] and "running" in results[0]
    assert "still running" in results[1]
    assert "stopped (status: aborted)" in results[2]
    assert json.loads(results[3])["status"] == "aborted"
    assert "unknown taskId 'nope'" in results[4]
    assert of(events, "subagent_end")[0]["status"] == "aborted"
    notes = [e["message"]["content"] for e in of(events, "message_end") if e["message"].get("origin") == "task"]
    assert len(notes) == 1 and 'status="aborted"' in notes[0]


@sync
async def test_an_unattended_parent_has_an_unattended_child(tmp_path: Path) -> None:
    ws, child = setup(tmp_path, [{"toolCalls": [{"name": "bash", "arguments": {"command": "touch made"}}]}, "could not"])
    parent = write_script(tmp_path / "p.json", [task_call(agent="general", model=child), "ok"], mode="sequence")
    agent, events = await make_agent(ws, parent)  # no broker: every ask is denied
    try:
        await agent.prompt("go")
    finally:
        await agent.close()
    assert not (ws / "made").exists() and not of(events, "permission_request")
    assert "denied or not approved (bash)" in text_of(tool_result(events))


@sync
async def test_a_foreground_child_counts_against_the_parent_budget(tmp_path: Path) -> None:
    from ama.agent.guard import Limits

    pricey = {"toolCalls": [{"name": "ls", "arguments": {}}], "usage": {"input": 1}}
    ws, child = setup(tmp_path, [pricey] * 6, cost={"input": 1_000_000})
    parent = write_script(tmp_path / "p.json", [task_call(agent="explore"), "more", "never"], mode="sequence")
    agent, events = await make_agent(ws, parent, limits=Limits(max_cost=1.5))
    try:
        r = await agent.prompt("go")
    finally:
        await agent.close()
    info = agent.tasks.registry.view()[0]
    # the task's cap was lowered from tasks.maxCost (2.0) to what the parent had left
    assert info["status"] == "max_turns" and info["limit"] == {"kind": "cost", "value": 2.0, "limit": 1.5}
    hit, = of(events, "limit_reached")  # the parent's own run stops at its budget after the task
    assert hit["kind"] == "cost" and r.record.limit["kind"] == "cost"


@sync
async def test_external_runner_seam_host_updates_asks_and_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in for ``ama.agent.external`` (the seam in docs/agents.md): the host turns its
    progress into subagent_update, its asks into permission_request with context, its records
    into parent entries."""
    import sys
    import types
    from dataclasses import dataclass

    fake = types.ModuleType("ama.agent.external")
    seen: dict[str, Any] = {}

    @dataclass(frozen=True)
    class ExternalTaskRequest:
        agent: str
        prompt: str
        cwd: str
        task_id: str
        description: str = ""
        session_id: str | None = None
        model: str | None = None

    @dataclass
    class ExternalTaskResult:
        status: str
        text: str
        session_id: str | None
        usage: dict
        error: str | None = None

    async def run_external_task(req: Any, host: Any, cancel: asyncio.Event, config: dict) -> Any:
        seen["req"] = req
        host.update({"kind": "tool_call", "title": "Edit a.txt"})
        options = [{"optionId": "ok1", "name": "Allow", "kind": "allow_once"}, {"optionId": "no", "name": "No", "kind": "reject_once"}]
        seen["answer"] = await host.ask_permission(
            {"toolName": "agent:e1", "context": {"origin": {"agent": req.agent, "sessionId": "ext-1", "toolCall": {"title": "Edit a.txt", "kind": "edit"}, "options": options}}}
        )
        host.record("ama.agent-session", {"agent": req.agent, "sessionId": "ext-1"})
        return ExternalTaskResult("completed", "external done", "ext-1", {"input": 7, "output": 3, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.5}})

    fake.ExternalTaskRequest = ExternalTaskRequest  # type: ignore[attr-defined]
    fake.ExternalTaskResult = ExternalTaskResult  # type: ignore[attr-defined]
    fake.run_external_task = run_external_task  # type: ignore[attr-defined]
    fake.list_external_agents = lambda config: [{"name": "claude", "runner": "claude", "installed": False, "version": None, "description": "Claude Code"}]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ama.agent.external", fake)
    import ama.agent

    # ``from ama.agent import external`` finds an attribute first once the real one is imported
    monkeypatch.setattr(ama.agent, "external", fake, raising=False)

    async def allow(req: dict) -> str:
        seen["asked"] = req
        return "allow"

    ws, _ = setup(tmp_path, [])
    parent = write_script(tmp_path / "p.json", [task_call(agent="claude"), "ok"], mode="sequence")
    agent, events = await make_agent(ws, parent, broker=CallbackBroker(allow))
    try:
        agents = agent.tasks.agents()
        await agent.prompt("go")
    finally:
        await agent.close()
    assert agents[-1]["name"] == "claude" and agents[-1]["installed"] is False
    start = of(events, "subagent_start")[0]
    assert start["runner"] == "claude" and seen["req"].task_id == start["taskId"] and seen["req"].cwd == str(ws)
    assert seen["answer"] == "ok1"
    assert seen["asked"]["toolName"] == "agent:e1"
    assert seen["asked"]["context"]["taskId"] == start["taskId"] and seen["asked"]["context"]["origin"]["sessionId"] == "ext-1"
    assert [u["kind"] for u in of(events, "subagent_update")] == ["tool"]
    end = of(events, "subagent_end")[0]
    assert end["status"] == "completed" and end["usage"]["input"] == 7 and end["usage"]["cost"]["total"] == 0.5
    assert agent.run_guard.cost == 0.5 and agent.run_guard.tokens == 10  # the parent's budget paid for it
    assert text_of(tool_result(events)).startswith("external done")
    customs = [e.custom_type for e in read_session(agent.session.path).entries if getattr(e, "type", "") == "custom"]
    assert "ama.agent-session" in customs


@sync
async def test_an_interrupted_task_can_be_continued_after_resume(tmp_path: Path) -> None:
    ws, _ = setup(tmp_path, ["first", "continued"])
    parent = write_script(tmp_path / "p.json", [task_call(agent="explore"), "one"], mode="sequence")
    agent, events = await make_agent(ws, parent)
    await agent.prompt("go")
    info = dict(agent.tasks.registry.view()[0])
    info.pop("lastAction", None)
    agent.session.append_custom("ama.task", {**info, "status": "running"})  # as a killed process leaves it
    path = agent.session.path
    await agent.close()
    from ama.ai import scripted

    (tmp_path / "p.json").write_text(json.dumps({"turns": [task_call(taskId=info["taskId"], prompt="go on"), "two"], "mode": "sequence"}))
    scripted.reset(tmp_path / "p.json")
    again, events2 = await make_agent(ws, str(parent), session=path)
    try:
        assert again.tasks.registry.get(info["taskId"]).status == "interrupted"
        await again.prompt("continue it")
    finally:
        await again.close()
    assert text_of(tool_result(events2)).startswith("continued")
    assert of(events2, "subagent_start")[0]["sessionFile"] == info["sessionRef"]["sessionFile"]
    assert again.tasks.registry.get(info["taskId"]).status == "completed"


@sync
async def test_a_running_foreground_task_can_be_sent_to_the_background(tmp_path: Path) -> None:
    ws, _ = setup(tmp_path, [{"text": "slow result", "delayMs": 1500}])
    parent = write_script(tmp_path / "p.json", [task_call(agent="explore"), "carrying on", "got it"], mode="sequence")
    agent, events = await make_agent(ws, parent)
    moved: list[list[str]] = []

    def on_event(ev: dict) -> None:
        if ev["type"] == "subagent_update" and ev.get("kind") == "turn":
            moved.append(agent.tasks.to_background())  # what Ctrl-B does

    agent.subscribe(on_event)
    try:
        r = await agent.prompt("go")
        assert r.text == "carrying on"
        for _ in range(600):
            if len(of(events, "agent_settled")) >= 2:
                break
            await asyncio.sleep(0.05)
    finally:
        await agent.close()
    task_id = of(events, "subagent_start")[0]["taskId"]
    assert moved[0] == [task_id]
    assert "moved task" in text_of(tool_result(events)) and not tool_result(events)["isError"]
    notes = [e["message"]["content"] for e in of(events, "message_end") if e["message"].get("origin") == "task"]
    assert len(notes) == 1 and "slow result" in notes[0]
    assert agent.tasks.registry.get(task_id).background is True


@sync
async def test_bad_arguments_fail_before_anything_starts(tmp_path: Path) -> None:
    ws, _ = setup(tmp_path, [])
    parent = write_script(
        tmp_path / "p.json",
        [task_call(model="nope/none"), task_call(taskId="feedface0000"), task_call(isolation="worktree"), "ok"],
        mode="sequence",
    )
    agent, events = await make_agent(ws, parent)
    try:
        await agent.prompt("go")
    finally:
        await agent.close()
    texts = [text_of(e) for e in of(events, "tool_execution_end")]
    assert "model 'nope/none'" in texts[0]
    assert "unknown taskId 'feedface0000'" in texts[1]
    assert 'isolation "worktree" needs a git repository' in texts[2]
    assert all(e["isError"] for e in of(events, "tool_execution_end"))
    assert not of(events, "subagent_start") and agent.tasks.registry.view() == []


@sync
async def test_an_unanswered_child_ask_is_a_denial_the_parent_is_told_about(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMA_APPROVAL_TIMEOUT_MS", "200")
    ws, child = setup(tmp_path, [{"toolCalls": [{"name": "bash", "arguments": {"command": "touch made"}}]}, "done?"])

    async def never(req: dict) -> str:
        await asyncio.sleep(3600)
        return "allow"

    parent = write_script(tmp_path / "p.json", [task_call(agent="general", model=child), "ok"], mode="sequence")
    agent, events = await make_agent(ws, parent, broker=CallbackBroker(never))
    try:
        await agent.prompt("go")
    finally:
        await agent.close()
    assert of(events, "permission_resolved")[0]["decision"] == "deny"
    assert not (ws / "made").exists()
    assert "denied or not approved (bash)" in text_of(tool_result(events))


@sync
async def test_depth_two_lets_a_child_start_its_own_task(tmp_path: Path, ama_home: Path) -> None:
    (ama_home / "config.json").write_text(json.dumps({"tasks": {"maxDepth": 2}}))
    ws, grandchild = setup(tmp_path, ["grandchild result"])
    mid = write_script(tmp_path / "mid.json", [task_call(agent="explore", description="deeper"), "child relayed it"], mode="sequence")
    parent = write_script(tmp_path / "p.json", [task_call(agent="general", model=mid), "top done"], mode="sequence")
    agent, events = await make_agent(ws, parent)
    try:
        await agent.prompt("go")
    finally:
        await agent.close()
    assert [s["agent"] for s in of(events, "subagent_start")] == ["general"]  # the grandchild reports to the child
    assert text_of(tool_result(events)).startswith("child relayed it")
    child_file = of(events, "subagent_start")[0]["sessionFile"]
    infos = [e.data for e in read_session(child_file).entries if getattr(e, "custom_type", None) == "ama.task" and "status" in e.data]
    assert infos[-1]["status"] == "completed" and infos[-1]["depth"] == 2 and infos[-1]["agent"] == "explore"


@sync
async def test_interrupting_the_parent_stops_its_foreground_child(tmp_path: Path) -> None:
    ws, _ = setup(tmp_path, [{"text": "too late", "delayMs": 20_000}])
    parent = write_script(tmp_path / "p.json", [task_call(agent="explore"), "never"], mode="sequence")
    agent, events = await make_agent(ws, parent)

    def on_event(ev: dict) -> None:
        if ev["type"] == "subagent_update" and ev.get("kind") == "turn":
            agent.abort()  # Esc / RPC abort

    agent.subscribe(on_event)
    try:
        r = await agent.prompt("go")
    finally:
        await agent.close()
    assert r.record.status == "CANCELLED"
    assert of(events, "subagent_end")[0]["status"] == "aborted"
    end = tool_result(events)
    assert end["isError"] and "ended aborted" in text_of(end)


@sync
async def test_a_deny_rule_on_task_is_honoured(tmp_path: Path) -> None:
    ws, _ = setup(tmp_path, ["never"])
    cfg = json.loads((ws / ".ama" / "config.json").read_text())
    (ws / ".ama" / "config.json").write_text(json.dumps({**cfg, "permissions": {"deny": ["task"]}}))
    parent = write_script(tmp_path / "p.json", [task_call(agent="explore"), "ok"], mode="sequence")
    agent, events = await make_agent(ws, parent)
    try:
        await agent.prompt("go")
    finally:
        await agent.close()
    end = tool_result(events)
    assert end["isError"] and end.get("denied") and "permissions.deny" in text_of(end)
    assert not of(events, "subagent_start")


def test_stats_by_agent_splits_the_parent_from_its_tasks(tmp_path: Path) -> None:
    """``ama stats --by agent``: index and scan agree; a child's requests count as task:<agent>."""
    from tests.index.helpers import ama_json

    ws, _ = setup(tmp_path, [{"text": "found", "usage": {"input": 5, "output": 1}}])
    parent = write_script(
        tmp_path / "p.json", [task_call(agent="explore"), {"text": "ok", "usage": {"input": 7, "output": 2}}], mode="sequence"
    )

    async def run() -> None:
        agent, _ = await make_agent(ws, parent)
        try:
            await agent.prompt("go")
        finally:
            await agent.close()

    asyncio.run(run())
    indexed = ama_json("stats", "--by", "agent", cwd=str(ws))
    scanned = ama_json("stats", "--by", "agent", "--no-cache", cwd=str(ws))
    indexed.pop("files"), scanned.pop("files")
    assert indexed == scanned
    groups = {g["key"]: g for g in indexed["groups"]}
    assert set(groups) == {"main", "task:explore"}
    assert groups["task:explore"]["requests"] == 1 and groups["main"]["requests"] == 2
    assert groups["task:explore"]["tokens"]["input"] == 5
