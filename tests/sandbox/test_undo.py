"""Auto-allowed sandbox work can be undone: with ``sandbox.bash: auto`` shadow-git checkpoints
are on by default, so a rewind restores what an unprompted sandboxed command deleted or changed.
Real bwrap, real git, the real composition root, default permission mode."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ama.checkpoints.tracker import default_mode
from ama.sandbox import SandboxStatus
from tests.agent.helpers import make_agent, write_script


def test_default_mode_follows_sandbox_bash_unless_set():
    assert default_mode(None, sandbox_bash="auto") == "shadow-git"
    assert default_mode(None, sandbox_bash="off") == "tools"
    assert default_mode(None, sandbox_bash=None) == "tools"
    for explicit in ("tools", "off", "shadow-git"):  # the user's setting wins
        assert default_mode(explicit, sandbox_bash="auto") == explicit


def _script(tmp_path: Path) -> str:
    command = "rm gone.txt && echo changed > keep.txt && echo new > made.txt"
    return write_script(
        tmp_path / "s.json",
        [{"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}, "done", "next"],
        mode="sequence",
    )


async def _delete_then_rewind(ws: Path, model: str) -> tuple[dict, list[dict]]:
    agent, events = await make_agent(ws, model)  # default permission mode, unattended
    try:
        assert agent.checkpoints is not None
        await agent.prompt("tidy up with bash")
        ends = [e for e in events if e["type"] == "tool_execution_end"]
        assert ends and not ends[0]["isError"] and ends[0]["result"]["details"]["sandboxed"] is True
        assert not (ws / "gone.txt").exists()  # the command ran, without asking
        point = agent.rewind_points()[0]["entryId"]
        return await agent.rewind(point, "code"), events
    finally:
        await agent.close()


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "gone.txt").write_text("to be deleted\n")
    (ws / "keep.txt").write_text("original\n")
    return ws


def test_sandbox_auto_turns_shadow_git_on_and_rewind_restores_bash_changes(
    tmp_path: Path, ama_home: Path, bwrap_status: SandboxStatus
):
    (ama_home / "config.json").write_text(json.dumps({"sandbox": {"bash": "auto"}}))
    ws = _workspace(tmp_path)
    res, events = asyncio.run(_delete_then_rewind(ws, _script(tmp_path)))
    assert not any(e["type"] == "permission_request" for e in events)
    assert (ws / "gone.txt").read_text() == "to be deleted\n"
    assert (ws / "keep.txt").read_text() == "original\n"
    assert not (ws / "made.txt").exists()
    assert sorted(res["code"]["restored"]) == ["gone.txt", "keep.txt"] and res["code"]["deleted"] == ["made.txt"]


@pytest.mark.parametrize(
    ("config", "mode"),
    [
        ({"sandbox": {"bash": "auto"}}, "shadow-git"),
        ({"sandbox": {"bash": "auto"}, "checkpoints": {"mode": "tools"}}, "tools"),  # explicit wins
        ({"sandbox": {"bash": "off"}}, "tools"),
    ],
)
def test_the_composition_root_picks_the_mode(tmp_path: Path, ama_home: Path, config: dict, mode: str):
    (ama_home / "config.json").write_text(json.dumps(config))
    ws = _workspace(tmp_path)

    async def go():
        agent, _ = await make_agent(ws, _script(tmp_path))
        try:
            return agent.checkpoints.mode
        finally:
            await agent.close()

    assert asyncio.run(go()) == mode
