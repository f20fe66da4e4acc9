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
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


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
