"""``create_agent(sandbox=...)``: the SDK's bash sandbox is an explicit argument (default off),
never ``sandbox.bash`` from the config; "auto" runs bash in real bwrap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ama.errors import InvalidArguments
from ama.sandbox import detect
from ama.sdk import create_agent
from tests.agent.helpers import write_script

pytestmark = pytest.mark.anyio
bwrap = detect(refresh=True)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _allow(request: dict[str, Any]) -> str:
    return "allow"


async def _escape(tmp_path: Path, ama_home: Path, **kwargs: Any) -> tuple[Any, Path, list[dict]]:
    """An agent whose config says ``sandbox.bash: auto`` runs a bash call that writes outside
    its workspace; returns the agent's sandbox, the target and the tool results."""
    (ama_home / "config.json").write_text(json.dumps({"sandbox": {"bash": "auto"}}))
    ws = tmp_path / "ws"
    ws.mkdir()
    target = tmp_path / "outside.txt"
    model = write_script(
        tmp_path / "s.json",
        [{"toolCalls": [{"name": "bash", "arguments": {"command": f"echo x > {target}"}}]}, "done"],
    )
    agent = await create_agent(cwd=str(ws), model=model, session="memory", approve=_allow, **kwargs)
    ends: list[dict] = []
    agent.subscribe(lambda ev: ends.append(ev) if ev["type"] == "tool_execution_end" else None)
    try:
        await agent.prompt("write outside")
        return agent.bash_sandbox, target, ends
    finally:
        await agent.close()


async def test_default_is_no_sandbox_whatever_the_config_says(tmp_path: Path, ama_home: Path) -> None:
    sandbox, target, ends = await _escape(tmp_path, ama_home)
    assert sandbox.active is False
    assert target.read_text() == "x\n"  # bash ran on the host
    assert ends and ends[0]["isError"] is False


@pytest.mark.skipif(bwrap.kind != "bwrap", reason=f"no working bubblewrap here: {bwrap.explanation}")
async def test_auto_runs_bash_in_bwrap(tmp_path: Path, ama_home: Path) -> None:
    sandbox, target, ends = await _escape(tmp_path, ama_home, sandbox="auto")
    assert sandbox.active is True and sandbox.status.kind == "bwrap"
    assert not target.exists()  # the sandbox refused the write outside the workspace
    assert ends and ends[0]["isError"] is True


@pytest.mark.skipif(bwrap.kind != "bwrap", reason=f"no working bubblewrap here: {bwrap.explanation}")
async def test_auto_wins_over_a_config_that_switches_it_off(tmp_path: Path, ama_home: Path) -> None:
    (ama_home / "config.json").write_text(json.dumps({"sandbox": {"bash": "off", "enabled": "off"}}))
    model = write_script(tmp_path / "s.json", ["hi"])
    agent = await create_agent(cwd=str(tmp_path), model=model, session="memory", sandbox="auto")
    try:
        assert agent.bash_sandbox.active is True
    finally:
        await agent.close()


async def test_a_bad_value_is_refused_with_the_value(tmp_path: Path, ama_home: Path) -> None:
    model = write_script(tmp_path / "s.json", ["hi"])
    with pytest.raises(InvalidArguments, match="'bwrap'"):
        await create_agent(cwd=str(tmp_path), model=model, session="memory", sandbox="bwrap")  # type: ignore[arg-type]
