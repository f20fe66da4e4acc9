"""Every terminal reason, error code and exit code of seeds/003 §2/§6, each produced by a real
`ama -p` run against a local server and read back with `ama runs status --json`."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.ai.server import LocalServer, Reply
from tests.conftest import ama_cmd
from tests.guards.priced import sse, write_config

LS = ("ls", {"path": "."})


def stream(finish: str = "stop") -> Reply:
    base = {"id": "c1", "object": "chat.completion.chunk", "model": "m"}

    def chunk(body: dict) -> bytes:
        return b"data: " + json.dumps({**base, **body}).encode() + b"\n\n"

    return Reply(
        chunks=[
            chunk({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "partial "}}]}),
            chunk({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
            b"data: [DONE]\n\n",
        ]
    )


def failure(status: int, kind: str, message: str) -> Reply:
    body = json.dumps({"error": {"message": message, "type": kind}}).encode()
    return Reply(status=status, chunks=[body], content_type="application/json")


def hanging() -> Reply:
    return Reply(chunks=stream().chunks, hang_after=1)  # the first token, then nothing


def latest_run(ws: Path) -> dict:
    runs = subprocess.run(ama_cmd("runs", "list", "--json", "--limit", "1"), cwd=ws, capture_output=True, text=True)
    assert runs.returncode == 0, runs.stderr
    (run,) = json.loads(runs.stdout)["runs"]
    p = subprocess.run(ama_cmd("runs", "status", run["executionId"], "--json"), cwd=ws, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    status = json.loads(p.stdout)
    for key in ("status", "terminalReason", "errorCode", "stepIndex", "errorMessage", "limit", "httpStatus"):
        assert status[key] == run[key], key  # list --json shows what status shows
    return status


CASES: list[tuple[str, dict[str, Any], list[str], list[Reply], tuple]] = [
    # name, config, extra args, replies, (exit, status, reason, code, httpStatus)
    ("stop", {}, [], [sse(text="done")], (0, "COMPLETED", "stop", None, None)),
    ("length", {}, [], [stream("length")], (0, "COMPLETED", "length", None, None)),
    ("max_steps", {}, ["--max-turns", "1"], [sse(call=LS)] * 2, (0, "COMPLETED", "max_steps", None, None)),
    (
        "error",
        {},
        [],
        [failure(400, "invalid_request_error", "no such parameter: frob")],
        (1, "FAILED", "error", "invalid_request", 400),
    ),
    (
        "rate_limit",
        {"retry": {"baseDelayMs": 1, "maxAttempts": 1}},
        [],
        [failure(429, "rate_limit_error", "slow down")],
        (1, "FAILED", "rate_limit", "rate_limited", 429),
    ),
    (
        "max_retries",
        {"retry": {"baseDelayMs": 1, "maxAttempts": 2}},
        [],
        [failure(500, "server_error", "boom")] * 2,
        (1, "FAILED", "max_retries", "server_error", 500),
    ),
    (
        "timeout",
        {},
        ["--max-wall-time", "1"],
        [hanging()],
        (1, "FAILED", "timeout", "timeout_budget_exceeded", None),
    ),
    (
        "upstream_timeout",
        {"retry": {"baseDelayMs": 1, "maxAttempts": 1, "timeoutMs": 500}},
        [],
        [hanging()],
        (1, "FAILED", "timeout", "timeout", None),
    ),
    (
        "repeated_tool_call",
        {},
        [],
        [sse(call=LS)] * 5,
        (1, "FAILED", "error", "repeated_tool_call", None),
    ),
    (
        "blocked",
        {"hooks": {"UserPromptSubmit": [{"command": "echo 'no prompts today' >&2; exit 2"}]}},
        [],
        [],
        (1, "FAILED", "error", "blocked", None),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_terminal_reason(case: tuple, tmp_path: Path, ama_home: Path, server: LocalServer) -> None:
    name, config, extra, replies, (rc, status, reason, code, http) = case
    write_config(ama_home, server.url, **{"retry": {"baseDelayMs": 1}, **config})
    server.replies = list(replies)
    p = subprocess.run(ama_cmd("-p", "go", *extra), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == rc, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    run = latest_run(tmp_path)
    assert (run["status"], run["terminalReason"], run["errorCode"], run["httpStatus"]) == (status, reason, code, http)
    assert run["interrupted"] is False and run["anomalies"] == []
    if status == "FAILED":
        assert run["errorMessage"]
    if http is not None or name == "upstream_timeout":
        assert run["category"] == "provider"
    if name == "max_steps":
        assert run["limit"] == {"kind": "turns", "value": 1, "limit": 1}
    if name == "timeout":
        assert run["limit"]["kind"] == "wallTime"
    if name == "blocked":
        assert server.requests == [] and run["category"] == "hook" and run["stepIndex"] == 0
        assert "no prompts today" in run["errorMessage"] and "no prompts today" in p.stderr


def start_hanging_run(ws: Path, home: Path, server: LocalServer) -> subprocess.Popen:
    write_config(home, server.url)
    server.replies = [hanging()]
    proc = subprocess.Popen(ama_cmd("-p", "go"), cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not server.requests:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    time.sleep(0.3)  # the first token is in
    return proc


def test_aborted_by_sigint_is_cancelled_with_130(tmp_path: Path, ama_home: Path, server: LocalServer) -> None:
    proc = start_hanging_run(tmp_path, ama_home, server)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    run = latest_run(tmp_path)
    assert (run["status"], run["terminalReason"], run["errorCode"]) == ("CANCELLED", "aborted", None)


def test_a_run_whose_process_died_reads_as_interrupted(tmp_path: Path, ama_home: Path, server: LocalServer) -> None:
    proc = start_hanging_run(tmp_path, ama_home, server)
    proc.kill()
    proc.wait(timeout=60)
    run = latest_run(tmp_path)
    assert (run["status"], run["terminalReason"], run["recordedStatus"]) == ("CANCELLED", "interrupted", "RUNNING")
    assert run["interrupted"] is True
