"""Interactive mode driven for real: in tmux (full-screen input) and through a pipe (--line)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ama.session.reader import read_session
from tests.conftest import ROOT

SCRIPT = {
    "turns": [
        {"text": "Let me run a command.", "toolCalls": [{"name": "bash", "arguments": {"command": "echo approved-run"}}]},
        "The **command** ran.",
        {"text": ["slow "] * 30, "delayMs": 300},
        "after the interruption",
    ]
}


def pane(name: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-t", name, "-p", "-S", "-200"], capture_output=True, text=True).stdout


def wait_for(name: str, text: str, timeout: float = 30, *, after: str = "") -> str:
    """The screen once ``text`` is on it (past the last ``after``, when given)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = pane(name)
        if after in out and text in (out.rpartition(after)[2] if after else out):
            return out
        time.sleep(0.1)
    raise AssertionError(f"{text!r} did not appear; screen:\n{pane(name)}")


@pytest.fixture
def tmux_session(tmp_path: Path, ama_home: Path):
    if shutil.which("tmux") is None:  # .ci/run installs tmux; this only guards odd local setups
        pytest.fail("tmux is required for the interactive tests (apt-get install tmux)")
    name = f"ama-test-{uuid.uuid4().hex[:8]}"
    script = tmp_path / "s.json"
    script.write_text(json.dumps(SCRIPT))
    ws = tmp_path / "ws"
    ws.mkdir()
    cmd = (
        f"cd {shlex.quote(str(ws))} && AMA_HOME={shlex.quote(str(ama_home))} PYTHONPATH={shlex.quote(str(ROOT / 'src'))} "
        f"{shlex.quote(sys.executable)} -m ama --model scripted/{shlex.quote(str(script))}; echo EXITED=$?; sleep 60"
    )
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "50", cmd], check=True)
    yield name
    subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def test_prompt_approval_interrupt_quit_in_tmux(tmux_session: str, ama_home: Path) -> None:
    name = tmux_session
    wait_for(name, "/help for commands")
    subprocess.run(["tmux", "send-keys", "-t", name, "run it", "Enter"], check=True)
    wait_for(name, "a always this session · Esc deny and interrupt")
    subprocess.run(["tmux", "send-keys", "-t", name, "y"], check=True)
    screen = wait_for(name, "The command ran.")
    assert "⎿ approved-run" in screen
    subprocess.run(["tmux", "send-keys", "-t", name, "go slow", "Enter"], check=True)
    wait_for(name, "slow slow")  # the slow reply is streaming (shown in the live region)
    subprocess.run(["tmux", "send-keys", "-t", name, "Escape"], check=True)
    screen = wait_for(name, "interrupted\n")
    # the run has settled and the prompt reads again (the first turn's line ends the same)
    wait_for(name, "cached\n>", after="interrupted\n")
    subprocess.run(["tmux", "send-keys", "-t", name, "C-c"], check=True)
    wait_for(name, "press Ctrl-C again")
    subprocess.run(["tmux", "send-keys", "-t", name, "C-c"], check=True)
    wait_for(name, "EXITED=0")
    (path,) = list((ama_home / "sessions").rglob("*.jsonl"))
    d = read_session(path)
    texts = [getattr(e.message, "content", None) for e in d.entries if e.type == "message"]
    assert "run it" in texts and "go slow" in texts
    aborted = [e for e in d.entries if getattr(e, "custom_type", None) == "ama.aborted"]
    assert len(aborted) == 1
    approved = [e.message for e in d.entries if e.type == "message" and type(e.message).__name__ == "ToolResultMessage"]
    assert "approved-run" in approved[0].content[0].text


def test_line_mode_commands_through_a_pipe(tmp_path: Path, ama_home: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps(SCRIPT))
    ws = tmp_path / "ws"
    ws.mkdir()
    p = subprocess.run(
        [sys.executable, "-m", "ama", "--line", "--model", f"scripted/{script}"],
        cwd=ws,
        input="run it\nn\n/name my session\n/session\n/tree\n/bogus\n/quit\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "denied: The user denied this tool call." in out
    assert "named: my session" in out and "entries" in out and "unknown command /bogus" in out
    assert "● " in out and "user: run it" in out


REWIND_SCRIPT = {
    "mode": "sequence",
    "turns": [
        {"toolCalls": [{"name": "write", "arguments": {"path": "x.txt", "content": "one\n"}}]},
        "made x",
        {"text": ["late reply"], "delayMs": 15000},  # interrupted long before it arrives
        "after",
    ],
}


def test_double_escape_rewind_and_restore_on_cancel_in_tmux(tmp_path: Path, ama_home: Path) -> None:
    name = f"ama-test-{uuid.uuid4().hex[:8]}"
    script = tmp_path / "s.json"
    script.write_text(json.dumps(REWIND_SCRIPT))
    ws = tmp_path / "ws"
    ws.mkdir()
    cmd = (
        f"cd {shlex.quote(str(ws))} && AMA_HOME={shlex.quote(str(ama_home))} PYTHONPATH={shlex.quote(str(ROOT / 'src'))} "
        f"{shlex.quote(sys.executable)} -m ama --permission-mode full-auto --model scripted/{shlex.quote(str(script))}; "
        "echo EXITED=$?; sleep 60"
    )
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "50", cmd], check=True)
    try:
        wait_for(name, "/help for commands")
        subprocess.run(["tmux", "send-keys", "-t", name, "make x", "Enter"], check=True)
        wait_for(name, "cached\n")  # the run has ended
        assert (ws / "x.txt").exists()
        subprocess.run(["tmux", "send-keys", "-t", name, "Escape", "Escape"], check=True)
        wait_for(name, "1 file +0 −1")  # the rewind list, the last message highlighted
        subprocess.run(["tmux", "send-keys", "-t", name, "Enter"], check=True)
        wait_for(name, "restore code and conversation")  # the panel's options, the first chosen by Enter
        subprocess.run(["tmux", "send-keys", "-t", name, "Enter"], check=True)
        wait_for(name, "its text is in the input")
        assert not (ws / "x.txt").exists()
        # the draft is in the input: send it again as a new prompt, then interrupt at once
        subprocess.run(["tmux", "send-keys", "-t", name, "C-u", "slow one", "Enter"], check=True)
        deadline = time.monotonic() + 30
        while "Esc to interrupt" not in pane(name):  # the run is working (the spinner)
            assert time.monotonic() < deadline, pane(name)
            time.sleep(0.05)
        subprocess.run(["tmux", "send-keys", "-t", name, "Escape"], check=True)
        wait_for(name, "the prompt is back in the input")
        deadline = time.monotonic() + 30
        while "> slow one" not in pane(name).split("the prompt is back in the input")[-1]:  # the refilled input
            assert time.monotonic() < deadline, pane(name)
            time.sleep(0.1)
        subprocess.run(["tmux", "send-keys", "-t", name, "C-u", "C-d"], check=True)
        wait_for(name, "EXITED=0")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
    (path,) = list((ama_home / "sessions").rglob("*.jsonl"))
    from ama.session.store import Session

    s = Session.load(path)
    users = [e.message.content for e in s.branch() if e.type == "message" and type(e.message).__name__ == "UserMessage"]
    assert users == []  # both turns were withdrawn from the active path
    assert sum(1 for e in s.entries if e.type == "message" and type(e.message).__name__ == "UserMessage") == 2


PLAN_SCRIPT = {
    "mode": "sequence",
    "turns": [
        "<proposed_plan>\n# Add x\n\n1. Create x.txt\n2. Check it\n</proposed_plan>",
        "<proposed_plan>\n# Add x\n\n1. Create x.txt\n2. Check it\n3. Commit\n</proposed_plan>",
        "[DONE:1]\nCreated it.",
        "<proposed_plan>\n# Second\n\n1. Only step\n</proposed_plan>",
        "Started fresh.",
    ],
}


def test_plan_command_through_a_pipe(tmp_path: Path, ama_home: Path) -> None:
    """/plan enters plan mode, the proposal is shown as a panel, revise makes v2, approve
    switches the mode, writes the todo list and runs the plan."""
    script = tmp_path / "s.json"
    script.write_text(json.dumps(PLAN_SCRIPT))
    ws = tmp_path / "ws"
    ws.mkdir()
    p = subprocess.run(
        [sys.executable, "-m", "ama", "--line", "--model", f"scripted/{script}"],
        cwd=ws,
        input="/plan\nadd x\n/plan approve plan\n/plan revise add a commit step\n/plan approve auto-edit\n/session\n"
        "/plan\nmore\n/plan fresh\n/plan\n/quit\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "plan mode: only read-only tools run" in out
    assert "── plan: Add x (v1)" in out and "── plan: Add x (v2)" in out
    assert "error: plan_response: mode must be one of" in out  # approve into plan is refused
    assert "approved plan v2; permissions: auto-edit" in out
    assert "[x] 1. Create x.txt" in out and "[~] 2. Check it" in out  # [DONE:1] advanced the list
    assert "permissions auto-edit" in out
    assert "approved plan v1 into this new session; permissions: auto-edit" in out and "Started fresh." in out
    assert "plan mode: only read-only tools run" in out.split("Started fresh.")[1]  # the new session left plan mode
    names = sorted(f.name for f in (ws / ".ama" / "plans").iterdir())
    assert names == ["add-x-v1.md", "add-x-v2.md", "second-v1.md"]


PANEL_SCRIPT = {
    "mode": "sequence",
    "turns": [
        "<proposed_plan>\n# Add x\n\nCreate the file.\n\n1. Create x.txt\n</proposed_plan>",
        "<proposed_plan>\n# Add x\n\n1. Create x.txt\n2. Check it {dependsOn=1}\n</proposed_plan>",
        {"text": "[DONE:1]\nCreated it.", "toolCalls": [{"name": "write", "arguments": {"path": "x.txt", "content": "x\n"}}]},
        "[DONE:2]\nChecked it.",
    ],
}


def test_plan_panel_revise_then_approve_in_tmux(tmp_path: Path, ama_home: Path) -> None:
    """The proposal in a panel, answered at plan>: an unknown answer, revise with inline
    feedback (v2), then approve into auto-edit; the todo list is shown as the plan executes."""
    if shutil.which("tmux") is None:
        pytest.fail("tmux is required for the interactive tests (apt-get install tmux)")
    name = f"ama-test-{uuid.uuid4().hex[:8]}"
    script = tmp_path / "s.json"
    script.write_text(json.dumps(PANEL_SCRIPT))
    ws = tmp_path / "ws"
    ws.mkdir()
    cmd = (
        f"cd {shlex.quote(str(ws))} && AMA_HOME={shlex.quote(str(ama_home))} PYTHONPATH={shlex.quote(str(ROOT / 'src'))} "
        f"{shlex.quote(sys.executable)} -m ama --permission-mode plan --model scripted/{shlex.quote(str(script))}; "
        "echo EXITED=$?; sleep 60"
    )
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "60", cmd], check=True)
    try:
        wait_for(name, "/help for commands")
        subprocess.run(["tmux", "send-keys", "-t", name, "add x", "Enter"], check=True)
        screen = wait_for(name, "\nplan>", timeout=60)  # the answer prompt (not the "<proposed_plan>" of the reply)
        assert "╭── plan: Add x (v1)" in screen and "│ Create the file." in screen
        assert "saved as .ama/plans/add-x-v1.md" in screen and "[c]ompact, then implement" in screen
        subprocess.run(["tmux", "send-keys", "-t", name, "maybe", "Enter"], check=True)
        wait_for(name, "unknown answer 'maybe'")
        subprocess.run(["tmux", "send-keys", "-t", name, "r", "Enter"], check=True)
        wait_for(name, "what should change?")
        subprocess.run(["tmux", "send-keys", "-t", name, "check it too", "Enter"], check=True)
        wait_for(name, "╭── plan: Add x (v2)", timeout=60)
        deadline = time.monotonic() + 60  # the revision run has settled: plan> asks again
        while pane(name).count("\nplan>") < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        subprocess.run(["tmux", "send-keys", "-t", name, "a auto-edit", "Enter"], check=True)
        screen = wait_for(name, "Checked it.", timeout=60)
        assert "approved plan v2; permissions: auto-edit" in screen
        assert "[x] 1. Create x.txt" in screen and "[~] 2. Check it" in screen  # the list as it executes
        subprocess.run(["tmux", "send-keys", "-t", name, "/quit", "Enter"], check=True)
        wait_for(name, "EXITED=0")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
    assert (ws / "x.txt").read_text() == "x\n"
    (path,) = list((ama_home / "sessions").rglob("*.jsonl"))
    d = read_session(path)
    plans = [(e.data["version"], e.data["status"]) for e in d.entries if getattr(e, "custom_type", None) == "ama.plan"]
    assert plans == [(1, "proposed"), (1, "superseded"), (2, "proposed"), (2, "approved")]
    users = [e.message.content for e in d.entries if e.type == "message" and type(e.message).__name__ == "UserMessage"]
    assert users == ["add x", "check it too", "The plan is approved. Go ahead."]
