"""The run ledger: records, the state machine, steps, interruption, `ama runs list/status`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ama.index.runlog import RunsState, apply_record
from ama.session.store import Session
from tests.conftest import ama_cmd
from tests.index.helpers import Builder, ama, ama_json, usage


def rec(eid: str, status: str, ts: str, **kw) -> dict:
    return {
        "executionId": eid,
        "status": status,
        "createdAt": "2026-03-01T10:00:00.000Z",
        "updatedAt": ts,
        **kw,
    }


@pytest.fixture
def ledger(sessions_dir: Path, tmp_path: Path) -> dict:
    proj = tmp_path / "proj"
    proj.mkdir()
    s = Builder(sessions_dir, str(proj))
    s.custom(
        "2026-03-01T10:00:00.000Z",
        "ama.run",
        rec(
            "run-ok",
            "RUNNING",
            "2026-03-01T10:00:00.000Z",
            stepIndex=0,
            prompt="fix it",
            model="anthropic/claude",
        ),
    )
    s.user("fix it", "2026-03-01T10:00:00.100Z")
    s.assistant(
        "2026-03-01T10:00:05.000Z",
        "",
        u=usage(1, 1),
        stop="toolUse",
        tools=[("read", {"path": "a"}), ("grep", {})],
    )
    s.result("2026-03-01T10:00:06.000Z", "content")
    s.assistant("2026-03-01T10:00:09.000Z", "fixed", u=usage(1, 1))
    s.custom(
        "2026-03-01T10:00:10.000Z",
        "ama.run",
        rec(
            "run-ok",
            "COMPLETED",
            "2026-03-01T10:00:10.000Z",
            stepIndex=2,
            terminalReason="stop",
            completedAt="2026-03-01T10:00:10.000Z",
        ),
    )
    # illegal: back to RUNNING after the end; and a repeated end is fine
    s.custom(
        "2026-03-01T10:00:11.000Z",
        "ama.run",
        rec("run-ok", "RUNNING", "2026-03-01T10:00:11.000Z", stepIndex=3),
    )
    s.custom(
        "2026-03-01T10:00:12.000Z",
        "ama.run",
        rec("run-ok", "COMPLETED", "2026-03-01T10:00:12.000Z", stepIndex=2, terminalReason="stop"),
    )
    s.custom(
        "2026-03-01T11:00:00.000Z",
        "ama.run",
        rec("run-fail", "RUNNING", "2026-03-01T11:00:00.000Z", stepIndex=0),
    )
    s.user("again", "2026-03-01T11:00:00.100Z")
    s.assistant("2026-03-01T11:00:03.000Z", "", stop="error", error="rate limited")
    s.custom(
        "2026-03-01T11:00:04.000Z",
        "ama.run",
        rec(
            "run-fail",
            "FAILED",
            "2026-03-01T11:00:04.000Z",
            stepIndex=1,
            terminalReason="max_retries",
            errorCode="rate_limit",
        ),
    )
    s.custom(
        "2026-03-01T12:00:00.000Z",
        "ama.run",
        rec("run-cut", "RUNNING", "2026-03-01T12:00:00.000Z", stepIndex=0),
    )
    s.user("third", "2026-03-01T12:00:00.100Z")
    s.assistant("2026-03-01T12:00:02.000Z", "", stop="toolUse", tools=[("bash", {"command": "sleep 100"})])
    other = Builder(sessions_dir, "/elsewhere")
    other.custom(
        "2026-03-02T09:00:00.000Z", "ama.run", rec("run-else", "RUNNING", "2026-03-02T09:00:00.000Z")
    )
    other.custom(
        "2026-03-02T09:00:01.000Z", "ama.run", rec("run-else2", "RUNNING", "2026-03-02T09:00:01.000Z")
    )
    other.custom(
        "2026-03-02T09:00:05.000Z",
        "ama.run",
        rec("run-else2", "CANCELLED", "2026-03-02T09:00:05.000Z", terminalReason="aborted"),
    )
    return {"proj": str(proj), "s": s, "other": other}


def runs(*args: str, cwd: str | None = None) -> dict:
    a = ama_json("runs", "list", *args, cwd=cwd)
    b = ama_json("runs", "list", *args, "--no-cache", cwd=cwd)
    assert a == b
    return a


def test_list_statuses_order_and_interruption(ledger: dict) -> None:
    r = runs("--all")
    got = [(x["executionId"], x["status"], x["terminalReason"]) for x in r["runs"]]
    assert got == [
        ("run-else2", "CANCELLED", "aborted"),
        ("run-else", "CANCELLED", "interrupted"),  # superseded by a newer run in its file
        ("run-cut", "CANCELLED", "interrupted"),  # nobody holds the file's lease
        ("run-fail", "FAILED", "max_retries"),
        ("run-ok", "COMPLETED", "stop"),
    ]
    assert r["nextCursor"] is None
    here = runs(cwd=ledger["proj"])
    assert [x["executionId"] for x in here["runs"]] == ["run-cut", "run-fail", "run-ok"]
    failed = runs("--all", "--status", "failed,completed")
    assert [x["executionId"] for x in failed["runs"]] == ["run-fail", "run-ok"]
    mine = runs("--session", ledger["other"].sid[:8])
    assert {x["executionId"] for x in mine["runs"]} == {"run-else", "run-else2"}


def test_state_machine_refusals_and_derived_steps(ledger: dict) -> None:
    ok = next(x for x in runs("--all")["runs"] if x["executionId"] == "run-ok")
    assert ok["status"] == "COMPLETED" and ok["stepIndex"] == 2 and ok["steps"] == 2
    assert ok["anomalies"] == ["@7: transition COMPLETED -> RUNNING refused"]
    assert ok["prompt"] == "fix it" and ok["model"] == "anthropic/claude"
    assert ok["createdAt"] == "2026-03-01T10:00:00.000Z" and ok["completedAt"] == "2026-03-01T10:00:10.000Z"
    fail = ama_json("runs", "status", "run-fail")
    assert (fail["status"], fail["terminalReason"], fail["errorCode"], fail["steps"]) == (
        "FAILED",
        "max_retries",
        "rate_limit",
        1,
    )


def test_pagination_with_scope_bound_cursors(ledger: dict) -> None:
    p1 = runs("--all", "--limit", "2")
    p2 = runs("--all", "--limit", "2", "--cursor", p1["nextCursor"])
    p3 = runs("--all", "--limit", "2", "--cursor", p2["nextCursor"])
    ids = [x["executionId"] for p in (p1, p2, p3) for x in p["runs"]]
    assert len(ids) == 5 == len(set(ids)) and p3["nextCursor"] is None
    bad = ama("runs", "list", "--limit", "2", "--cursor", p1["nextCursor"], "--status", "FAILED", rc=2)
    assert "different query" in bad.stderr


def test_status_exit_codes_and_verbose(ledger: dict) -> None:
    out = ama("runs", "status", "run-ok").stdout
    assert "COMPLETED (stop)" in out and "Refused" in out
    v = ama_json("runs", "status", "run-ok", "--verbose")
    assert [s["tools"] for s in v["recentSteps"]] == [["read", "grep"], []]
    assert [s["stopReason"] for s in v["recentSteps"]] == ["toolUse", "stop"]
    assert [e["type"] for e in v["tailEvents"]][-1] == "custom"
    assert v["tailEvents"][0]["entry"] == 1
    text = ama("runs", "status", "run-ok", "--verbose").stdout
    assert "Recent steps:" in text and "read,grep" in text and "Last entries:" in text
    assert ama_json("runs", "status", "run-c")["executionId"] == "run-cut"  # a unique prefix
    p = ama("runs", "status", "no-such-run", rc=2)
    assert "no-such-run" in p.stderr
    p = ama("runs", "status", "run-", rc=2)
    assert "several runs" in p.stderr
    ama("runs", "list", "--status", "SLEEPING", rc=2)
    ama("runs", "list", "--limit", "0", rc=2)
    assert ama_json("runs", "list", "--session", ledger["s"].path)["runs"]
    empty = ama("runs", "list", cwd="/")
    assert empty.returncode == 0 and "No runs" in empty.stderr


def test_a_running_run_with_a_live_writer_is_running(ledger: dict) -> None:
    s = Session.open(ledger["s"].path)  # this process now holds the lease
    try:
        st = ama_json("runs", "status", "run-cut")
        assert (st["status"], st["interrupted"]) == ("RUNNING", False)
    finally:
        s.close()
    st = ama_json("runs", "status", "run-cut")
    assert (st["status"], st["terminalReason"], st["interrupted"], st["recordedStatus"]) == (
        "CANCELLED",
        "interrupted",
        True,
        "RUNNING",
    )


FINISHER = """
import os, sys, time
from ama.session.store import Session
s = Session.open(sys.argv[1])
print("held", flush=True)
while not os.path.exists(sys.argv[2]):  # the test says when the watcher has seen RUNNING
    time.sleep(0.02)
s.append_custom("ama.run", {"executionId": "run-cut", "status": "COMPLETED", "terminalReason": "stop", "stepIndex": 1,
                            "createdAt": "2026-03-01T10:00:00.000Z", "updatedAt": "2026-03-01T12:00:09.000Z"})
time.sleep(0.3)
s.close()
"""


def test_watch_refreshes_until_the_run_ends(ledger: dict, tmp_path) -> None:
    go = tmp_path / "go"
    writer = subprocess.Popen([sys.executable, "-c", FINISHER, ledger["s"].path, str(go)], stdout=subprocess.PIPE, text=True)
    watcher = None
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "held\n"  # the run is RUNNING
        watcher = subprocess.Popen(
            ama_cmd("runs", "status", "run-cut", "--watch", "--interval", "0.2", "--json"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert watcher.stdout is not None
        first = json.loads(watcher.stdout.readline())
        go.touch()
        rest, err = watcher.communicate(timeout=60)
    finally:
        go.touch()
        writer.wait(timeout=60)
        if watcher is not None and watcher.poll() is None:
            watcher.kill()
    assert watcher.returncode == 0, err
    states = [first["status"]] + [json.loads(line)["status"] for line in rest.splitlines()]
    assert states[0] == "RUNNING" and states[-1] == "COMPLETED"


def test_apply_record_state_machine() -> None:
    st = RunsState()
    changed: dict = {}
    apply_record(
        st, {"executionId": "e", "status": "CREATED", "createdAt": 1000, "updatedAt": 1000}, 1, 0, changed
    )
    apply_record(
        st, {"executionId": "e", "status": "RUNNING", "updatedAt": 2000, "stepIndex": 1}, 2, 0, changed
    )
    assert st.open == "e"
    apply_record(
        st, {"executionId": "e", "status": "RUNNING", "updatedAt": 3000, "stepIndex": 0}, 3, 0, changed
    )
    apply_record(
        st,
        {"executionId": "e", "status": "FAILED", "updatedAt": 4000, "terminalReason": "timeout"},
        4,
        0,
        changed,
    )
    apply_record(st, {"executionId": "e", "status": "COMPLETED", "updatedAt": 5000}, 5, 0, changed)
    apply_record(st, {"executionId": "e", "status": "PAUSED"}, 6, 0, changed)
    apply_record(st, {"status": "RUNNING"}, 7, 0, changed)  # no executionId: ignored
    r = st.runs["e"]
    assert (r.status, r.terminal_reason, r.step_index, r.created_ms, r.updated_ms, r.end_k) == (
        "FAILED",
        "timeout",
        1,
        1000,
        4000,
        4,
    )
    assert r.anomalies == [
        "@3: stepIndex 0 < 1 ignored",
        "@5: transition FAILED -> COMPLETED refused",
        "@6: unknown status 'PAUSED' ignored",
    ]
    assert st.open is None and list(st.runs) == ["e"]


def test_list_prints_run_ids_as_unique_prefixes_never_cut(sessions_dir: Path, tmp_path: Path) -> None:
    proj = tmp_path / "p"
    proj.mkdir()
    b = Builder(sessions_dir, str(proj))
    a_id, b_id = "0123456789abcdef0123456789abcd01", "0123456789abcdef0123456789abcd02"
    for i, eid in enumerate((a_id, b_id, "fedcba9876543210fedcba9876543210")):
        b.custom(f"2026-03-01T10:00:0{i}.000Z", "ama.run", rec(eid, "COMPLETED", f"2026-03-01T10:00:0{i}.000Z"))
    out = ama("runs", "list", cwd=proj).stdout
    assert "…" not in out
    first = [line.split()[0] for line in out.splitlines()[1:]]
    assert first == ["fedcba98", b_id, a_id]
    assert json.loads(ama("runs", "status", "fedcba98", "--json", cwd=proj).stdout)["executionId"].startswith("fedcba98")
