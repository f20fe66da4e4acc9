"""``plan.model``: plan mode asks a planning model, approval switches back (docs/plan.md)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.agent.helpers import make_agent
from tests.agent.window_server import WindowServer

PLAN = "<proposed_plan>\n# Tidy up\n\n1. Remove dead code\n2. Run the tests\n</proposed_plan>"


def _server(ama_home: Path, answers: dict[int, str]) -> WindowServer:
    server = WindowServer(100_000, lambda n: answers.get(n, f"reply {n}"))
    provider = server.provider("openai-completions")
    provider["models"].append({**provider["models"][0], "id": "planner"})
    config = {"providers": {"win": provider}, "plan": {"model": "win/planner"}}
    (ama_home / "config.json").write_text(json.dumps(config))
    return server


def test_plan_model_plans_and_the_previous_model_executes(tmp_path: Path, ama_home: Path) -> None:
    server = _server(ama_home, {0: PLAN, 1: "done"})

    async def go():
        agent, events = await make_agent(tmp_path, "win/m", permission_mode="plan")
        await agent.prompt("tidy up")
        plan = agent.plans.pending()
        assert plan is not None
        state = agent.session.latest_custom("ama.plan_state")
        _, task = agent.plans.respond(plan.id, "approve")
        assert task is not None
        await task
        changes = [e.model_id for e in agent.session.branch() if e.type == "model_change"]
        model = agent.model.ref
        await agent.close()
        return events, state, changes, model

    try:
        events, state, changes, model = asyncio.run(go())
    finally:
        server.close()
    assert [t["model"] for t in server.turns] == ["planner", "m"]  # the request bodies
    assert state["active"] is True and state["executionModel"] == "win/m" and state["executionThinking"]
    # started in plan mode: the session opens with the planning model; approval switches back
    assert [e["model"]["id"] for e in events if e["type"] == "model_changed"] == ["m"]
    assert changes == ["planner", "m"] and model == "win/m"


def test_plan_model_survives_resume_and_manual_exit(tmp_path: Path, ama_home: Path) -> None:
    server = _server(ama_home, {0: PLAN, 1: "still planning", 2: "back to work"})

    async def go():
        agent, events = await make_agent(tmp_path, "win/m")
        agent.set_permission_mode("plan")
        entered = [e["model"]["id"] for e in events if e["type"] == "model_changed"]
        await agent.prompt("tidy up")
        path = agent.session.path
        await agent.close()
        again, _ = await make_agent(tmp_path, None, session=path)
        resumed = (again.permissions.mode, again.model.ref)
        await again.prompt("any more?")
        again.set_permission_mode("default")  # leaving by hand also restores the model
        await again.prompt("go on")
        await again.close()
        return resumed, entered

    try:
        resumed, entered = asyncio.run(go())
    finally:
        server.close()
    assert entered == ["planner"] and resumed == ("plan", "win/planner")
    assert [t["model"] for t in server.turns] == ["planner", "planner", "m"]


def test_approve_fresh_executes_with_the_sessions_model(tmp_path: Path, ama_home: Path) -> None:
    from tests.rpc.helpers import Rpc

    server = _server(ama_home, {0: PLAN, 1: "working"})
    config = json.loads((ama_home / "config.json").read_text())
    config["providers"]["win"]["models"].append({**config["providers"]["win"]["models"][0], "id": "other"})
    (ama_home / "config.json").write_text(json.dumps(config))
    rpc = Rpc(tmp_path, "--model", "win/m")
    try:
        rpc.event("session_start")
        rpc.call("set_client_capabilities", capabilities=["plans"])
        rpc.call("set_model", provider="win", modelId="other")
        rpc.call("set_permission_mode", mode="plan")
        rpc.call("prompt", message="tidy up")
        proposed = rpc.event("plan_proposed")
        rpc.event("agent_settled")
        ans = rpc.call("plan_response", planId=proposed["planId"], decision="approve_fresh")
        rpc.event("agent_settled")
        state = rpc.call("get_state")["data"]
    finally:
        assert rpc.close() == 0
        server.close()
    assert ans["success"] and state["sessionId"] == ans["data"]["sessionId"]
    assert [t["model"] for t in server.turns] == ["planner", "other"]  # not the startup model
    assert state["model"]["id"] == "other"
