"""``AgentSession(session, model, tools, parts=AgentParts(...), settings=AgentSettings(...))``:
typed seams instead of 19 keyword arguments; mypy checks what the composition root hands in."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ama.agent.parts import AgentParts, AgentSettings
from ama.agent.session import AgentSession
from ama.ai import ModelRegistry
from ama.config.loader import Config
from ama.permissions import PermissionContext, PermissionSession
from ama.session.store import Session
from ama.tools import builtin_tools
from tests.agent.helpers import write_script

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class CountingPermissions:
    """A permissions part of its own (the Protocol, not the pipeline): allows everything and
    counts the decisions."""

    def __init__(self) -> None:
        self.inner = PermissionSession(PermissionContext(mode="full-auto", cwd="/", home="/"))
        self.asked: list[str] = []

    @property
    def mode(self) -> str:
        return self.inner.mode

    def set_mode(self, mode: str) -> None:
        self.inner.set_mode(mode)

    def decide(self, tool_name, args, *, read_only=None, hook=None):  # type: ignore[no-untyped-def]
        self.asked.append(tool_name)
        return self.inner.decide(tool_name, args, read_only=read_only, hook=hook)

    async def settle(self, tool_name, args, decision, *, intent=""):  # type: ignore[no-untyped-def]
        return await self.inner.settle(tool_name, args, decision, intent=intent)

    def resolve(self, decision, answer):  # type: ignore[no-untyped-def]
        return self.inner.resolve(decision, answer)


async def test_parts_and_settings_build_a_working_agent(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    model_ref = write_script(
        tmp_path / "s.json", [{"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}]}, "read it"]
    )
    registry = ModelRegistry.load(Config({}))
    permissions = CountingPermissions()
    agent = AgentSession(
        session=Session.in_memory(str(tmp_path)),
        model=registry.get(model_ref),
        tools=builtin_tools(),
        parts=AgentParts(registry=registry, permissions=permissions),
        settings=AgentSettings(output_dir=str(tmp_path / "out"), thinking_level="low", max_attempts=0),
    )
    try:
        result = await agent.prompt("read a.txt")
        assert result.text == "read it"
        assert permissions.asked == ["read"]  # the part it was given decided
        assert agent.thinking_level == "low" and agent.max_attempts == 1  # at least one attempt
        assert agent.read_files is not None and agent.hooks is None and agent.checkpoints is None
        assert agent.state()["permissionMode"] == "full-auto"
    finally:
        await agent.close()


def test_agent_is_in_mypys_checked_set() -> None:
    files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["files"]
    assert "src/ama/agent" in files


def test_mypy_refuses_a_wrong_part(tmp_path: Path) -> None:
    """A part of the wrong shape is a type error at the composition root, not a crash later."""
    bad = tmp_path / "bad_root.py"
    bad.write_text(
        "from ama.agent.parts import AgentParts, AgentSettings\n"
        "from ama.ai import ModelRegistry\n"
        "from ama.config.loader import Config\n"
        "class NoPermissions:\n"
        "    mode = 'default'\n"
        "registry = ModelRegistry.load(Config({}))\n"
        "AgentParts(registry=registry, permissions=NoPermissions())\n"
        "AgentSettings(output_dir=3)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    p = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent", "--ignore-missing-imports", str(bad)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
    )  # fmt: skip
    assert p.returncode == 1, p.stdout + p.stderr
    assert 'Argument "permissions" to "AgentParts" has incompatible type "NoPermissions"' in p.stdout
    assert 'Argument "output_dir" to "AgentSettings" has incompatible type "int"' in p.stdout
