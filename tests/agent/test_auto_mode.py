"""The ``auto`` permission mode end to end: a scripted main model, a local server playing the
classifier, real session files.  Layers, ``autoDecision`` on the events, the cache, outages,
the ``usage{kind:"permission_classify"}`` entry, unattended denials."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ama.agent.approvals import CallbackBroker
from ama.session.entries import UsageEntry
from tests.agent.classifier_server import ASK, ClassifierServer
from tests.agent.helpers import make_agent, write_script


def run(coro):
    return asyncio.run(coro)


@pytest.fixture
def server():
    srv = ClassifierServer()
    yield srv
    srv.close()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    d.mkdir()
    return d


def configure(home: Path, server: ClassifierServer, **classifier: Any) -> None:
    settings = {"model": "judge/judge-small", **classifier}
    (home / "config.json").write_text(
        json.dumps({"providers": {"judge": server.provider()}, "permissions": {"classifier": settings}})
    )


def calls(*commands: str) -> list[Any]:
    return [{"toolCalls": [{"name": "bash", "arguments": {"command": c}}]} for c in commands] + ["done"]


def ends(events: list[dict]) -> list[dict]:
    return [e for e in events if e["type"] == "tool_execution_end"]


async def prompt(ws: Path, turns: list[Any], *, answers: list[dict] | None = None, text: str = "build it"):
    """Run one prompt in auto mode; with ``answers`` a broker records each request and allows."""
    model = write_script(ws.parent / "script.json", turns)

    async def answer(req: dict) -> str:
        assert answers is not None
        answers.append(req)
        return "allow"

    broker = CallbackBroker(answer) if answers is not None else None
    agent, events = await make_agent(ws, model, permission_mode="auto", broker=broker)
    try:
        await agent.prompt(text)
    finally:
        await agent.close()
    return agent, events


def test_each_layer_is_named_on_tool_execution_end(ws: Path, ama_home: Path, server: ClassifierServer) -> None:
    configure(ama_home, server)
    asked: list[dict] = []
    turns = calls("ls -la", "rm -r dist", "npm run build")
    _agent, events = run(prompt(ws, turns, answers=asked))
    auto = [e["autoDecision"] for e in ends(events)]
    assert [(a["layer"], a["decision"]) for a in auto] == [("static", "allow"), ("rule", "ask"), ("classifier", "allow")]
    assert "deletes files" in auto[1]["reason"]
    assert auto[2]["reason"] == "a routine build step in the workspace" and "cached" not in auto[2]
    # the rule layer's ask reached the broker with its autoDecision; the classifier saw only npm
    assert [r["autoDecision"]["layer"] for r in asked] == ["rule"]
    assert server.requests == 1 and "npm run build" in server.prompts()[0]


def test_classifier_prompt_carries_call_workspace_intent_and_os_sandbox(
    ws: Path, ama_home: Path, server: ClassifierServer
) -> None:
    configure(ama_home, server)
    run(prompt(ws, calls("make all"), text="please compile the project with make"))
    text = server.prompts()[0]
    assert "tool: bash" in text and '"command": "make all"' in text
    assert f"workspace: {ws}" in text
    assert "os_sandbox: off" in text  # the SDK-style agent has no sandbox
    assert "please compile the project with make" in text
    body = server.bodies[0]
    assert body["model"] == "judge-small" and "tools" not in body
    assert "exactly one JSON object" in body["messages"][0]["content"]


def test_the_cache_avoids_a_second_call(ws: Path, ama_home: Path, server: ClassifierServer) -> None:
    configure(ama_home, server)
    _agent, events = run(prompt(ws, calls("make all", "make   all", "make test")))
    auto = [e["autoDecision"] for e in ends(events)]
    assert [a.get("cached", False) for a in auto] == [False, True, False]  # blanks normalized
    assert server.requests == 2


def test_usage_entry_per_classifier_request(ws: Path, ama_home: Path, server: ClassifierServer) -> None:
    configure(ama_home, server)
    agent, _events = run(prompt(ws, calls("make all", "make all")))
    entries = [e for e in agent.session.entries if isinstance(e, UsageEntry)]
    assert len(entries) == 1  # the cached second call made no request
    e = entries[0]
    assert (e.kind, e.provider, e.model) == ("permission_classify", "judge", "judge-small")
    assert (e.usage.input, e.usage.output) == (100, 10)
    assert e.usage.cost and abs(e.usage.cost.total - (100 * 1.0 + 10 * 5.0) / 1e6) < 1e-12
    line = next(
        json.loads(raw) for raw in Path(agent.session.path).read_text().splitlines() if '"usage"' in raw and '"kind"' in raw
    )
    assert line["type"] == "usage" and line["kind"] == "permission_classify" and line["model"] == "judge-small"
    assert set(line["usage"]) >= {"input", "output", "cost"}


@pytest.mark.parametrize("behaviour", ["500", "hang", "garbage"])
def test_a_classifier_outage_asks(ws: Path, ama_home: Path, server: ClassifierServer, behaviour: str) -> None:
    configure(ama_home, server, timeoutMs=1000)
    server.behaviour, server.hang_s = behaviour, 3.0
    asked: list[dict] = []
    _agent, events = run(prompt(ws, calls("make all", "make all"), answers=asked))
    auto = [e["autoDecision"] for e in ends(events)]
    assert [(a["layer"], a["decision"]) for a in auto] == [("classifier", "ask")] * 2
    assert all(r["autoDecision"]["layer"] == "classifier" for r in asked) and len(asked) == 2
    word = {"500": "request failed", "hang": "did not answer within 1 s", "garbage": "not the JSON"}[behaviour]
    assert word in auto[0]["reason"]
    assert server.requests == 2  # a failure is not cached: the next call asks the classifier again
    usage = [e for e in _agent.session.entries if isinstance(e, UsageEntry)]
    assert [u.kind for u in usage] == ["permission_classify"] * 2  # one per request sent
    tokens = (100, 10) if behaviour == "garbage" else (0, 0)
    assert all((u.usage.input, u.usage.output) == tokens for u in usage)


def test_classifier_ask_unattended_is_denied(ws: Path, ama_home: Path, server: ClassifierServer) -> None:
    configure(ama_home, server)
    server.answer = lambda _p: ASK
    (ws / "keep").write_text("x")
    _agent, events = run(prompt(ws, calls("make clean")))  # no broker: unattended
    end = ends(events)[0]
    assert end["denied"] is True and end["isError"] is True
    assert end["autoDecision"] == {"layer": "classifier", "decision": "ask", "reason": "this is not what the user asked for"}
    text = end["result"]["content"][0]["text"]
    assert "requires approval" in text and "non-interactive" in text and "not what the user asked for" in text
    assert not any(e["type"] == "permission_request" for e in events)


def test_rule_ask_unattended_is_denied_without_a_classifier_call(
    ws: Path, ama_home: Path, server: ClassifierServer
) -> None:
    configure(ama_home, server)
    (ws / "dist").mkdir()
    _agent, events = run(prompt(ws, calls("rm -r dist")))
    end = ends(events)[0]
    assert end["denied"] is True and end["autoDecision"]["layer"] == "rule"
    assert (ws / "dist").is_dir() and server.requests == 0


def test_an_unknown_classifier_model_asks(ws: Path, ama_home: Path, server: ClassifierServer) -> None:
    configure(ama_home, server, model="judge/nope")
    asked: list[dict] = []
    _agent, events = run(prompt(ws, calls("make all"), answers=asked))
    auto = ends(events)[0]["autoDecision"]
    assert (auto["layer"], auto["decision"]) == ("classifier", "ask")
    assert "not available" in auto["reason"] and "judge/nope" in auto["reason"]
    assert len(asked) == 1 and server.requests == 0


def test_other_modes_carry_no_auto_decision(ws: Path, ama_home: Path, server: ClassifierServer) -> None:
    configure(ama_home, server)
    model = write_script(ws.parent / "script.json", calls("make all"))

    async def go():
        agent, events = await make_agent(ws, model, permission_mode="full-auto")
        try:
            await agent.prompt("x")
            assert agent.set_permission_mode("auto") == "auto"
            assert agent.state()["permissionMode"] == "auto"
        finally:
            await agent.close()
        return events

    events = run(go())
    assert "autoDecision" not in ends(events)[0] and server.requests == 0


def test_auto_from_the_config_and_the_sdk(ws: Path, ama_home: Path, server: ClassifierServer) -> None:
    from ama.sdk import create_agent

    (ama_home / "config.json").write_text(json.dumps({
        "permissionMode": "auto", "providers": {"judge": server.provider()},
        "permissions": {"classifier": {"model": "judge/judge-small"}},
    }))  # fmt: skip
    model = write_script(ws.parent / "script.json", calls("make all"))

    async def go():
        agent, _events = await make_agent(ws, model)
        assert agent.permissions.mode == "auto"
        await agent.close()
        sdk = await create_agent(cwd=str(ws), model=model, session="memory", permission_mode="auto",
                                 approve=lambda _req: asyncio.sleep(0, "deny"))  # fmt: skip
        events: list[dict] = []
        sdk.subscribe(events.append)
        try:
            await sdk.prompt("build")
        finally:
            await sdk.close()
        return events

    events = run(go())
    assert ends(events)[0]["autoDecision"]["layer"] == "classifier" and server.requests == 1


def _bwrap() -> bool:
    from ama.sandbox import detect

    return detect().kind == "bwrap"


@pytest.mark.skipif(not _bwrap(), reason="no working bubblewrap here")
def test_real_sandbox_rm_r_dist_asks_in_auto_but_runs_in_default(ws: Path, ama_home: Path, server: ClassifierServer) -> None:
    """The seed's trade-off with the real OS sandbox: default + sandbox runs ``rm -r dist``;
    auto asks at the rule layer (unattended: denied, dist kept).  The classifier's call is
    told the sandbox is on and denies network."""
    configure(ama_home, server)
    (ws / "dist").mkdir()
    (ws / "dist" / "a.js").write_text("x")
    model = write_script(ws.parent / "script.json", calls("rm -r dist", "make -v"))

    async def go(mode: str):
        agent, events = await make_agent(ws, model, permission_mode=mode, sandbox="auto")
        try:
            await agent.prompt("clean up")
        finally:
            await agent.close()
        return events

    events = run(go("auto"))
    first, second = ends(events)
    assert first["denied"] is True and first["autoDecision"]["layer"] == "rule"
    assert (ws / "dist" / "a.js").exists()
    assert second["autoDecision"]["layer"] == "classifier" and "denied" not in second
    assert "os_sandbox: on (writes limited to the workspace and temp directories; network denied)" in server.prompts()[0]
    from ama.ai import reset_scripted

    reset_scripted()
    events = run(go("default"))
    assert "denied" not in ends(events)[0] and "autoDecision" not in ends(events)[0]
    assert not (ws / "dist").exists()
