"""Every method the agent-client-protocol package's client side can call, against `ama --mode acp`
(the table in docs/acp.md): fork, resume, close, config options, authenticate, extensions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp.exceptions import RequestError
from acp.helpers import text_block

from ama.session.catalog import resolve
from tests.acp.driver import Client, ama_acp, of_kind, text_of
from tests.agent.helpers import write_script

pytestmark = pytest.mark.anyio


def _options(resp: Any) -> dict[str, Any]:
    return {o.id: o for o in resp.config_options}


async def _raises(code: int, call: Any) -> RequestError:
    with pytest.raises(RequestError) as info:
        await call
    assert info.value.code == code, info.value
    return info.value


async def test_every_client_method(tmp_path: Path, ama_home: Path) -> None:
    model = write_script(tmp_path / "s.json", ["first reply", "reply in the fork", "reply after resume", "alive"], mode="sequence")
    other = write_script(tmp_path / "other.json", ["from the other model"])
    client = Client()
    async with ama_acp(client, tmp_path, "--model", model) as conn:
        caps = client.init.agent_capabilities.session_capabilities
        assert caps.list is not None and caps.fork is not None and caps.resume is not None and caps.close is not None
        assert client.init.auth_methods == []

        # authenticate: nothing is advertised, so any method id is refused, naming it
        err = await _raises(-32602, conn.authenticate(method_id="oauth"))
        assert err.data["methodId"] == "oauth"

        # session/new answers with the config options: model, thinking level, permission mode
        new = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        sid = new.session_id
        opts = _options(new)
        assert list(opts) == ["model", "thinking", "mode"]
        assert opts["model"].category == "model" and opts["model"].current_value == model
        assert model in {o.value for o in opts["model"].options}
        assert opts["thinking"].category == "thought_level" and opts["thinking"].current_value == "off"
        assert opts["mode"].category == "mode" and opts["mode"].current_value == "default"

        # session/set_config_option: each option, the full set in the response, an update too
        resp = await conn.set_config_option(config_id="thinking", session_id=sid, value="high")
        assert _options(resp)["thinking"].current_value == "high"
        resp = await conn.set_config_option(config_id="mode", session_id=sid, value="plan")
        assert _options(resp)["mode"].current_value == "plan"
        updates = client.take()
        assert of_kind(updates, "current_mode_update")[-1]["currentModeId"] == "plan"
        last = of_kind(updates, "config_option_update")[-1]["configOptions"]
        assert {o["id"]: o["currentValue"] for o in last}["mode"] == "plan"
        err = await _raises(-32602, conn.set_config_option(config_id="thinking", session_id=sid, value="huge"))
        assert "huge" in str(err)
        err = await _raises(-32602, conn.set_config_option(config_id="model", session_id=sid, value="nosuch/model"))
        assert "nosuch/model" in str(err)
        await _raises(-32602, conn.set_config_option(config_id="colour", session_id=sid, value="red"))
        resp = await conn.set_config_option(config_id="model", session_id=sid, value=other)
        assert _options(resp)["model"].current_value == other
        await conn.set_session_mode(session_id=sid, mode_id="default")  # session/set_mode still works
        client.take()

        # session/prompt with the chosen model
        assert (await conn.prompt(session_id=sid, prompt=[text_block("one")])).stop_reason == "end_turn"
        assert text_of(client.take()) == "from the other model"
        await conn.set_config_option(config_id="model", session_id=sid, value=model)
        assert (await conn.prompt(session_id=sid, prompt=[text_block("two")])).stop_reason == "end_turn"
        assert text_of(client.take()) == "first reply"
        await conn.cancel(session_id=sid)  # session/cancel while idle: nothing to stop

        # session/list
        listed = await conn.list_sessions(cwd=str(tmp_path))
        assert sid in [s.session_id for s in listed.sessions]

        # session/fork: a new session holding the conversation; the source is unchanged
        fork = await conn.fork_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
        fid = fork.session_id
        assert fid != sid and _options(fork)["thinking"].current_value == "high"
        assert (await conn.prompt(session_id=fid, prompt=[text_block("three")])).stop_reason == "end_turn"
        assert text_of(client.take()) == "reply in the fork"
        src = Path(resolve(str(ama_home / "sessions"), sid).path).read_text()
        forked = Path(resolve(str(ama_home / "sessions"), fid).path).read_text()
        assert '"one"' in forked and '"three"' in forked and '"three"' not in src
        await _raises(-32002, conn.fork_session(session_id="nosuchsession", cwd=str(tmp_path), mcp_servers=[]))

        # session/close: the session is gone from this connection
        assert await conn.close_session(session_id=sid) is not None
        await _raises(-32002, conn.prompt(session_id=sid, prompt=[text_block("x")]))
        await _raises(-32002, conn.close_session(session_id=sid))

        # session/resume: the closed session again, without a replay
        resumed = await conn.resume_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
        assert _options(resumed)["thinking"].current_value == "high"  # restored from the file
        assert client.take() == []
        assert (await conn.prompt(session_id=sid, prompt=[text_block("four")])).stop_reason == "end_turn"
        assert text_of(client.take()) == "reply after resume"

        # session/load: with the replay
        loaded = await conn.load_session(session_id=fid, cwd=str(tmp_path), mcp_servers=[])
        assert _options(loaded)["mode"].current_value == "default"
        assert "reply in the fork" in text_of(client.take())

        # extensions: ama has none
        await _raises(-32601, conn.ext_method("ama/nothing", {}))
        await conn.ext_notification("ama/nothing", {})  # ignored
        assert (await conn.prompt(session_id=sid, prompt=[text_block("still alive?")])).stop_reason == "end_turn"


async def test_no_session_mode_advertises_only_close(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", ["hi"])
    client = Client()
    async with ama_acp(client, tmp_path, "--model", model, "--no-session") as conn:
        caps = client.init.agent_capabilities.session_capabilities
        assert caps.close is not None and caps.fork is None and caps.resume is None and caps.list is None
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await _raises(-32603, conn.fork_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[]))
        await _raises(-32603, conn.resume_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[]))
        await conn.close_session(session_id=sid)


async def test_close_stops_a_running_prompt(tmp_path: Path) -> None:
    import asyncio

    model = write_script(tmp_path / "s.json", [{"text": ["slow "] * 200, "delayMs": 50}])
    client = Client()
    async with ama_acp(client, tmp_path, "--model", model) as conn:
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        started = asyncio.Event()
        client.on_update = lambda u: started.set()
        running = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await started.wait()
        await conn.close_session(session_id=sid)
        assert (await running).stop_reason == "cancelled"
