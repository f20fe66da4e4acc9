"""``acp:ama``: a real ``ama --mode acp`` child driven by the scripted provider, through the
runner's ACP client side, with a fake task host."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from ama.agent.external import ExternalTaskRequest, run_external_task
from ama.session.catalog import resolve
from tests.agent.helpers import write_script
from tests.external.host import FakeHost

pytestmark = pytest.mark.anyio


def _config(model: str, **extra: Any) -> dict[str, Any]:
    return {"agents.external.agents": {"acp:ama": {"args": ["--model", model], **extra}}}


def _req(cwd: Path, prompt: str = "go", **kw: Any) -> ExternalTaskRequest:
    return ExternalTaskRequest(agent="acp:ama", prompt=prompt, cwd=str(cwd), task_id="t1", **kw)


async def _run(req: ExternalTaskRequest, host: FakeHost, config: dict[str, Any], cancel: asyncio.Event | None = None):
    async with asyncio.timeout(120):  # a hang fails the test instead of stalling the suite
        return await run_external_task(req, host, cancel or asyncio.Event(), config)


async def test_acp_ama_end_to_end_with_three_approvals_flow(tmp_path: Path, ama_home: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    model = write_script(
        tmp_path / "s.json",
        [
            {"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo from-child > out.txt"}}],
             "usage": {"input": 100, "output": 20, "cacheRead": 1000}},
            {"thinking": "Checked.", "text": ["The file ", "is written."], "usage": {"input": 30, "output": 9}},
        ],
    )  # fmt: skip
    host = FakeHost(answers=["allow", "allow_once"])  # the first run, then the child's bash
    res = await _run(_req(tmp_path, "write out.txt"), host, _config(model))
    assert res.status == "completed", res.error
    assert res.text == "The file is written."
    assert (tmp_path / "out.txt").read_text() == "from-child\n"

    first, bash = host.asks
    assert first["toolName"] == "task"
    assert first["input"]["agent"] == "acp:ama" and first["input"]["mode"] == "ask"
    assert first["context"] == {"taskId": "t1"}
    assert bash["toolName"] == "agent:acp:ama"
    origin = bash["context"]["origin"]
    assert origin["agent"] == "acp:ama" and origin["sessionId"] == res.session_id
    assert origin["toolCall"]["kind"] == "execute"
    assert origin["toolCall"]["inputSummary"] == "echo from-child > out.txt"
    assert [o["kind"] for o in origin["options"]] == ["allow_once", "allow_always", "reject_once"]
    assert bash["input"] == {"command": "echo from-child > out.txt"}

    kinds = host.kinds()
    assert kinds.index("tool_call") < kinds.index("tool_update") < kinds.index("text")
    assert "thinking" in kinds and host.text() == "The file is written."
    call = next(u for u in host.updates if u["kind"] == "tool_call")
    assert call["toolCallId"] == "b1" and call["toolKind"] == "execute"
    assert host.updates[-1]["kind"] == "text"

    # the external session is an ama session file in the child's session store
    assert resolve(str(ama_home / "sessions"), res.session_id).cwd == str(tmp_path)
    assert host.of("ama.agent-session") == [
        {"agent": "acp:ama", "runner": "acp:ama", "sessionId": res.session_id, "cwd": str(tmp_path), "taskId": "t1"}
    ]
    # the child reports its run's usage in the prompt response (rpc/acp_usage.py)
    tokens = {"input": 130, "output": 29, "cacheRead": 1000, "cacheWrite": 0}
    assert host.of("ama.agent-usage") == [
        {"agent": "acp:ama", "sessionId": res.session_id, "unit": "tokens", "amount": 1159, "tokens": tokens}
    ]
    assert res.usage == {**tokens, "cost": {"total": 0.0}}


async def test_continue_loads_the_session_without_replaying_it_and_confirms_once(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", ["First answer.", "Second answer."])
    host = FakeHost(answers=["allow"])
    config = _config(model)
    one = await _run(_req(tmp_path, "one"), host, config)
    assert one.status == "completed" and one.text == "First answer."
    host.updates.clear()
    # the same host (parent session) runs acp:ama again: no second first-run confirmation
    two = await _run(_req(tmp_path, "two", session_id=one.session_id), host, config)
    assert two.status == "completed", two.error
    assert two.session_id == one.session_id
    assert len(host.asks) == 1
    # the replayed history of session/load is not streamed as progress
    assert host.text() == two.text and "First answer." not in host.text()
    assert [d["sessionId"] for d in host.of("ama.agent-session")] == [one.session_id, one.session_id]


async def test_denied_first_run_does_not_start_the_agent(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", ["never"])
    host = FakeHost(answers=["reject"])
    res = await _run(_req(tmp_path), host, _config(model))
    assert res.status == "failed" and res.error == "running acp:ama was declined"
    assert host.records == [] and host.updates == []


async def test_confirm_false_skips_the_first_run_question(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", ["Hi."])
    host = FakeHost()
    res = await _run(_req(tmp_path), host, _config(model, confirm=False))
    assert res.status == "completed" and res.text == "Hi." and host.asks == []


async def test_denied_child_approval_reaches_the_agent(tmp_path: Path) -> None:
    model = write_script(
        tmp_path / "s.json",
        [{"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": "touch nope"}}]}, "Not allowed."],
    )
    host = FakeHost(answers=["allow", ""])  # "" = denied / unanswered
    res = await _run(_req(tmp_path), host, _config(model))
    assert res.status == "completed" and res.text == "Not allowed."
    assert not (tmp_path / "nope").exists()
    update = next(u for u in host.updates if u["kind"] == "tool_update")
    assert update["status"] == "failed"


async def test_cancel_during_a_pending_child_approval(tmp_path: Path) -> None:
    model = write_script(
        tmp_path / "s.json",
        [{"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": "touch late"}}]}, "unreached"],
    )
    cancel = asyncio.Event()
    host = FakeHost(answers=["allow"])

    async def on_ask(request: dict[str, Any]) -> None:
        if request["toolName"].startswith("agent:"):
            host.hold = True
            cancel.set()

    host.on_ask = on_ask
    res = await _run(_req(tmp_path), host, _config(model), cancel)
    assert res.status == "aborted"
    assert res.session_id is not None
    assert not (tmp_path / "late").exists()


async def test_cancel_during_a_slow_reply(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [{"text": "word " * 400, "chunkSize": 5, "delayMs": 50}])
    cancel = asyncio.Event()
    host = FakeHost()
    orig = host.update

    def update(payload: dict[str, Any]) -> None:
        orig(payload)
        cancel.set()  # as soon as the reply streams

    host.update = update  # type: ignore[method-assign]
    res = await _run(_req(tmp_path), host, _config(model, confirm=False), cancel)
    assert res.status == "aborted" and res.error == "cancelled"
    assert 0 < len(res.text) < len("word " * 400)


async def test_agent_that_crashes_mid_turn_fails_and_nothing_hangs(tmp_path: Path) -> None:
    model = write_script(
        tmp_path / "s.json",
        [{"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": "kill -9 $PPID"}}]}, "unreached"],
    )
    host = FakeHost(answers=["allow_once"])
    res = await _run(_req(tmp_path), host, _config(model, confirm=False))
    assert res.status == "failed"
    assert res.error is not None and res.error.startswith("acp:ama was killed by SIGKILL") and "mid-turn" in res.error
    assert host.of("ama.agent-session")  # the session had started


async def test_a_program_that_is_not_an_acp_agent_fails_clearly(tmp_path: Path) -> None:
    fake = tmp_path / "notacp"
    fake.write_text("#!/bin/sh\necho 'hello, I am not ACP'\nexit 3\n")
    fake.chmod(0o755)
    config = {"agents.external.allow": ["acp:notacp"], "agents.external.agents": {"acp:notacp": {"command": str(fake)}}}
    req = ExternalTaskRequest(agent="acp:notacp", prompt="x", cwd=str(tmp_path), task_id="t")
    res = await _run(req, FakeHost(answers=["allow"]), config)
    assert res.status == "failed"
    assert res.error == "acp:notacp exited with code 3 during initialize"


async def test_first_run_is_remembered_per_parent_session_not_per_task_host(tmp_path: Path) -> None:
    from ama.agent.external.base import confirm_first_run

    class TaskHost(FakeHost):  # the sub-agents side makes one host per task, with its parent
        def __init__(self, parent: object, answers: list[str]) -> None:
            super().__init__(answers)
            self.parent = parent

    parent, other = object(), object()
    req = _req(tmp_path)
    a = TaskHost(parent, ["allow"])
    assert await confirm_first_run(a, req, "ask", "note") and len(a.asks) == 1
    b = TaskHost(parent, [])
    assert await confirm_first_run(b, req, "ask", "note") and b.asks == []
    c = TaskHost(other, [""])
    assert not await confirm_first_run(c, req, "ask", "note") and len(c.asks) == 1


async def test_cancel_before_the_agent_answers_kills_its_process_group(tmp_path: Path) -> None:
    """An agent that never answers initialize and ignores SIGTERM and stdin EOF: a cancel
    still ends the task, and the agent and its children are gone."""
    pids = tmp_path / "pids"
    stubborn = tmp_path / "stubborn"
    stubborn.write_text(
        f"#!{sys.executable}\n"
        "import os, signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "child = subprocess.Popen(['sleep', '600'])\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        "sys.stdin.close()\n"
        "time.sleep(600)\n"
    )
    stubborn.chmod(0o755)
    config = {"agents.external.allow": ["acp:stubborn"],
              "agents.external.agents": {"acp:stubborn": {"command": str(stubborn), "confirm": False}}}  # fmt: skip
    cancel = asyncio.Event()

    async def cancel_when_started() -> None:
        while not pids.exists() or not pids.read_text():
            await asyncio.sleep(0.05)
        cancel.set()

    req = ExternalTaskRequest(agent="acp:stubborn", prompt="x", cwd=str(tmp_path), task_id="t")
    waiter = asyncio.create_task(cancel_when_started())
    res = await _run(req, FakeHost(), config, cancel)
    await waiter
    assert res.status == "aborted" and res.error == "cancelled before the agent started"
    for pid in map(int, pids.read_text().split()):
        assert await _dies(pid), pid


async def _dies(pid: int, within: float = 10.0) -> bool:
    """SIGKILL to the group was sent; the kernel takes a moment to end each process."""
    for _ in range(int(within / 0.05)):
        if not _alive(pid):
            return True
        await asyncio.sleep(0.05)
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (not yet reaped by its parent) is dead for our purpose
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


async def test_an_agent_with_an_unreadable_reply_fails_the_task(tmp_path: Path) -> None:
    bad = tmp_path / "bad-acp"
    bad.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        "req = json.loads(sys.stdin.readline())\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': req['id'], 'result': {'protocolVersion': 'one'}}), flush=True)\n"
        "sys.stdin.read()\n"
    )
    bad.chmod(0o755)
    config = {"agents.external.allow": ["acp:bad-acp"],
              "agents.external.agents": {"acp:bad-acp": {"command": str(bad), "confirm": False}}}  # fmt: skip
    req = ExternalTaskRequest(agent="acp:bad-acp", prompt="x", cwd=str(tmp_path), task_id="t")
    res = await _run(req, FakeHost(), config)
    assert res.status == "failed"
    assert res.error is not None and res.error.startswith("acp:bad-acp sent an unreadable reply to initialize: ")
