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


def _git(ws: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=ws, check=True, capture_output=True, text=True
    ).stdout


def test_completion_input_keys_modes_and_double_escape(ws: Path, ama_home: Path) -> None:
    _git(ws, "init", "-q")
    (ws / "notes.md").write_text("NOTE-CONTENT\n")
    (ws / ".gitignore").write_text("secret-notes.md\n")
    (ws / "secret-notes.md").write_text("hidden\n")
    t, server = start(ws, ama_home, [Turn(["one"]), Turn(["two"]), Turn(["three"])])
    try:
        t.wait("/help for commands")
        t.type("/ex")
        screen = t.wait("write this session to a new file", visible=True)  # the menu, with descriptions
        assert "/export" in screen
        t.keys("C-u")
        t.type("look at @nts")
        screen = t.wait("notes.md", visible=True)
        assert "secret-notes.md" not in screen  # ignored files are not offered
        t.keys("Tab", "Enter")
        t.wait("attached: notes.md")
        t.wait("one\n")
        assert "NOTE-CONTENT" in json.dumps(server.requests[0]["messages"])

        t.type("line one\\")
        t.wait("> line one\\", visible=True)
        t.keys("Enter")
        t.wait_gone("> line one\\")
        t.type("line two")
        t.keys("Enter")
        t.wait("tokens: 100 in", count=2)  # the second reply has ended
        users = [m for m in server.requests[1]["messages"] if m["role"] == "user"]
        assert "line one\nline two" in json.dumps(users[-1]["content"]).replace("\\n", "\n")

        t.paste("".join(f"pasted line {i}\n" for i in range(30)))
        t.wait("[Pasted text #1 +31 lines]", visible=True)
        t.keys("Enter")
        t.wait("tokens: 100 in", count=3)
        assert "pasted line 29" in json.dumps(server.requests[2]["messages"][-1])

        t.keys("C-r")
        t.type("look")
        t.wait("look at @notes.md", visible=True)  # the history search found the first prompt
        t.keys("C-g", "C-u")

        t.keys("BTab")
        t.wait("permissions auto-edit", visible=True)
        t.keys("BTab")
        t.wait("permissions plan", visible=True)
        t.keys("BTab")
        t.wait("permissions default", visible=True)

        # double Esc: the first press only says what the second one would do, for 800 ms
        t.type("a draft")
        t.keys("Escape")
        t.wait("press Esc again to clear the input", visible=True)
        t.wait_gone("press Esc again to clear the input")  # the window passed
        assert "> a draft" in t.visible()
        t.keys("Escape")
        t.wait("press Esc again to clear the input", visible=True)
        t.keys("Escape")
        t.wait_gone("> a draft")
        t.keys("Up")  # the cleared text went to the history
        t.wait("> a draft", visible=True)
        t.keys("C-u", "Escape")
        t.wait("press Esc again to rewind", visible=True)
        t.keys("Escape")
        screen = t.wait("no code changes", visible=True)  # the dry run of the highlighted row
        assert "Rewind to before which message?" in screen and "❯ #3" in screen
        t.keys("Escape")
        t.wait("rewind cancelled")
    finally:
        t.close()
        server.close()
