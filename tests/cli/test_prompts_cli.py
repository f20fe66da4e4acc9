"""``ama skills list``, ``ama templates list``, ``-p "/template args"`` and RPC
``get_commands`` / ``get_skills`` / ``prompt`` through real ``ama`` processes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.agent.helpers import write_script
from tests.conftest import ama_cmd
from tests.rpc.helpers import Rpc


def put(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def project(tmp_path: Path, home: Path) -> Path:
    ws = tmp_path / "ws"
    put(ws / ".ama/prompts/review.md", "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $1 now.\n")
    put(ws / ".ama/prompts/broken.md", "---\ndescription: 'x\n---\nbody\n")
    put(ws / ".ama/skills/pdf-forms/SKILL.md", "---\nname: pdf-forms\ndescription: Fill PDF forms.\n---\nUse fill.py.\n")
    put(home / "skills/pdf-forms/SKILL.md", "---\nname: pdf-forms\ndescription: user copy\n---\nx\n")
    put(home / "skills/notes/SKILL.md", "---\nname: notes\ndescription: Take notes.\n---\nWrite NOTES.md.\n")
    return ws


def run(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(ama_cmd(*args), cwd=ws, capture_output=True, text=True, timeout=120)


def test_skills_and_templates_list(tmp_path: Path, ama_home: Path) -> None:
    ws = project(tmp_path, ama_home)
    p = run(ws, "skills", "list", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert [(s["name"], s["scope"], s["location"]) for s in out["skills"]] == [
        ("pdf-forms", "project", str(ws / ".ama/skills/pdf-forms/SKILL.md")),
        ("notes", "user", str(ama_home / "skills/notes/SKILL.md")),
    ]
    assert any("shadowed" in w and "project wins" in w for w in out["warnings"])
    p = run(ws, "templates", "list", "--json")
    out = json.loads(p.stdout)
    by = {t["name"]: t for t in out["templates"]}
    assert by["review"]["argumentHint"] == "FILE" and by["review"]["description"] == "Review a file"
    assert by["broken"]["error"].startswith(f"{ws}/.ama/prompts/broken.md:2: unterminated")
    p = run(ws, "templates", "list")
    assert p.returncode == 0 and "/review FILE" in p.stdout and "broken: " in p.stdout
    p = run(ws, "skills", "list", "--cwd", str(tmp_path / "nowhere"))
    assert p.returncode == 2 and "is not a directory" in p.stderr and "Traceback" not in p.stderr


def test_print_mode_expands_and_reports_errors(tmp_path: Path, ama_home: Path) -> None:
    ws = project(tmp_path, ama_home)
    model = write_script(tmp_path / "s.json", [{"text": "ok"}])
    p = run(ws, "-p", "/review calc.py", "--model", model, "--output-format", "stream-json")
    assert p.returncode == 0, p.stderr
    events = [json.loads(line) for line in p.stdout.splitlines()]
    (start,) = [e for e in events if e["type"] == "before_agent_start"]
    assert start["prompt"] == "Review calc.py now."
    p = run(ws, "-p", "/skill:nope", "--model", model)
    assert p.returncode == 2 and "no skill named 'nope' (skills: pdf-forms, notes" in p.stderr
    p = run(ws, "-p", "/broken", "--model", model)
    assert p.returncode == 2 and f"cannot use /broken: {ws}/.ama/prompts/broken.md:2:" in p.stderr
    assert "Traceback" not in p.stderr


def test_rpc_get_commands_get_skills_and_prompt(tmp_path: Path, ama_home: Path) -> None:
    ws = project(tmp_path, ama_home)
    model = write_script(tmp_path / "s.json", [{"text": "ok"}])
    rpc = Rpc(ws, "--model", model, "--no-session")
    try:
        cmds = rpc.call("get_commands")["data"]["commands"]
        by = {c["name"]: c for c in cmds}
        assert by["help"]["source"] == "builtin" and by["review"]["source"] == "template"
        assert by["skill:pdf-forms"] == {
            "name": "skill:pdf-forms", "description": "Fill PDF forms.", "source": "skill",
            "location": str(ws / ".ama/skills/pdf-forms/SKILL.md"),
        }
        skills = rpc.call("get_skills")["data"]["skills"]
        assert [(s["name"], s["description"], s["location"]) for s in skills] == [
            ("pdf-forms", "Fill PDF forms.", str(ws / ".ama/skills/pdf-forms/SKILL.md")),
            ("notes", "Take notes.", str(ama_home / "skills/notes/SKILL.md")),
        ]
        bad = rpc.call("prompt", message="/skill:nope")
        assert bad["success"] is False and bad["error"]["code"] == "invalid_arguments"
        rpc.send("prompt", message="/skill:notes keep it short")
        start = rpc.event("before_agent_start")
        assert start["prompt"].startswith('<skill name="notes"') and start["prompt"].endswith("</skill>\n\nkeep it short")
        rpc.event("agent_settled")
    finally:
        assert rpc.close() == 0


def test_interactive_line_mode_runs_templates_and_skills(tmp_path: Path, ama_home: Path) -> None:
    import sys

    from ama.session.reader import read_session

    ws = project(tmp_path, ama_home)
    model = write_script(tmp_path / "s.json", ["first", "second"])
    p = subprocess.run(
        [sys.executable, "-m", "ama", "--line", "--model", model],
        cwd=ws, input="/help\n/review a.py\n/skill:notes short\n/skill:nope\n/quit\n",
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "Prompt templates:" in out and "/review FILE" in out and "/skill:pdf-forms" in out
    assert "first" in out and "second" in out and "error: no skill named 'nope'" in out
    (path,) = list((ama_home / "sessions").rglob("*.jsonl"))
    users = [e.message.content for e in read_session(path).entries if e.type == "message" and type(e.message).__name__ == "UserMessage"]
    assert users[0] == "Review a.py now." and users[1].startswith('<skill name="notes"')


def test_slash_completion_offers_templates_and_skills() -> None:
    from ama.cli.ui.completion import slash_completions

    names = ["help", "model", "review", "skill:notes", "skill:pdf-forms"]
    assert slash_completions("/sk", names) == ["skill:notes", "skill:pdf-forms"]
    assert slash_completions("/re", names) == ["review"]
    assert slash_completions("/review a", names) == [] and slash_completions("hi", names) == []
