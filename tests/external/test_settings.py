"""``agents.external.*`` in config files: validated with the file and key named."""

from __future__ import annotations

import json
from pathlib import Path

from ama.config.external_agents import DEFAULT_ALLOW
from ama.config.loader import load_config


def _load(tmp_path: Path, user: dict, project: dict | None = None):
    user_path = tmp_path / "user.json"
    user_path.write_text(json.dumps(user))
    work = tmp_path / "work"
    (work / ".ama").mkdir(parents=True, exist_ok=True)
    if project is not None:
        (work / ".ama" / "config.json").write_text(json.dumps(project))
    return load_config(work, user_path=user_path)


def test_defaults(tmp_path: Path) -> None:
    cfg = _load(tmp_path, {})
    assert cfg.get("agents.external.allow") == DEFAULT_ALLOW == ["acp:ama", "claude", "codex"]
    assert cfg.get("agents.external.agents") == {}


def test_valid_settings_are_kept(tmp_path: Path) -> None:
    agents = {
        "acp:gemini": {"command": "gemini", "args": ["--experimental-acp"], "env": {"X": "1"}},
        "claude": {"confirm": False},
    }
    cfg = _load(tmp_path, {"agents": {"external": {"allow": ["claude", "acp:*"], "agents": agents}}})
    assert cfg.warnings == []
    assert cfg.get("agents.external.allow") == ["claude", "acp:*"]
    assert cfg.get("agents.external.agents") == agents


def test_bad_values_are_reported_and_ignored(tmp_path: Path) -> None:
    cfg = _load(
        tmp_path,
        {
            "agents.external.allow": ["claude", "gpt"],
            "agents.external.agents": {"codex": {"confirm": "no"}},
        },
    )
    user = tmp_path / "user.json"
    assert cfg.warnings == [
        f"{user}: agents.external.allow has an unknown agent 'gpt' (claude, codex, acp:<program> or acp:*); ignored",
        f"{user}: agents.external.agents codex.confirm must be true or false, got 'no'; ignored",
    ]
    assert cfg.get("agents.external.allow") == DEFAULT_ALLOW


def test_a_project_may_only_narrow_the_allow_list(tmp_path: Path) -> None:
    cfg = _load(tmp_path, {}, {"agents": {"external": {"allow": ["acp:ama"]}}})
    assert cfg.get("agents.external.allow") == ["acp:ama"] and cfg.warnings == []
    cfg = _load(tmp_path, {}, {"agents": {"external": {"allow": ["acp:evil"], "agents": {"acp:evil": {}}}}})
    assert cfg.get("agents.external.allow") == DEFAULT_ALLOW
    assert any("may not set agents.external.allow" in w for w in cfg.warnings)
    assert any("may not set agents.external.agents" in w for w in cfg.warnings)
