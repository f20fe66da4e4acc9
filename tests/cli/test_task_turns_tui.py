"""A background task's notification turn in the interactive UI (cli/task_turns.py), in tmux:
it runs like a prompt (spinner, Esc interrupts it) and what was typed stays as the draft."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agent.helpers import write_script
from tests.cli.slow_server import SlowServer
from tests.cli.tui import Tmux


def test_a_notification_turn_runs_like_a_prompt_and_keeps_the_draft(tmp_path: Path, ama_home: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".ama").mkdir(parents=True)
    child = write_script(tmp_path / "c.json", [{"text": "bg result", "delayMs": 3000}], mode="sequence")
    (ws / ".ama" / "config.json").write_text(json.dumps({"tasks": {"exploreModel": child}}))
    call = {"name": "task", "arguments": {"agent": "explore", "description": "look around", "prompt": "look", "background": True}}
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
