"""Budgets end to end: a real `ama -p` against a priced model on a local server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ama.session.reader import read_session
from tests.ai.server import LocalServer
from tests.conftest import ama_cmd
from tests.guards.priced import error, request_models, sse, write_config

LS = ("ls", {"path": "."})


def ama(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(ama_cmd(*args), cwd=ws, capture_output=True, text=True, timeout=120)


def events_of(p: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


def run_records(home: Path) -> list[dict]:
    (path,) = list((home / "sessions").rglob("*.jsonl"))
    return [e.data for e in read_session(path).entries if getattr(e, "custom_type", None) == "ama.run"]


def test_max_cost_stops_the_run_at_the_turn_that_reaches_it(tmp_path: Path, ama_home: Path, server: LocalServer) -> None:
    write_config(ama_home, server.url)
    server.replies = [sse(call=LS) for _ in range(6)]
    p = ama(tmp_path, "-p", "list forever", "--max-cost", "0.025", "--output-format", "stream-json")
    assert p.returncode == 0, p.stderr
    evs = events_of(p)
    # $0.01 per request: after the 3rd ($0.03 >= $0.025) no 4th request is made
    assert len(server.requests) == 3
    hits = [e for e in evs if e["type"] == "limit_reached"]
    assert hits == [{"type": "limit_reached", "kind": "cost", "value": 0.03, "limit": 0.025}]
    assert evs[-1] == {"type": "agent_settled", "warning": "limit_reached"}
    final = run_records(ama_home)[-1]
    assert final["status"] == "COMPLETED" and final["terminalReason"] == "max_steps"
    assert final["limit"] == {"kind": "cost", "value": 0.03, "limit": 0.025}
    status = ama(tmp_path, "runs", "status", final["executionId"], "--json")
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)
    assert shown["status"] == "COMPLETED" and shown["terminalReason"] == "max_steps"
    assert shown["limit"] == {"kind": "cost", "value": 0.03, "limit": 0.025} and shown["stepIndex"] == 3
    human = ama(tmp_path, "runs", "status", final["executionId"])
    assert "Limit      cost 0.03 of 0.025" in human.stdout


def test_max_turns_emits_limit_reached_and_json_result_names_it(tmp_path: Path, ama_home: Path, server: LocalServer) -> None:
    write_config(ama_home, server.url)
    server.replies = [sse(call=LS) for _ in range(6)]
    p = ama(tmp_path, "-p", "go", "--max-turns", "2", "--output-format", "json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert len(server.requests) == 2
    assert out["terminalReason"] == "max_steps" and out["exitCode"] == 0
    assert out["limit"] == {"kind": "turns", "value": 2, "limit": 2} and out["warning"] == "limit_reached"


def test_config_limits_apply_and_the_flag_wins(tmp_path: Path, ama_home: Path, server: LocalServer) -> None:
    write_config(ama_home, server.url, limits={"maxTokens": 2500, "maxTurns": 9})
    server.replies = [sse(call=LS) for _ in range(6)]
    p = ama(tmp_path, "-p", "go", "--output-format", "stream-json")
    assert p.returncode == 0, p.stderr
    hits = [e for e in events_of(p) if e["type"] == "limit_reached"]
    assert hits == [{"type": "limit_reached", "kind": "tokens", "value": 3015, "limit": 2500}]
    assert len(server.requests) == 3
    server.reset()
    server.replies = [sse(call=LS) for _ in range(6)]
    p = ama(tmp_path, "-p", "go", "--max-turns", "1", "--output-format", "stream-json")
    assert [e["kind"] for e in events_of(p) if e["type"] == "limit_reached"] == ["turns"]
    assert len(server.requests) == 1


def test_bad_limit_values_are_refused_with_the_value(tmp_path: Path, ama_home: Path, server: LocalServer) -> None:
    write_config(ama_home, server.url)
    p = ama(tmp_path, "-p", "go", "--max-cost", "-1")
    assert p.returncode == 2 and "--max-cost must be a positive number, got -1.0" in p.stderr
    assert "Traceback" not in p.stderr and not server.requests


def test_rate_limit_keeps_the_provider_error(tmp_path: Path, ama_home: Path, server: LocalServer) -> None:
    write_config(ama_home, server.url, retry={"maxAttempts": 1})
    server.replies = [error(429, "slow down")]
    p = ama(tmp_path, "-p", "go", "--output-format", "json")
    assert p.returncode == 1
    final = run_records(ama_home)[-1]
    assert final["status"] == "FAILED" and final["terminalReason"] == "rate_limit"
    assert final["errorCode"] == "rate_limited" and final["httpStatus"] == 429 and final["category"] == "provider"
    for extra in ((), ("--no-cache",)):
        shown = json.loads(ama(tmp_path, "runs", "status", final["executionId"], "--json", *extra).stdout)
        assert (shown["terminalReason"], shown["errorCode"], shown["httpStatus"]) == ("rate_limit", "rate_limited", 429)
        assert shown["category"] == "provider" and shown["retryable"] is True and "slow down" in shown["errorMessage"]


def test_main_model_overloaded_is_answered_by_the_fallback_then_back(tmp_path: Path, ama_home: Path, server: LocalServer) -> None:
    write_config(ama_home, server.url)
    server.replies = [error(529), sse(call=LS), sse(text="all listed")]
    p = ama(tmp_path, "-p", "go", "--fallback-model", "local/backup", "--output-format", "stream-json")
    assert p.returncode == 0, p.stderr
    assert request_models(server) == ["main", "backup", "main"]
    evs = events_of(p)
    fb = [e for e in evs if e["type"] == "model_fallback"]
    assert len(fb) == 1 and fb[0]["from"]["id"] == "main" and fb[0]["to"]["id"] == "backup"
    assert "Overloaded" in fb[0]["reason"]
    assert [e["model"]["id"] for e in evs if e["type"] == "model_changed"] == ["backup", "main"]
    assert not any(e["type"] == "auto_retry_start" for e in evs)  # overloaded: straight to the fallback
    (path,) = list((ama_home / "sessions").rglob("*.jsonl"))
    changes = [e.model_id for e in read_session(path).entries if e.type == "model_change"]
    assert changes == ["main", "backup", "main"]
    final = run_records(ama_home)[-1]
    assert final["terminalReason"] == "stop"
    listed = json.loads(ama(tmp_path, "runs", "list", "--json").stdout)["runs"][0]
    assert listed["fallback"] == final["fallback"] == {
        "from": "local/main", "to": "local/backup", "reason": fb[0]["reason"], "count": 1
    }
    assert "Fallback   local/backup answered 1 request of local/main" in ama(tmp_path, "runs", "status", final["executionId"]).stdout


def test_fallback_after_retries_are_exhausted(tmp_path: Path, ama_home: Path, server: LocalServer) -> None:
    write_config(ama_home, server.url, fallbackModel="local/backup", retry={"maxAttempts": 2, "baseDelayMs": 1})
    server.replies = [error(500, "boom"), error(500, "boom"), sse(text="from backup")]
    p = ama(tmp_path, "-p", "go")
    assert p.returncode == 0, p.stderr
    assert p.stdout == "from backup\n"
    assert "local/main failed (" in p.stderr and "answering this request with the fallback local/backup" in p.stderr
    assert request_models(server) == ["main", "main", "backup"]


def test_a_failing_fallback_ends_the_run_naming_both_errors(tmp_path: Path, ama_home: Path, server: LocalServer) -> None:
    write_config(ama_home, server.url, fallbackModel="local/backup")
    server.replies = [error(529, "main is overloaded"), error(529, "backup is overloaded too")]
    p = ama(tmp_path, "-p", "go", "--output-format", "json")
    assert p.returncode == 1
    out = json.loads(p.stdout)
    assert "local/main: " in out["errorMessage"] and "main is overloaded" in out["errorMessage"]
    assert "fallback local/backup: " in out["errorMessage"] and "backup is overloaded too" in out["errorMessage"]
    assert request_models(server) == ["main", "backup"]


def test_retries_exhausted_without_fallback_keep_the_server_error(tmp_path: Path, ama_home: Path, server: LocalServer) -> None:
    write_config(ama_home, server.url, retry={"maxAttempts": 2, "baseDelayMs": 1})
    server.replies = [error(500, "boom"), error(500, "boom")]
    p = ama(tmp_path, "-p", "go")
    assert p.returncode == 1 and "boom" in p.stderr
    final = run_records(ama_home)[-1]
    assert (final["terminalReason"], final["errorCode"], final["httpStatus"]) == ("max_retries", "server_error", 500)
    assert request_models(server) == ["main", "main"]
