"""``list_external_agents``: installed from PATH, versions probed in the background and cached."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import ama
from ama.agent.external import list_external_agents
from tests.conftest import FIXTURES


def _fake(bin_dir: Path, name: str) -> None:
    exe = bin_dir / name
    exe.write_text(f"#!{sys.executable}\n" + (FIXTURES / "external" / "fake_cli.py").read_text())
    exe.chmod(0o755)


def test_absent_agents_read_not_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    agents = {a["name"]: a for a in list_external_agents({})}
    assert list(agents) == ["claude", "codex", "acp:ama"]
    assert agents["claude"] == {
        "name": "claude",
        "runner": "claude",
        "installed": False,
        "version": None,
        "description": "Claude Code (claude -p, stream-json events)",
        "allowed": True,
    }
    assert agents["codex"]["installed"] is False
    # ama itself needs nothing on PATH
    assert agents["acp:ama"]["installed"] is True and agents["acp:ama"]["version"] == ama.__version__


def test_versions_are_probed_and_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(tmp_path, "claude")
    _fake(tmp_path, "gemini")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("FAKE_VERSION", "2.0.8 (Claude Code)")
    config = {
        "agents.external.allow": ["claude", "acp:gemini", "acp:zed-agent"],
        "agents.external.agents": {"acp:gemini": {"args": ["--experimental-acp"]}},
    }
    agents = {a["name"]: a for a in list_external_agents(config, wait=True)}
    assert list(agents) == ["claude", "codex", "acp:ama", "acp:gemini", "acp:zed-agent"]
    assert agents["claude"]["installed"] and agents["claude"]["version"] == "2.0.8"
    assert agents["acp:gemini"]["version"] == "2.0.8" and agents["acp:gemini"]["allowed"]
    assert agents["codex"]["allowed"] is False and agents["acp:ama"]["allowed"] is False
    assert agents["acp:zed-agent"]["installed"] is False
    # cached: a second listing answers without probing again
    monkeypatch.setenv("FAKE_VERSION", "9.9.9")
    assert list_external_agents(config)[0]["version"] == "2.0.8"
