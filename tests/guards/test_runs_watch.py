"""`ama runs watch` follows a real `ama -p` run against a slow local server."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from ama.index.runwatch import RunFollower
from tests.ai.server import LocalServer, Reply
from tests.conftest import ama_cmd
from tests.guards.priced import sse, write_config
from tests.guards.test_run_matrix import failure, hanging

LS = ("ls", {"path": "."})


def slow(reply: Reply, delay: float = 0.25) -> Reply:
    reply.delay = delay
    return reply


def start(ws: Path, home: Path, server: LocalServer, replies: list[Reply]) -> subprocess.Popen:
    write_config(home, server.url)
    server.replies = replies
    proc = subprocess.Popen(ama_cmd("-p", "go"), cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not server.requests:  # the run has begun
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.05)
    return proc


def watch(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(ama_cmd("runs", "watch", *args), cwd=ws, capture_output=True, text=True, timeout=120)


def test_watch_follows_a_live_run_to_its_end(tmp_path: Path, ama_home: Path, server: LocalServer) -> None:
    proc = start(tmp_path, ama_home, server, [slow(sse(call=LS)), slow(sse(text="all listed"))])
    try:
        p = watch(tmp_path, "--latest", "--json", "--interval", "0.1")
    finally:
        assert proc.wait(timeout=60) == 0
    assert p.returncode == 0, p.stderr
    evs = [json.loads(line) for line in p.stdout.splitlines()]
    states = [(e["status"], e["stepIndex"]) for e in evs if e["type"] == "state"]
    assert states == [("CREATED", 0), ("RUNNING", 0), ("RUNNING", 1), ("COMPLETED", 2)]
    steps = [(e["step"], e["stopReason"], e["tools"]) for e in evs if e["type"] == "step"]
    assert steps == [(1, "toolUse", ["ls"]), (2, "stop", [])]
    assert evs[-1]["type"] == "end" and evs[-1]["exitCode"] == 0 and evs[-1]["terminalReason"] == "stop"
    run_id = evs[0]["executionId"]
    # a finished run: the same story at once, and the human form
    again = watch(tmp_path, run_id[:8])
    assert again.returncode == 0
    lines = again.stdout.splitlines()
    assert lines[0].startswith(f"run {run_id}  session ")
    assert "COMPLETED  step 2 (stop)" in lines[-1] and "step 1    toolUse   ls" in again.stdout


def test_watch_exits_with_a_failed_runs_code(tmp_path: Path, ama_home: Path, server: LocalServer) -> None:
    proc = start(tmp_path, ama_home, server, [slow(sse(call=LS)), failure(400, "invalid_request_error", "bad")])
    try:
        p = watch(tmp_path, "--latest", "--json", "--interval", "0.1")
    finally:
        assert proc.wait(timeout=60) == 1
    assert p.returncode == 1, p.stderr
    end = json.loads(p.stdout.splitlines()[-1])
    assert (end["status"], end["terminalReason"], end["errorCode"]) == ("FAILED", "error", "invalid_request")
    final = json.loads(p.stdout.splitlines()[-2])
    assert final["httpStatus"] == 400 and final["category"] == "provider" and "bad" in final["errorMessage"]


def test_watch_sees_a_dead_writer_as_interrupted(tmp_path: Path, ama_home: Path, server: LocalServer) -> None:
    proc = start(tmp_path, ama_home, server, [hanging()])
    time.sleep(0.3)
    watcher = subprocess.Popen(
        ama_cmd("runs", "watch", "--latest", "--json", "--interval", "0.1"),
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    time.sleep(1.0)
    assert watcher.poll() is None  # the run is still going
    proc.kill()
    proc.wait(timeout=60)
    out, err = watcher.communicate(timeout=60)
    assert watcher.returncode == 130, err
    end = json.loads(out.splitlines()[-1])
    assert end["terminalReason"] == "interrupted" and end["recordedStatus"] == "RUNNING"


def test_bad_arguments_and_unknown_runs_exit_2(tmp_path: Path, ama_home: Path) -> None:
    assert watch(tmp_path).returncode == 2
    p = watch(tmp_path, "nope-nope")
    assert p.returncode == 2 and "no run with executionId 'nope-nope'" in p.stderr
    assert watch(tmp_path, "--latest").returncode == 2
    assert "must be positive, got 0.0" in watch(tmp_path, "--latest", "--interval", "0").stderr


def test_follower_reads_lines_in_any_chunks() -> None:
    lines = [
        {"type": "custom", "customType": "ama.run", "data": {"executionId": "a", "status": "RUNNING", "stepIndex": 0}},
        {"type": "message", "id": "m1", "message": {"role": "user", "content": "hi"}},
        {"type": "message", "id": "m2", "message": {"role": "assistant", "stopReason": "stop", "content": []}},
        {"type": "custom", "customType": "ama.run", "data": {"executionId": "b", "status": "CREATED", "stepIndex": 0}},
    ]
    raw = b"".join(json.dumps(x).encode() + b"\n" for x in lines)
    f = RunFollower("a")
    evs = []
    for i in range(0, len(raw), 7):
        evs.extend(f.feed(raw[i : i + 7]))
    assert [e["type"] for e in evs] == ["state", "step", "end"]
    assert evs[-1]["terminalReason"] == "interrupted" and evs[-1]["exitCode"] == 130  # a newer run began
