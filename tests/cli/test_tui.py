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
        Turn(["answer to next q"]),
        Turn(tool=("read", {"path": "notes.txt"})),
        Turn(tool=("edit", {"path": "notes.txt", "old_string": "one", "new_string": "two"})),
        Turn(["edited"]),
        Turn(tool=("bash", {"command": "echo hi-there"})),
        Turn(tool=("bash", {"command": "touch made-by-bash"})),
        Turn(["done"]),
        Turn(tool=("bash", {"command": "touch never-made"})),
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
        t.type("next q")  # typed while it works: shown under the spinner, sent when the run ends
        t.wait("Esc to interrupt\n> next q", visible=True)
        t.keys("Enter")
        t.wait("> next q  (queued: sent when this reply ends)", visible=True)
        server.release()
        screen = t.wait("answer to next q\n")
        assert "tokens: 100 in · 20 out" in screen.split("\n> next q\n")[0]  # after the first reply
        assert "Second part end." in screen
        assert screen.count("First paragraph streams.") == 1  # printed once; only the live rows were redrawn
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

        t.wait(" cached\n", count=4)  # that run has ended
        t.type("one more")
        t.keys("Enter")
        t.wait("$ touch never-made")
        t.wait("Esc deny and interrupt", count=4)
        t.keys("Escape")  # deny and interrupt
        screen = t.wait("interrupted\n")
        assert "✗ denied; interrupting" in screen
        assert len(server.requests) == 9 and not (ws / "never-made").exists()  # no request after the denial
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
        t.wait("permissions auto ·", visible=True)
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

        t.type("/model")
        t.keys("Enter")
        screen = t.wait("❯ slow/m", visible=True)  # the model picker, the current one highlighted
        assert "Model (now slow/m):" in screen
        t.keys("Escape")
        t.wait_gone("❯ slow/m")
    finally:
        t.close()
        server.close()


def _panel(t: Tmux, n: int, down: int) -> None:
    """Open the rewind panel on the last message by double Esc, take option ``down``."""
    t.wait("shift-tab: mode", visible=True)  # the prompt reads keys again
    t.keys("Escape", "Escape")
    t.wait("Rewind to before which message?", visible=True)
    t.wait("↑/↓ move · Enter choose · Esc cancel", visible=True)
    t.keys("Enter")
    t.wait("│ rewind to before message #", count=n)
    t.wait("restore conversation only", visible=True)
    t.keys(*(["Down"] * down), "Enter")


def test_rewind_panel_every_option(ws: Path, ama_home: Path) -> None:
    from ama.session.store import Session

    _git(ws, "init", "-q")
    _git(ws, "commit", "-q", "--allow-empty", "-m", "init")
    a = ws / "a.txt"
    turns = [
        Turn(tool=("write", {"path": "a.txt", "content": "v1\n"})), Turn(["made a"]),
        Turn(tool=("write", {"path": "a.txt", "content": "v2\nmore\n"})), Turn(["changed a"]),
        Turn(tool=("write", {"path": "a.txt", "content": "v3\n"})), Turn(["made v3"]),
        Turn(["plain"]), Turn(["five"]),
    ]  # fmt: skip
    t, server = start(ws, ama_home, turns, "--permission-mode", "full-auto")
    try:
        t.wait("/help for commands")
        for n, prompt in enumerate(("first", "second"), 1):
            t.type(prompt)
            t.keys("Enter")
            t.wait("tokens: 200 in", count=n)  # the run has ended
        _git(ws, "commit", "-q", "--allow-empty", "-m", "moved")
        head = _git(ws, "rev-parse", "HEAD")

        # the list: a dry run for the highlighted row; the panel: preview, conflict, git hint; cancel
        t.keys("Escape", "Escape")
        t.wait("❯ #2 ", visible=True)
        t.wait("1 file +1 −2", visible=True)  # #2, highlighted: v2 -> v1
        t.keys("Up")
        t.wait("1 file +0 −2", visible=True)  # #1: a.txt did not exist
        t.keys("Escape")
        t.wait("rewind cancelled")
        a.write_text("external\n")
        t.keys("Escape", "Escape")
        t.wait("no code changes · 1 conflict", visible=True)
        t.keys("Enter")
        screen = t.wait("restore conversation only", visible=True)
        frame = normalize("│ rewind to before message #2" + screen.split("│ rewind to before message #2")[1])
        assert frame.splitlines()[:15] == [
            "│ rewind to before message #2 · <time>",
            "│ > second",
            "│",
            "│ code unchanged",
            "│ conflict: a.txt changed outside ama; left alone",
            "│ git HEAD moved since then (<id> → <id>); ama leaves git alone. To see or undo it:",
            "│   git log --oneline <id>..HEAD",
            "│   git reset --soft <id>",
            "❯ restore code and conversation",
            "  restore conversation only (files stay)",
            "  restore code only (the conversation stays)",
            "  summarize from here (go back; the later part becomes a summary)",
            "  summarize up to here (the earlier part becomes a summary; stay at the end)",
            "  cancel",
            "↑/↓ move · Enter choose · Esc cancel",
        ]
        rec = screen.split("git log --oneline ")[1].split("..HEAD")[0]
        assert f"│   git reset --soft {rec}" in screen and not head.startswith(rec)  # the recorded HEAD
        t.keys(*(["Down"] * 5), "Enter")  # cancel
        t.wait("rewind cancelled")
        assert a.read_text() == "external\n" and _git(ws, "rev-parse", "HEAD") == head  # nothing was run
        a.write_text("v2\nmore\n")

        _panel(t, 2, 2)  # code only (the panel count: the cancelled one was the first)
        t.wait("restored 1 file\n")
        assert a.read_text() == "v1\n"

        _panel(t, 3, 0)  # the code is as it was: no code options; conversation only
        screen = t.wait("its text is in the input")
        assert "│ code unchanged" in screen.split("│ rewind to before message #2")[-1]
        assert "restore code and conversation" not in screen.split("│ code unchanged")[-1]
        t.wait("> second", visible=True)
        t.keys("C-u")

        t.type("third")
        t.keys("Enter")
        t.wait("tokens: 200 in", count=3)
        _panel(t, 4, 0)  # both
        t.wait("its text is in the input", count=2)
        assert a.read_text() == "v1\n"
        t.keys("C-u")

        t.type("fourth")
        t.keys("Enter")
        t.wait("tokens: 100 in", count=1)
        _panel(t, 5, 1)  # summarize from here, with instructions
        t.wait("instructions for the summary")
        t.type("focus on a")
        t.keys("Enter")
        t.wait("the later part is kept as a summary")
        assert "focus on a" in json.dumps(server.requests[-1])
        t.keys("C-u")

        t.type("fifth")
        t.keys("Enter")
        t.wait("tokens: 100 in", count=2)
        _panel(t, 6, 2)  # summarize up to here
        t.wait("instructions for the summary", count=2)
        t.keys("Enter")
        t.wait("summarized the conversation before message #2")
    finally:
        t.close()
        server.close()
    (path,) = list((ama_home / "sessions").rglob("*.jsonl"))
    s = Session.load(path)
    kinds = [e.type for e in s.entries]
    assert "branch_summary" in kinds and "compaction" in kinds


def test_continue_shows_the_recent_conversation_and_no_color_prints_plain(ws: Path, ama_home: Path) -> None:
    import subprocess
    import sys

    server = SlowServer([
        Turn(tool=("bash", {"command": "echo from-tool"})), Turn(["The **first** answer."]),
        Turn(["second answer"]), Turn(["A **plain** reply."]),
    ])  # fmt: skip
    (ama_home / "config.json").write_text(json.dumps({"providers": {"slow": server.provider()}}))
    p = subprocess.run(
        [sys.executable, "-m", "ama", "--line", "--permission-mode", "full-auto", "--model", "slow/m"],
        cwd=ws, input="first question\nsecond question\n/quit\n", capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    t = Tmux(ws, ama_home, server, "--continue", env="NO_COLOR=1")
    try:
        screen = t.wait("resumed")
        history = normalize(screen.split("Ctrl-C twice quits\n")[1].split("───")[0])
        assert history.splitlines() == [
            "> first question",
            "● bash(echo from-tool) ⎿ from-tool",
            "The **first** answer.",  # NO_COLOR: Markdown is printed as it is
            "> second question",
            "second answer",
        ]
        t.type("third")
        t.keys("Enter")
        screen = t.wait("A **plain** reply.")
        assert "Esc to interrupt" not in screen  # no live region without colour
        t.wait(" cached\n")
        t.keys("C-d")
        t.wait("EXITED=0")
        t.close()
        t = Tmux(ws, ama_home, server, "--resume")
        screen = t.wait("Resume which session?", visible=True)  # a picker of this directory's sessions
        assert "first question" in screen
        t.keys("Enter")
        screen = t.wait("resumed")
        assert "> third" in screen and "… 1 earlier turns" not in screen
    finally:
        t.close()
        server.close()


def test_output_while_the_input_is_shown_goes_above_it(ws: Path, ama_home: Path) -> None:
    """A background job that ends while you type: its line is printed above the input, and
    the half-typed text stays."""
    turns = [Turn(tool=("bash", {"command": "sleep 1; echo bg-done", "background": True})), Turn(["started it"])]
    t, server = start(ws, ama_home, turns, "--permission-mode", "full-auto")
    try:
        t.wait("/help for commands")
        t.type("go")
        t.keys("Enter")
        t.wait(" cached\n")
        t.wait("shift-tab: mode", visible=True)
        t.type("half typed")
        # (waited for as one text: the job's line is printed while the input is taken down,
        # and the input comes back an instant later)
        t.wait("exited] sleep 1; echo bg-done\n> half typed", visible=True)
    finally:
        t.close()
        server.close()


def test_esc_cancels_a_compaction_and_the_notice_follows_one(ws: Path, ama_home: Path) -> None:
    t, server = start(ws, ama_home, [Turn(["one"]), Turn(["two"])])
    server.hold_summaries = True
    try:
        t.wait("/help for commands")
        for text, reply in (("first", "one"), ("second", "two")):
            t.type(text)
            t.keys("Enter")
            t.wait(f"\n{reply}\n")
            t.wait("shift-tab: mode", visible=True)
        t.type("/compact")
        t.keys("Enter")
        t.wait("compacting… (Esc cancels)", visible=True)
        t.keys("Escape")
        t.wait("compaction cancelled; the conversation is unchanged", visible=True)
        server.hold_summaries = False
        server.release()
        t.wait("shift-tab: mode", visible=True)
        t.type("/compact")
        t.keys("Enter")
        t.wait("; `/context` shows the summary", visible=True)
    finally:
        t.close()
        server.close()
