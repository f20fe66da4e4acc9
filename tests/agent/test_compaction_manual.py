"""Manual compaction: ``ama sessions compact`` and RPC ``compact`` (docs/compaction.md)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

from ama.session.entries import CompactionEntry
from tests.agent.helpers import make_agent, write_script
from tests.agent.window_server import WindowServer
from tests.conftest import ama_cmd
from tests.rpc.helpers import Rpc


def test_sessions_compact_cli_writes_a_compaction_the_next_request_starts_from(tmp_path: Path, ama_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("remember the milk\n")
    plan = {0: ("read", {"path": "notes.txt"}), 1: "read it", 2: "second reply", 3: "third reply"}
    server = WindowServer(100_000, lambda n: plan.get(n, f"reply {n}"))
    (ama_home / "config.json").write_text(json.dumps({"providers": {"win": server.provider("openai-completions")}}))

    async def first() -> str:
        agent, _ = await make_agent(ws, "win/m", permission_mode="full-auto")
        await agent.prompt("read notes.txt")
        await agent.prompt("what next?")
        sid = agent.session.id
        await agent.close()
        return sid

    async def resume(sid: str):
        agent, _ = await make_agent(ws, None, session=sid, permission_mode="full-auto")
        res = await agent.prompt("and now?")
        await agent.close()
        return res

    try:
        sid = asyncio.run(first())
        out = subprocess.run(ama_cmd("sessions", "compact", sid[:8], "--focus", "the milk", "--json"), cwd=ws,
                             capture_output=True, text=True, timeout=60)  # fmt: skip
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout)
        assert "the milk" in json.dumps(server.summaries[-1]) and "read notes.txt" in json.dumps(server.summaries[-1])
        assert result["details"] == {"readFiles": ["notes.txt"], "modifiedFiles": []}
        assert result["summary"].endswith("</post-compact-state>") and "what next?" in result["summary"]
        res = asyncio.run(resume(sid))
        bad = subprocess.run(ama_cmd("sessions", "compact", "ffffffff"), cwd=ws, capture_output=True, text=True, timeout=60)
    finally:
        server.close()
    assert res.exit_code == 0
    msgs = server.turns[-1]["messages"]
    assert msgs[0]["role"] == "system" and "<summary>" in json.dumps(msgs[1]) and "Summary 1" in json.dumps(msgs[1])
    assert "and now?" in json.dumps(msgs[-1])
    files = list((ama_home / "sessions").rglob(f"*{sid}*.jsonl"))
    lines = [json.loads(x) for x in files[0].read_text().splitlines()]
    comp = [x for x in lines if x.get("type") == "compaction"]
    assert len(comp) == 1 and comp[0]["firstKeptEntryId"] == result["firstKeptEntryId"] and comp[0]["usage"]["input"] > 0
    assert bad.returncode != 0 and "ffffffff" in bad.stderr and "Traceback" not in bad.stderr


def test_rpc_compact_emits_manual_events_and_refuses_when_off(tmp_path: Path, ama_home: Path) -> None:
    model = write_script(tmp_path / "s.json", ["one", "two", "a summary"], mode="sequence")
    ws = tmp_path / "ws"
    ws.mkdir()
    rpc = Rpc(ws, "--model", model)
    try:
        rpc.event("session_start")
        for text in ("first", "second"):
            rpc.call("prompt", message=text)
            rpc.event("agent_settled")
        rid = rpc.send("compact", focus="the numbers")
        start = rpc.event("compaction_start")
        end = rpc.event("compaction_end")
        resp = rpc.response(rid)
    finally:
        assert rpc.close() == 0
    assert start["trigger"] == "manual"
    assert end["trigger"] == "manual" and end["aborted"] is False and end["willRetry"] is False
    assert resp["success"] is True and resp["data"]["summary"].startswith("a summary")
    assert end["result"]["entryId"] == resp["data"]["entryId"]

    (ama_home / "config.json").write_text(json.dumps({"compaction": {"enabled": False}}))

    async def off():
        agent, ev = await make_agent(ws, model, session="continue")
        try:
            await agent.compact()
        except Exception as err:
            return err, ev, [e for e in agent.session.branch() if isinstance(e, CompactionEntry)]
        finally:
            await agent.close()
        raise AssertionError("compact succeeded with compaction.enabled: false")

    err, ev, comps = asyncio.run(off())
    assert getattr(err, "code", None) == "unsupported" and "compaction.enabled: false" in str(err)
    assert len(comps) == 1  # only the RPC one


def test_abort_during_compaction_leaves_the_session_as_it_was(tmp_path: Path) -> None:
    turns = ["one", "two", {"text": "never", "delayMs": 20_000}]
    model = write_script(tmp_path / "s.json", turns, mode="sequence")
    ws = tmp_path / "ws"
    ws.mkdir()

    async def go():
        agent, ev = await make_agent(ws, model)
        await agent.prompt("first")
        await agent.prompt("second")
        before = [e.id for e in agent.session.entries]
        started = asyncio.Event()
        agent.subscribe(lambda e: started.set() if e["type"] == "compaction_start" else None)
        task = asyncio.ensure_future(agent.compact())
        await started.wait()
        await asyncio.sleep(0.05)
        agent.abort()
        try:
            await task
        except Exception as err:
            code = getattr(err, "code", None)
        after = agent.session.entries
        await agent.close()
        return code, before, after, ev

    code, before, after, ev = asyncio.run(go())
    assert code == "aborted"
    assert not any(isinstance(e, CompactionEntry) for e in after)
    assert [e.id for e in after][: len(before)] == before and agent_leaf_unchanged(before, after)
    end = [e for e in ev if e["type"] == "compaction_end"][-1]
    assert end["aborted"] is True and "error" not in end or end.get("error") is None


def agent_leaf_unchanged(before: list[str], after: list) -> bool:
    """Only request records may follow the old entries (the aborted summary request)."""
    return all(getattr(e, "custom_type", None) == "ama.request" for e in after[len(before) :])
