"""The interactive terminal UI in tmux against a slowly streaming local server: streaming,
the spinner, approvals by key with diffs, completion, history search, modes, double-Esc."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.slow_server import SlowServer, Turn
from tests.cli.tui import Tmux, normalize


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    d.mkdir()
    return d


def start(ws: Path, ama_home: Path, turns: list[Turn], *args: str) -> tuple[Tmux, SlowServer]:
    server = SlowServer(turns)
    return Tmux(ws, ama_home, server, *args), server


def test_streaming_spinner_and_approvals_by_key(ws: Path, ama_home: Path) -> None:
    (ws / "notes.txt").write_text("one\nkeep\n")
    turns = [
        Turn(["# Title\n\n", "First paragraph streams.\n\n", "Second ", "part ", "end."], delay=0.2, hold=True,
             thinking=["pondering ", "the request"]),
        Turn(tool=("read", {"path": "notes.txt"})),
        Turn(tool=("edit", {"path": "notes.txt", "old_string": "one", "new_string": "two"})),
        Turn(["edited"]),
        Turn(tool=("bash", {"command": "echo hi-there"})),
        Turn(tool=("bash", {"command": "touch made-by-bash"})),
        Turn(["done"]),
    ]  # fmt: skip
    t, server = start(ws, ama_home, turns)
    try:
        t.wait("/help for commands")
        t.type("hi")
        t.keys("Enter")
        # the reply is held before its last chunk: what is on screen arrived while it streams
        screen = t.wait("Second part", visible=True)
        assert "end." not in screen
        frame = normalize(screen.split("> hi\n", 1)[1]).split("\n\n\n")[0]
        assert frame.splitlines() == [
            "✻ pondering the request",
            " " * 52 + "Title",
            "",
            "First paragraph streams.",
            "",
            "Second part",
            "* Working… <t> · ↓ 17 tokens · Esc to interrupt",
        ]
        server.release()
        screen = t.wait("tokens: 100 in · 20 out")
        assert "Second part end." in screen
        screen = t.wait("slow/m · permissions default · context 0%", visible=True)  # the footer under the input
        assert "Esc to interrupt" not in screen

        t.type("edit it")
        t.keys("Enter")
        screen = t.wait("Esc deny and interrupt")
        approval = screen.split("? allow edit(notes.txt)")[1]
        assert "-one\n" in approval and "+two\n" in approval and "@@ -1,2 +1,2 @@" in approval
        t.keys("y")
        screen = t.wait("edited\n")
        assert "✓ allowed once" in screen and "+1 −1\n" in screen.split("✓ allowed once")[1]
        assert (ws / "notes.txt").read_text() == "two\nkeep\n"

        t.type("run things")
        t.keys("Enter")
        screen = t.wait("Esc deny and interrupt", count=2)
        assert "$ echo hi-there" in screen and "sandbox" in screen.split("$ echo hi-there")[1]
        t.keys("a")
        screen = t.wait("Esc deny and interrupt", count=3)  # the second command asks again
        assert "✓ always allowed this session: " in screen
        assert "$ touch made-by-bash" in screen
        t.keys("n")
        t.wait("reason for the model")
        t.type("use echo instead")
        t.keys("Enter")
        t.wait("done\n")
        assert not (ws / "made-by-bash").exists()
        denied = json.dumps(server.requests[-1]["messages"][-1])
        assert "use echo instead" in denied
    finally:
        t.close()
        server.close()
