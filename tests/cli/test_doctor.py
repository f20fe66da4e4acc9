"""`ama doctor` reports every section and flags real problems."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import ama_cmd


def doctor(cwd: Path, env: dict | None = None) -> dict:
    import os

    e = dict(os.environ)
    for k in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        e.pop(k, None)
    e.update(env or {})
    p = subprocess.run(ama_cmd("doctor", "--json"), cwd=cwd, capture_output=True, text=True, timeout=60, env=e)
    out = json.loads(p.stdout)
    assert p.returncode == (0 if out["ok"] else 1), p.stderr  # exit 1 exactly when a section has a problem
    return out


def test_sections_and_problems(tmp_path: Path, ama_home: Path) -> None:
    d = doctor(tmp_path)
    assert list(d["sections"]) == ["python", "config", "providers", "data", "index", "tools", "sandbox"]
    prov = d["sections"]["providers"]
    assert prov["ok"] is False and any("no default model" in x for x in prov["lines"])
    assert d["sections"]["tools"]["tools"]["git"]
    assert d["sections"]["sandbox"]["bash"] == "off"
    (ama_home / "config.json").write_text(json.dumps({"sandbox": {"network": "open"}, "model": "openai/gpt-4.1"}))
    d = doctor(tmp_path, {"OPENAI_API_KEY": "sk-test"})
    cfg = d["sections"]["config"]
    assert cfg["ok"] is False and "sandbox.network must be one of deny, allow" in cfg["warnings"][0]
    prov = d["sections"]["providers"]
    assert prov["ok"] is True and prov["providers"]["openai"]["keySet"] is True
    assert d["ok"] is False  # the configuration problem makes the whole report fail


def test_data_section_counts_sessions_and_backups(tmp_path: Path, ama_home: Path) -> None:
    from tests.agent.helpers import write_script

    model = write_script(tmp_path / "s.json", [
        {"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
        {"toolCalls": [{"name": "write", "arguments": {"path": "a.txt", "content": "x"}}]},
        "ok",
    ])  # fmt: skip
    (tmp_path / "a.txt").write_text("before")
    subprocess.run(ama_cmd("-p", "hi", "--model", model, "--permission-mode", "full-auto"), cwd=tmp_path,
                   capture_output=True, timeout=60, check=True)  # fmt: skip
    data = doctor(tmp_path)["sections"]["data"]
    assert data["sessions"] == 1 and data["fileHistory"]["blobs"] == 1


def test_a_problem_exits_1_in_both_outputs(tmp_path: Path) -> None:
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    p = subprocess.run(ama_cmd("doctor"), cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)
    assert "[PROBLEM]" in p.stdout  # no model and no key
    assert p.returncode == 1, p.stdout
    p = subprocess.run(ama_cmd("doctor", "--json"), cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)
    assert json.loads(p.stdout)["ok"] is False and p.returncode == 1
