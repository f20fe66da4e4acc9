"""``ama agents list``: agent types (built-in, project definitions, broken ones as warnings)
and the external agents with their PATH probe, as RPC ``get_agents`` lists them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import ama_cmd


def run(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(ama_cmd("agents", *args), cwd=cwd, capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})})  # fmt: skip


def test_agents_list_types_definitions_and_external(tmp_path: Path, ama_home: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".ama" / "agents").mkdir(parents=True)
    (ws / ".ama" / "agents" / "reviewer.md").write_text("---\nname: reviewer\ndescription: Reviews diffs\ntools: read, grep\n---\nReview.\n")
    (ws / ".ama" / "agents" / "broken.md").write_text("no front matter here\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "claude"
    fake.write_text("#!/bin/sh\necho '2.0.1 (Claude Code)'\n")
    fake.chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}"}
    out = run(ws, "list", "--json", env=env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    by = {a["name"]: a for a in data["agents"]}
    assert [a["name"] for a in data["agents"]][:3] == ["reviewer", "general", "explore"]
    assert by["reviewer"]["tools"] == ["read", "grep"] and by["reviewer"]["location"].endswith("reviewer.md")
    assert by["claude"]["installed"] is True and "2.0.1" in by["claude"]["version"]
    assert by["acp:ama"]["installed"] is True
    assert any("broken.md" in w and "no front matter" in w for w in data["warnings"])
    human = run(ws, "list", env=env)
    assert "reviewer" in human.stdout and "claude           external installed" in human.stdout
    assert "broken.md" in human.stderr
    bare = json.loads(run(ws, "list", "--json", "--no-external").stdout)
    assert all(a["runner"] == "ama" for a in bare["agents"])
    bad = run(ws, "list", "--cwd", str(tmp_path / "nowhere"))
    assert bad.returncode == 2 and "is not a directory" in bad.stderr and "Traceback" not in bad.stderr
