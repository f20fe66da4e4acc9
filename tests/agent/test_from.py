"""`--from <id>[#n]`: reuse a user message as the prompt of a new session."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ama.messages import ImageContent, TextContent, UserMessage
from ama.session.reader import read_session
from ama.session.store import Session
from tests.agent.helpers import write_script
from tests.conftest import ama_cmd
from tests.session.helpers import assistant

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def source(sessions_dir: Path, cwd: str) -> Session:
    s = Session.create(cwd, sessions_dir)
    s.append_message(UserMessage(content="fix the parser crash"))
    s.append_message(assistant("done"))
    s.append_message(UserMessage(content=[TextContent(text="look at this"), ImageContent(data=PNG, mime_type="image/png")]))
    s.close()
    return s


def run(cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(ama_cmd(*args), cwd=cwd, input=stdin, capture_output=True, text=True, timeout=60)


def test_from_reuses_text_images_and_appends_extra_text(tmp_path: Path, sessions_dir: Path) -> None:
    src = source(sessions_dir, str(tmp_path))
    model = write_script(tmp_path / "s.json", ["ok"] * 4)
    p = run(tmp_path, "-p", "--from", f"{src.id[:8]}#1", "only the tests", "--model", model, "--output-format", "json")
    assert p.returncode == 0, p.stderr
    new_file = json.loads(p.stdout)["sessionFile"]
    assert new_file != src.path
    users = [e.message for e in read_session(new_file).entries if e.type == "message" and isinstance(e.message, UserMessage)]
    assert users[0].content == "fix the parser crash\n\nonly the tests"
    # without a number: the last user message, its image carried in -p mode
    p = run(tmp_path, "-p", "--from", src.id[:8], "--model", model, "--output-format", "json")
    assert p.returncode == 0, p.stderr
    users = [e.message for e in read_session(json.loads(p.stdout)["sessionFile"]).entries
             if e.type == "message" and isinstance(e.message, UserMessage)]  # fmt: skip
    blocks = users[0].content
    assert isinstance(blocks, list) and blocks[0].text == "look at this" and blocks[1].mime_type == "image/png"


def test_from_errors_exit_2_and_5(tmp_path: Path, sessions_dir: Path) -> None:
    src = source(sessions_dir, str(tmp_path))
    model = write_script(tmp_path / "s.json", ["ok"])
    bad = run(tmp_path, "-p", "--from", f"{src.id[:8]}#9", "--model", model)
    assert bad.returncode == 2 and "#9" in bad.stderr
    missing = run(tmp_path, "-p", "--from", "ffffffff#1", "--model", model)
    assert missing.returncode == 5
    rpc = run(tmp_path, "--mode", "rpc", "--from", f"{src.id[:8]}#1", "--model", model)
    assert rpc.returncode == 2 and "not supported in RPC mode" in rpc.stderr
