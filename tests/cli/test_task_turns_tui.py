"""A background task's notification turn in the interactive UI (cli/task_turns.py), in tmux:
it runs like a prompt (spinner, Esc interrupts it) and what was typed stays as the draft."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agent.helpers import write_script as write_file
from tests.cli.slow_server import SlowServer
from tests.cli.tui import Tmux


def write_script(path: Path, turns: list, **extra: object) -> str:
    """A script in the workspace, named relative to it: the footer stays short enough to
    show ``permissions MODE`` however long the temporary directory's name is."""
    ws = path.parent / "ws"
    ws.mkdir(exist_ok=True)
    write_file(ws / path.name, turns, **extra)
    return f"scripted/{path.name}"


def explore_child(tmp_path: Path, turns: list, **extra: object) -> Path:
    """The workspace, whose ``explore`` tasks run the scripted ``turns``."""
    ws = tmp_path / "ws"
    (ws / ".ama").mkdir(parents=True)
    child = write_script(tmp_path / "c.json", turns, mode="sequence", **extra)
    (ws / ".ama" / "config.json").write_text(json.dumps({"tasks": {"exploreModel": child}}))
    return ws


def task_call(description: str, background: bool = False) -> dict:
    args = {"agent": "explore", "description": description, "prompt": "look", "background": background}
    return {"name": "task", "arguments": args}


def test_a_notification_turn_runs_like_a_prompt_and_keeps_the_draft(tmp_path: Path, ama_home: Path) -> None:
    ws = explore_child(tmp_path, [{"text": "bg result", "delayMs": 3000}])
    call = task_call("look around", background=True)
    slow = {"text": "notified: " + "the task said bg result " * 4, "chunkSize": 4, "delayMs": 250}
    parent = write_script(tmp_path / "p.json", [{"toolCalls": [call]}, "started it", slow, "answered the draft"], mode="sequence")
    server = SlowServer([])  # the tmux helper's provider; the models here are scripted
    t = Tmux(ws, ama_home, server, "--model", parent)
    try:
        t.wait("/help for commands")
        t.type("go")
        t.keys("Enter")
        t.wait("started it")
        t.wait("permissions default", visible=True)
        t.type("half typed")
        t.wait("ended completed: reporting to the model")
        screen = t.wait("notified: the", visible=True)
        assert "permissions default" not in screen  # no input prompt while the turn runs
        t.keys("Escape")
        screen = t.wait("interrupted", visible=True)
        t.wait("> half typed", visible=True)
        screen = t.visible()
        after = screen.split("interrupted")[-1]
        assert "> half typed" in after and "bg result" not in after.split("> half typed")[-1]
        t.keys("Enter")
        t.wait("answered the draft")
    finally:
        print(t.screen())
        t.close()
        server.close()


def test_running_tasks_are_shown_live_and_tasks_id_opens_one(tmp_path: Path, ama_home: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".ama").mkdir(parents=True)
    (ws / "a.txt").write_text("hello\n")
    priced = {"usage": {"input": 10}}
    child_turns = [
        {"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}], **priced},
        {"toolCalls": [{"name": "ls", "arguments": {"path": "."}}], **priced},
        {"text": "child done", "delayMs": 4000},
        {"toolCalls": [{"name": "grep", "arguments": {"pattern": "hello"}}], **priced},
        {"text": "fg done", "delayMs": 4000},
    ]
    child = write_script(tmp_path / "c.json", child_turns, mode="sequence", cost={"input": 1000})
    (ws / ".ama" / "config.json").write_text(json.dumps({"tasks": {"exploreModel": child}}))

    def call(description: str, background: bool) -> dict:
        args = {"agent": "explore", "description": description, "prompt": "look", "background": background}
        return {"toolCalls": [{"name": "task", "arguments": args}]}

    parent = write_script(
        tmp_path / "p.json", [call("look around", True), "started it", "noted", call("second look", False), "all done"], mode="sequence"
    )
    server = SlowServer([])
    t = Tmux(ws, ama_home, server, "--model", parent)
    try:
        t.wait("/help for commands")
        t.type("go")
        t.keys("Enter")
        t.wait("started it")
        # at the input: the background task's row above the footer, with turns, cost, last action
        screen = t.wait("[task:explore] look around · 3 turns · $0.0200 · ls .", visible=True)
        assert "permissions default" in screen
        task_id = screen.split("[task:explore] look around (background) · ")[1].split()[0]
        t.type(f"/tasks {task_id[:6]}")
        t.keys("Enter")
        screen = t.wait(f"── [task:explore] look around · running · {task_id}")
        assert "User: look" in screen and "ls" in screen.split(task_id)[-1]
        t.wait("noted")  # the child ended: its notification turn ran
        t.wait_gone("$0.0200 · ls .")
        # a foreground task: its row under the spinner while the parent's run waits for it
        t.type("fg")
        t.keys("Enter")
        screen = t.wait("[task:explore] second look · 2 turns · $0.0100 · grep hello", visible=True)
        assert "Working…" in screen
        t.wait("all done")
        t.wait_gone("$0.0100 · grep hello")
    finally:
        print(t.screen())
        t.close()
        server.close()


def test_line_mode_runs_the_notification_turn_and_keeps_reading(tmp_path: Path, ama_home: Path) -> None:
    import subprocess
    import sys
    import threading
    import time

    ws = explore_child(tmp_path, [{"text": "bg result", "delayMs": 1000}])
    call = task_call("look around", background=True)
    parent = write_script(tmp_path / "p.json", [{"toolCalls": [call]}, "started it", "saw the result", "answered next"], mode="sequence")
    p = subprocess.Popen(
        [sys.executable, "-m", "ama", "--line", "--model", parent], cwd=ws, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.extend(iter(p.stdout.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()

    def wait(text: str) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if text in "".join(out):
                return
            time.sleep(0.05)
        raise AssertionError(f"{text!r} did not appear:\n{''.join(out)}")

    try:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
        wait("started it")
        wait("saw the result")  # the notification turn ran while the input was waiting
        p.stdin.write("next\n")  # read by the same pending line read
        p.stdin.flush()
        wait("answered next")
        p.stdin.close()
        assert p.wait(timeout=30) == 0
    finally:
        if p.poll() is None:
            p.kill()
    text = "".join(out)
    assert "ended completed: reporting to the model" in text
    assert text.index("reporting to the model") < text.index("saw the result") < text.index("answered next")


def test_a_prompt_queued_during_a_run_goes_before_a_pending_notification(tmp_path: Path, ama_home: Path) -> None:
    ws = explore_child(tmp_path, [{"text": "bg result", "delayMs": 500}])
    call = task_call("look around", background=True)
    slow = {"text": "streaming slowly " * 6, "chunkSize": 6, "delayMs": 250}
    parent = write_script(tmp_path / "p.json", [{"toolCalls": [call]}, slow, "answered queued", "saw the note"], mode="sequence")
    server = SlowServer([])
    t = Tmux(ws, ama_home, server, "--model", parent)
    try:
        t.wait("/help for commands")
        t.type("go")
        t.keys("Enter")
        t.wait("[task:explore] completed")  # the task ended while the reply still streams
        t.type("queued")
        t.keys("Enter")
        t.wait("(queued: sent when this reply ends)", visible=True)
        screen = t.wait("saw the note")
        assert screen.index("answered queued") < screen.index("reporting to the model") < screen.index("saw the note")
    finally:
        print(t.screen())
        t.close()
        server.close()


def test_ctrl_b_sends_a_running_foreground_task_to_the_background(tmp_path: Path, ama_home: Path) -> None:
    ws = explore_child(tmp_path, [{"text": "slow child result", "delayMs": 4000}])
    call = task_call("slow look")
    parent = write_script(tmp_path / "p.json", [{"toolCalls": [call]}, "went on without waiting", "got the notification"], mode="sequence")
    server = SlowServer([])
    t = Tmux(ws, ama_home, server, "--model", parent)
    try:
        t.wait("/help for commands")
        t.type("go")
        t.keys("Enter")
        t.wait("[task:explore] slow look", visible=True)  # the foreground task's live row
        t.keys("C-b")
        t.wait("moved to the background:")
        t.wait("went on without waiting")  # the tool call returned at once; the turn went on
        t.wait("ended completed: reporting to the model")  # then the task's notification turn
        t.wait("got the notification")
    finally:
        print(t.screen())
        t.close()
        server.close()
