"""`ama -p -c` remembers the files the earlier process read or wrote (and only while unchanged)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.agent.helpers import write_script
from tests.conftest import ama_cmd


def run(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(ama_cmd(*args), cwd=ws, capture_output=True, text=True, timeout=120)


def edit_call(path: str, old: str, new: str) -> dict:
    return {"toolCalls": [{"name": "edit", "arguments": {"path": path, "old_string": old, "new_string": new}}]}


def tool_ends(p: subprocess.CompletedProcess) -> list[dict]:
    assert p.returncode == 0, p.stderr
    return [json.loads(x) for x in p.stdout.splitlines() if '"tool_execution_end"' in x]


def test_continue_can_edit_files_the_previous_process_read_or_wrote(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "read.txt").write_text("alpha\n")
    (ws / "changed.txt").write_text("one\n")
    first = write_script(
        tmp_path / "first.json",
        [
            {"toolCalls": [{"name": "read", "arguments": {"path": "read.txt"}}]},
            {"toolCalls": [{"name": "read", "arguments": {"path": "changed.txt"}}]},
            {"toolCalls": [{"name": "write", "arguments": {"path": "new.txt", "content": "fresh\n"}}]},
            "done",
        ],
    )
    flags = ("--permission-mode", "full-auto", "--output-format", "stream-json")
    assert not any(e["isError"] for e in tool_ends(run(ws, "-p", "look", "--model", first, *flags)))
    # someone changes one of the files after the model saw it
    (ws / "changed.txt").write_text("two\n")
    st = os.stat(ws / "changed.txt")
    os.utime(ws / "changed.txt", ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    second = write_script(
        tmp_path / "second.json",
        [
            edit_call("read.txt", "alpha", "beta"),
            edit_call("new.txt", "fresh", "edited"),
            edit_call("changed.txt", "two", "three"),
            "done",
        ],
        mode="sequence",
    )
    ends = tool_ends(run(ws, "-p", "-c", "edit them", "--model", second, *flags))
    assert [e["isError"] for e in ends] == [False, False, True], ends
    assert (ws / "read.txt").read_text() == "beta\n"
    assert (ws / "new.txt").read_text() == "edited\n"
    refused = ends[2]["result"]["content"][0]["text"]
    assert "has not been read yet" in refused and (ws / "changed.txt").read_text() == "two\n"


def test_continue_past_a_message_of_a_role_this_version_does_not_know(tmp_path: Path) -> None:
    """Such a message is kept as an unknown entry (its type is ``message``); rebuilding the
    read files passes over it instead of failing the resume."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "read.txt").write_text("alpha\n")
    first = write_script(tmp_path / "first.json", [{"toolCalls": [{"name": "read", "arguments": {"path": "read.txt"}}]}, "done"])
    flags = ("--permission-mode", "full-auto", "--output-format", "stream-json")
    assert not any(e["isError"] for e in tool_ends(run(ws, "-p", "look", "--model", first, *flags)))
    home = Path(os.environ["AMA_HOME"])
    (session,) = (home / "sessions").rglob("*.jsonl")
    last = json.loads(session.read_bytes().splitlines()[-1])
    future = {"type": "message", "id": "f0000001", "parentId": last["id"], "timestamp": last["timestamp"],
              "message": {"role": "futureRole", "content": "from a newer ama"}}  # fmt: skip
    with session.open("ab") as f:
        f.write(json.dumps(future).encode() + b"\n")
    second = write_script(tmp_path / "second.json", [edit_call("read.txt", "alpha", "beta"), "done"], mode="sequence")
    p = run(ws, "-p", "-c", "edit it", "--model", second, *flags)
    assert "Traceback" not in p.stderr
    assert [e["isError"] for e in tool_ends(p)] == [False]
    assert (ws / "read.txt").read_text() == "beta\n"
