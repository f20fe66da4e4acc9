"""Config loading: precedence, project restrictions, bad input reported not fatal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ama.config.loader import load_config


def write(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))


def test_user_then_project_then_env(ama_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(ama_home / "config.json", {"model": "anthropic/a", "sandbox": {"network": "allow", "bash": "auto"}})
    write(tmp_path / ".ama" / "config.json", {"model": "openai/b", "sandbox": {"network": "deny"}})
    cfg = load_config(tmp_path)
    assert cfg.get("model") == "openai/b" and cfg.sources["model"].endswith(".ama/config.json")
    assert cfg.get("sandbox.network") == "deny" and cfg.get("sandbox.bash") == "auto"
    monkeypatch.setenv("AMA_SANDBOX", "off")
    assert load_config(tmp_path).get("sandbox.enabled") == "off"
    assert cfg.warnings == []


def test_project_may_only_tighten(ama_home: Path, tmp_path: Path) -> None:
    write(ama_home / "config.json", {"permissions": {"deny": ["read(.env)"], "allow": ["bash(ls)"]}})
    write(
        tmp_path / ".ama" / "config.json",
        {
            "sandbox": {"network": "allow", "bash": "off", "writable": ["/"]},
            "permissions": {"deny": [], "ask": ["bash(git push:*)"], "allow": ["bash"]},
            "checkpoints": {"mode": "shadow-git", "maxFileBytes": 1},
        },
    )
    cfg = load_config(tmp_path)
    assert cfg.get("sandbox.network") == "deny"  # the default: the project tried to loosen it
    assert cfg.get("sandbox.writable") == [] and cfg.get("permissions.allow") == ["bash(ls)"]
    assert cfg.get("permissions.deny") == ["read(.env)"]  # an empty project list removes nothing
    assert cfg.get("permissions.ask") == ["bash(git push:*)"]
    assert cfg.get("checkpoints.mode") == "tools" and cfg.get("checkpoints.maxFileBytes") == 1
    joined = "\n".join(cfg.warnings)
    for key in ("sandbox.network", "sandbox.bash", "sandbox.writable", "permissions.allow", "checkpoints.mode"):
        assert f"may not set {key}" in joined


def test_bad_input_is_reported_and_ignored(ama_home: Path, tmp_path: Path) -> None:
    write(ama_home / "config.json", {"modle": "x", "sandbox": {"network": "maybe"}, "checkpoints": {"keep": -1}})
    write(tmp_path / ".ama" / "config.json", "{not json")
    cfg = load_config(tmp_path)
    joined = "\n".join(cfg.warnings)
    assert "unknown key 'modle'" in joined
    assert "sandbox.network must be one of deny, allow, got 'maybe'" in joined
    assert "checkpoints.keep must be of type int" in joined
    assert "invalid JSON at line 1" in joined
    assert cfg.get("sandbox.network") == "deny" and cfg.get("checkpoints.keep") == 100


def test_compaction_keys_are_checked(ama_home: Path, tmp_path: Path) -> None:
    write(ama_home / "config.json", {"compaction": {"threshold": 2, "enabled": "no", "keepRecentTokens": 5000}})
    cfg = load_config(tmp_path)
    joined = "\n".join(cfg.warnings)
    assert "compaction.threshold must be a number greater than 0 and at most 1, got 2" in joined
    assert "compaction.enabled must be of type bool, got 'no'" in joined
    assert cfg.get("compaction.threshold") == 0.8 and cfg.get("compaction.enabled") is True
    assert cfg.get("compaction.keepRecentTokens") == 5000
