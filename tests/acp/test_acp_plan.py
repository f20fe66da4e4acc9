"""Plan approval over ACP: the proposed plan as ``session/request_permission`` (rpc/acp_plan.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp.helpers import text_block

from tests.acp.driver import Client, ama_acp, of_kind, text_of
from tests.agent.helpers import write_script

pytestmark = pytest.mark.anyio

PLAN = "Here is the plan.\n<proposed_plan>\n# Add a greeting\n\n1. Add greet()\n2. Test it\n</proposed_plan>"
PLAN2 = PLAN.replace("2. Test it", "2. Test it\n3. Document it")


async def test_approve_executes_in_the_same_prompt(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [PLAN, "[DONE:1]\nAdded greet()."], mode="sequence")
    client = Client(["approve"])
    async with ama_acp(client, tmp_path, "--model", model) as conn:
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.set_session_mode(session_id=sid, mode_id="plan")
        client.take()
        resp = await conn.prompt(session_id=sid, prompt=[text_block("add a greeting")])
        updates = client.take()
    assert resp.stop_reason == "end_turn"
    (ask,) = client.asks
    assert [o["optionId"] for o in ask["options"]] == ["approve", "approve_compact", "approve_fresh", "reject"]
    call = ask["toolCall"]
    assert call["title"] == "Plan: Add a greeting (v1)" and call["rawInput"]["mode"] == "default"
    assert "1. Add greet()" in call["content"][0]["content"]["text"]
    assert call["rawInput"]["filePath"].endswith(".ama/plans/add-a-greeting-v1.md")
    plans = [[e["status"] for e in u["entries"]] for u in of_kind(updates, "plan")]
    assert plans[0] == ["pending", "pending"]  # proposed
    assert plans[-1] == ["completed", "in_progress"]  # approved, then [DONE:1]
    assert of_kind(updates, "current_mode_update")[-1]["currentModeId"] == "default"
    assert text_of(updates).endswith("Added greet().")


async def test_cancel_then_revise_by_prompt_then_reject(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [PLAN, PLAN2], mode="sequence")
    client = Client(["cancelled", "reject"])
    async with ama_acp(client, tmp_path, "--model", model, "--permission-mode", "plan") as conn:
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        first = await conn.prompt(session_id=sid, prompt=[text_block("add a greeting")])
        second = await conn.prompt(session_id=sid, prompt=[text_block("document it too")])
        updates = client.take()
    assert first.stop_reason == second.stop_reason == "end_turn"
    assert [a["toolCall"]["toolCallId"].rsplit("-", 1)[-1] for a in client.asks] == ["v1", "v2"]
    assert not [u for u in of_kind(updates, "current_mode_update") if u["currentModeId"] != "plan"]
    names = sorted(p.name for p in (tmp_path / ".ama" / "plans").iterdir())
    assert names == ["add-a-greeting-v1.md", "add-a-greeting-v2.md"]


async def test_approve_fresh_continues_in_a_new_session(tmp_path: Path, ama_home: Path) -> None:
    model = write_script(tmp_path / "s.json", [PLAN, "Working on it in a clean context."], mode="sequence")
    client = Client(["approve_fresh"])
    async with ama_acp(client, tmp_path, "--model", model, "--permission-mode", "plan") as conn:
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        resp = await conn.prompt(session_id=sid, prompt=[text_block("add a greeting")])
        updates = client.take()
    assert resp.stop_reason == "end_turn"
    assert text_of(updates).endswith("Working on it in a clean context.")
    files = sorted((ama_home / "sessions").rglob("*.jsonl"))
    assert len(files) == 2
    fresh = [f for f in files if sid not in f.name]
    assert len(fresh) == 1
    lines = [json.loads(x) for x in fresh[0].read_text().splitlines()]
    users = [x["message"] for x in lines if x.get("type") == "message" and x["message"]["role"] == "user"]
    assert len(users) == 1 and users[0]["content"].startswith("# Add a greeting")
    assert of_kind(updates, "current_mode_update")[-1]["currentModeId"] == "default"


async def test_cancel_while_asked_leaves_the_plan_proposed(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [PLAN, "should not run"], mode="sequence")
    client = Client(["approve"])  # answered only after the client cancelled the prompt
    async with ama_acp(client, tmp_path, "--model", model, "--permission-mode", "plan") as conn:
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id

        async def cancel_first(ask: dict) -> None:
            await conn.cancel(session_id=sid)

        client.on_ask = cancel_first
        resp = await conn.prompt(session_id=sid, prompt=[text_block("add a greeting")])
        updates = client.take()
    assert resp.stop_reason == "cancelled"
    assert "should not run" not in text_of(updates)
    assert not of_kind(updates, "current_mode_update")  # still in plan mode
