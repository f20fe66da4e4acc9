"""`ama config` end to end."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import ama_cmd


def ama(*args: str, cwd: Path, rc: int = 0) -> subprocess.CompletedProcess:
    p = subprocess.run(ama_cmd("config", *args), cwd=cwd, capture_output=True, text=True, timeout=60)
    assert p.returncode == rc, (p.stdout, p.stderr)
    return p


def test_set_get_unset_keeps_other_keys(tmp_path: Path, ama_home: Path) -> None:
    (ama_home / "config.json").write_text(json.dumps({"providers": {"x": {"api": "openai-completions"}}}))
    ama("set", "sandbox.writable", '["~/.npm"]', cwd=tmp_path)
    ama("set", "model", "openai/gpt-4.1", cwd=tmp_path)
    data = json.loads((ama_home / "config.json").read_text())
    assert data == {"providers": {"x": {"api": "openai-completions"}}, "sandbox": {"writable": ["~/.npm"]}, "model": "openai/gpt-4.1"}
    assert ama("get", "sandbox.writable", cwd=tmp_path).stdout.strip() == '["~/.npm"]'
    ama("unset", "sandbox.writable", cwd=tmp_path)
    assert "sandbox" not in json.loads((ama_home / "config.json").read_text())


def test_project_writes_only_allowed_values(tmp_path: Path) -> None:
    ama("set", "--project", "sandbox.network", "deny", cwd=tmp_path)
    assert json.loads((tmp_path / ".ama" / "config.json").read_text()) == {"sandbox": {"network": "deny"}}
    err = ama("set", "--project", "sandbox.bash", "auto", cwd=tmp_path, rc=2).stderr
    assert "a project may not set sandbox.bash" in err


def test_bad_values_and_keys_are_refused_with_the_offending_value(tmp_path: Path, ama_home: Path) -> None:
    assert "got 'loud'" in ama("set", "thinkingLevel", "loud", cwd=tmp_path, rc=2).stderr
    assert "unknown config key 'sandbox.netwrok'" in ama("get", "sandbox.netwrok", cwd=tmp_path, rc=2).stderr
    (ama_home / "config.json").write_text("{broken")
    err = ama("set", "model", "x/y", cwd=tmp_path, rc=1).stderr
    assert "not valid JSON" in err and (ama_home / "config.json").read_text() == "{broken"


def test_list_json_has_every_key_with_description(tmp_path: Path) -> None:
    data = json.loads(ama("list", "--json", cwd=tmp_path).stdout)
    keys = {k["key"]: k for k in data["keys"]}
    assert {"model", "sandbox.network", "checkpoints.mode", "permissions.deny", "retry.maxAttempts"} <= set(keys)
    assert all(k["description"] for k in keys.values())
    assert keys["sandbox.network"]["default"] == "deny" and keys["sandbox.network"]["source"] == "default"


def test_invalid_file_warns_on_list_and_get(tmp_path: Path, ama_home: Path) -> None:
    (ama_home / "config.json").write_text('{"model": ')
    for args in (("list",), ("get", "model"), ("list", "--json")):
        err = ama(*args, cwd=tmp_path).stderr
        assert f"ama: warning: {ama_home / 'config.json'}: invalid JSON at line 1" in err, args


def test_list_names_the_files_it_read(tmp_path: Path, ama_home: Path) -> None:
    (ama_home / "config.json").write_text('{"thinkingLevel": "low"}')
    out = ama("list", cwd=tmp_path).stdout.splitlines()
    assert out[0] == f"# {ama_home / 'config.json'} (read)"
    assert out[1] == f"# {tmp_path / '.ama' / 'config.json'} (not there)"
    files = json.loads(ama("list", "--json", cwd=tmp_path).stdout)["files"]
    assert files == {str(ama_home / "config.json"): "read", str(tmp_path / ".ama" / "config.json"): "missing"}


def test_set_model_refuses_an_unknown_model_with_did_you_mean(tmp_path: Path, ama_home: Path) -> None:
    err = ama("set", "model", "nosuch/model", cwd=tmp_path, rc=2).stderr
    assert "unknown provider 'nosuch'" in err
    err = ama("set", "model", "openai/gpt-4.1x", cwd=tmp_path, rc=2).stderr
    assert "unknown model 'openai/gpt-4.1x'; did you mean openai/gpt-4.1" in err
    assert not (ama_home / "config.json").exists()
    ama("set", "model", "openai/gpt-4.1", cwd=tmp_path)


def test_three_level_keys_nest_and_auto_is_a_mode(tmp_path: Path, ama_home: Path) -> None:
    ama("set", "permissions.classifier.model", "openai/gpt-4.1-mini", cwd=tmp_path)
    ama("set", "permissions.deny", '["bash(rm:*)"]', cwd=tmp_path)
    ama("set", "permissionMode", "auto", cwd=tmp_path)
    data = json.loads((ama_home / "config.json").read_text())
    assert data == {"permissions": {"classifier": {"model": "openai/gpt-4.1-mini"}, "deny": ["bash(rm:*)"]},
                    "permissionMode": "auto"}  # fmt: skip
    assert ama("get", "permissions.classifier.model", cwd=tmp_path).stdout.strip() == "openai/gpt-4.1-mini"
    ama("unset", "permissions.classifier.model", cwd=tmp_path)
    assert json.loads((ama_home / "config.json").read_text())["permissions"] == {"deny": ["bash(rm:*)"]}
    bad = ama("set", "permissionMode", "autox", cwd=tmp_path, rc=2)
    assert "auto-edit, auto, full-auto" in bad.stderr and "'autox'" in bad.stderr
