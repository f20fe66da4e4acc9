"""``ama plans list|show|rm`` over plan files written by a real plan-mode session."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

from tests.agent.helpers import make_agent, write_script
from tests.conftest import ama_cmd

ONE = "<proposed_plan>\n# Add a greeting\n\n1. Add greet()\n</proposed_plan>"
TWO = "<proposed_plan>\n# Add a greeting\n\n1. Add greet()\n2. Test it\n</proposed_plan>"
OTHER = "<proposed_plan>\n# Fix the parser\n\n- read it\n- fix it\n</proposed_plan>"


def _ama(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(ama_cmd("plans", *args), cwd=ws, capture_output=True, text=True, timeout=60)


def test_list_show_rm(tmp_path: Path, ama_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    model = write_script(tmp_path / "s.json", [ONE, TWO, OTHER], mode="sequence")

    async def go() -> tuple[str, str]:
        agent, _ = await make_agent(ws, model, permission_mode="plan")
        await agent.prompt("greet")
        first = agent.plans.pending()
        assert first is not None
        _, task = agent.plans.respond(first.id, "revise", feedback="test it too")
        assert task is not None
        await task
        agent.plans.respond(first.id, "reject")
        await agent.prompt("now the parser")
        second = agent.plans.pending()
        assert second is not None
        await agent.close()
        return first.id, second.id

    greet, parser = asyncio.run(go())
    (ws / ".ama" / "plans" / "notes.md").write_text("my own notes, not a plan\n")

    out = _ama(ws, "list", "--json")
    assert out.returncode == 0, out.stderr
    listed = json.loads(out.stdout)["plans"]
    assert [(p["id"], p["latestVersion"], p["title"], p["slug"]) for p in listed] == [
        (parser, 1, "Fix the parser", "fix-the-parser"),
        (greet, 2, "Add a greeting", "add-a-greeting"),
    ]
    assert [Path(v["filePath"]).name for v in listed[1]["versions"]] == ["add-a-greeting-v1.md", "add-a-greeting-v2.md"]
    text = _ama(ws, "list")
    assert text.returncode == 0 and greet in text.stdout and "Fix the parser" in text.stdout

    latest = _ama(ws, "show", "add-a-greeting")
    assert latest.returncode == 0 and latest.stdout.rstrip().endswith("2. Test it")
    old = _ama(ws, "show", greet, "--version", "1", "--json")
    assert json.loads(old.stdout)["markdown"] == "# Add a greeting\n\n1. Add greet()"
    prefix = _ama(ws, "show", parser[len("plan-"):][:4])
    assert prefix.returncode == 0 and "- fix it" in prefix.stdout

    gone = _ama(ws, "rm", greet, "--version", "1")
    assert gone.returncode == 0 and "removed .ama/plans/add-a-greeting-v1.md" in gone.stdout
    assert not (ws / ".ama" / "plans" / "add-a-greeting-v1.md").exists()
    gone = _ama(ws, "rm", "fix-the-parser", "--json")
    assert [Path(v["filePath"]).name for v in json.loads(gone.stdout)["removed"]] == ["fix-the-parser-v1.md"]
    left = sorted(p.name for p in (ws / ".ama" / "plans").iterdir())
    assert left == ["add-a-greeting-v2.md", "notes.md"]

    bad = _ama(ws, "show", "plan-nope")
    assert bad.returncode == 5 and "plan-nope" in bad.stderr and "Traceback" not in bad.stderr
    bad = _ama(ws, "rm", greet, "--version", "7")
    assert bad.returncode == 5 and "no version 7" in bad.stderr
    help_ = _ama(ws, "rm", "--help")
    assert help_.returncode == 0 and "--version" in help_.stdout
    empty = subprocess.run(ama_cmd("plans", "list"), cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert empty.returncode == 0 and "no plans in" in empty.stdout
