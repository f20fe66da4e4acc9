"""`ama -p` end to end with the scripted provider: read, edit, test with bash, answer."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ama.session.reader import read_session
from tests.agent.helpers import compare_golden, write_script
from tests.conftest import ama_cmd

CALC = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\nassert add(2, 3) == 5, add(2, 3)\nprint('ok')\n"


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text(CALC)
    (ws / "test_calc.py").write_text(TEST)
    return ws


SCRIPT = [
    {"text": "Let me look at calc.py.", "toolCalls": [{"name": "read", "arguments": {"path": "calc.py"}}]},
    {
        "text": "The subtraction is the bug.",
        "toolCalls": [{"name": "edit", "arguments": {"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}}],
    },
    {"toolCalls": [{"name": "bash", "arguments": {"command": "python3 test_calc.py"}}]},
    {"text": "Fixed `add`: it subtracted. The test passes now.", "usage": {"input": 900, "output": 20}},
]


def run(ws: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(ama_cmd(*args), cwd=ws, input=stdin, capture_output=True, text=True, timeout=120)


def test_read_edit_bash_answer(tmp_path: Path, ama_home: Path) -> None:
    ws = workspace(tmp_path)
    model = write_script(tmp_path / "fix.json", SCRIPT)
    p = run(ws, "-p", "fix the failing test", "--model", model, "--permission-mode", "full-auto", "--output-format", "stream-json")
    assert p.returncode == 0, p.stderr
    events = [json.loads(line) for line in p.stdout.splitlines()]
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    types = [e["type"] for e in events]
    assert types[:3] == ["entry_appended"] * 3 and types[-3:] == ["agent_end", "agent_before_settle", "agent_settled"]
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert [e["toolName"] for e in ends] == ["read", "edit", "bash"]
    assert not any(e["isError"] for e in ends)
    assert "ok" in ends[2]["result"]["content"][0]["text"]
    # the session file holds the whole conversation
    (path,) = list((ama_home / "sessions").rglob("*.jsonl"))
    d = read_session(path)
    roles = [type(e.message).__name__ if e.type == "message" else e.type for e in d.entries]
    assert roles.count("AssistantMessage") == 4 and roles.count("ToolResultMessage") == 3
    runs = [e.data for e in d.entries if getattr(e, "custom_type", None) == "ama.run"]
    # CREATED before anything can refuse the run, RUNNING when it starts and after every step
    assert [r["status"] for r in runs] == ["CREATED"] + ["RUNNING"] * 4 + ["COMPLETED"]
    assert [r["stepIndex"] for r in runs] == [0, 0, 1, 2, 3, 4]
    # deltas and live tool output depend on chunk timing; the rest of the sequence is exact
    steady = [e for e in events if e["type"] not in ("message_update", "tool_execution_update")]
    compare_golden("print_fix", steady, root=str(tmp_path))


def test_text_output_and_stdin_prompt(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    model = write_script(tmp_path / "hi.json", ["Hello from the script."])
    p = run(ws, "-p", "--model", model, stdin="say hi")
    assert p.returncode == 0 and p.stdout == "Hello from the script.\n"


def test_unattended_default_mode_denies_edits_with_a_reason(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    model = write_script(tmp_path / "fix.json", SCRIPT[:2] + ["I could not edit the file."])
    p = run(ws, "-p", "fix it", "--model", model, "--output-format", "stream-json")
    assert p.returncode == 0, p.stderr
    ends = [json.loads(x) for x in p.stdout.splitlines() if '"tool_execution_end"' in x]
    assert ends[0]["toolName"] == "read" and not ends[0]["isError"]
    assert ends[1]["toolName"] == "edit" and ends[1]["denied"] is True
    assert "approval" in ends[1]["result"]["content"][0]["text"]
    assert (ws / "calc.py").read_text() == CALC


def test_json_output_and_failure_exit_code(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    model = write_script(tmp_path / "bad.json", [{"error": {"status": 400, "message": "bad request"}}])
    p = run(ws, "-p", "hi", "--model", model, "--output-format", "json")
    assert p.returncode == 1
    out = json.loads(p.stdout)
    assert out["status"] == "FAILED" and out["terminalReason"] == "error" and "bad request" in out["errorMessage"]
    assert "ama: error:" in p.stderr


def test_errors_are_clear(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    p = run(ws, "-p", "hi", "--model", "nope/missing")
    assert p.returncode in (2, 5) and "nope/missing" in p.stderr and "Traceback" not in p.stderr
    p = run(ws, "-p", stdin="")
    assert p.returncode == 2 and "no prompt" in p.stderr
