"""The slash commands of the terminal UI and ``!command``, through a pipe (--line) against
the local server: /cost, /export, /compact, /search, /fork, /archive, /help."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ama.session.catalog import scan
from tests.cli.slow_server import SlowServer, Turn


def test_session_commands_and_shell_escape_through_a_pipe(tmp_path: Path, ama_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    server = SlowServer([Turn(["hi there"]), Turn(["ok"])])
    (ama_home / "config.json").write_text(json.dumps({"providers": {"slow": server.provider()}}))
    try:
        p = subprocess.run(
            [sys.executable, "-m", "ama", "--line", "--model", "slow/m"],
            cwd=ws,
            input="hello\n!echo shell-out; exit 3\nafter shell\n/cost\n/export md\n/export json out.json\n"
            "/export json out.json\n/export pdf\n/compact keep it short\n/context\n/search hello\n\n/fork\n/archive\n/help\n/quit\n",
            capture_output=True,
            text=True,
            timeout=90,
        )
    finally:
        server.close()
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "shell-out\n(exit 3)" in out
    shell_note = json.dumps(server.requests[1]["messages"])  # the prompt after the !command
    assert "Ran `echo shell-out; exit 3`" in shell_note and "shell-out" in shell_note and "exited with code 3" in shell_note
    assert "session cost: unknown" in out and "context: 0% of 100000 tokens" in out
    md = [f for f in ws.iterdir() if f.name.startswith("ama-") and f.suffix == ".md"]
    assert len(md) == 1 and "hello" in md[0].read_text()
    assert json.loads((ws / "out.json").read_text())
    assert "out.json already exists; ama never overwrites it" in out
    assert "error: /export format must be one of md, json, jsonl, not 'pdf'" in out
    assert "Compacted " in out and "(manual)" in out
    assert "; `/context` shows the summary" in out and "latest compaction (1 on this branch)" in out
    assert "1 match(es) for 'hello'" in out and "that is this session" in out
    assert "continuing in the fork" in out and "archived session" in out
    assert "Keys:" in out and "/fork [ENTRY]" in out and "Esc Esc (idle)" in out
    sessions = scan(str(ama_home / "sessions"))
    archived = [s for s in sessions if s.archived]
    assert len(sessions) == 2 and len(archived) == 1  # the original and the archived fork (the new one is empty)


def test_ctrl_c_cancels_a_compaction_in_line_mode(tmp_path: Path, ama_home: Path) -> None:
    import queue
    import signal
    import threading

    ws = tmp_path / "ws"
    ws.mkdir()
    server = SlowServer([Turn(["one"]), Turn(["two"])])
    server.hold_summaries = True
    (ama_home / "config.json").write_text(json.dumps({"providers": {"slow": server.provider()}}))
    p = subprocess.Popen([sys.executable, "-m", "ama", "--line", "--model", "slow/m"], cwd=ws, text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    lines: queue.Queue = queue.Queue()
    assert p.stdout is not None and p.stdin is not None
    threading.Thread(target=lambda: [lines.put(x) for x in p.stdout], daemon=True).start()  # type: ignore[union-attr]

    def until(text: str) -> None:
        while text not in lines.get(timeout=60):
            pass

    try:
        p.stdin.write("first\n")
        p.stdin.flush()
        until("one")
        p.stdin.write("second\n/compact\n")
        p.stdin.flush()
        until("compacting…")
        p.send_signal(signal.SIGINT)
        until("compaction cancelled; the conversation is unchanged")
        p.stdin.write("/quit\n")
        p.stdin.flush()
        assert p.wait(timeout=60) == 0
    finally:
        server.release()
        if p.poll() is None:
            p.kill()
        server.close()
