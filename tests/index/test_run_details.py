"""A run's details (message, limit, error package, fallback) in the runs table, and the
migration that adds them to an existing index without a rebuild."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ama.index import db as D
from ama.index.runlog import DETAIL_KEYS
from tests.index.helpers import Builder, ama_json, schema_back_to

FAILED = {
    "executionId": "run-failed",
    "status": "FAILED",
    "terminalReason": "rate_limit",
    "errorCode": "rate_limited",
    "errorMessage": "429 Too Many Requests",
    "category": "provider",
    "httpStatus": 429,
    "retryable": True,
    "provider": "local",
    "fallback": {"from": "local/main", "to": "local/backup", "reason": "Overloaded", "count": 1},
    "stepIndex": 2,
    "createdAt": "2026-03-01T10:00:00.000Z",
    "updatedAt": "2026-03-01T10:00:05.000Z",
    "model": "local/main",
}


def rows(sql: str) -> list[tuple]:
    db = sqlite3.connect(D.path())
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def listed(cwd: Path, *extra: str) -> dict[str, dict]:
    out = ama_json("runs", "list", *extra, cwd=cwd)
    return {r["executionId"]: r for r in out["runs"]}


def test_list_json_shows_every_detail_from_index_and_scan(sessions_dir: Path, tmp_path: Path) -> None:
    s = Builder(sessions_dir, str(tmp_path))
    s.custom("2026-03-01T10:00:00.000Z", "ama.run", {**FAILED, "status": "CREATED", "stepIndex": 0})
    s.custom("2026-03-01T10:00:05.000Z", "ama.run", FAILED)
    ok = {"executionId": "run-ok", "status": "COMPLETED", "terminalReason": "stop", "stepIndex": 1,
          "createdAt": "2026-03-01T11:00:00.000Z", "updatedAt": "2026-03-01T11:00:01.000Z"}
    s.custom("2026-03-01T11:00:01.000Z", "ama.run", ok)
    for runs in (listed(tmp_path), listed(tmp_path, "--no-cache")):
        run = runs["run-failed"]
        assert {k: run[k] for k in DETAIL_KEYS} == {k: FAILED.get(k) for k in DETAIL_KEYS}
        assert (run["status"], run["terminalReason"], run["errorCode"], run["stepIndex"]) == (
            "FAILED", "rate_limit", "rate_limited", 2)
        assert all(runs["run-ok"][k] is None for k in DETAIL_KEYS)
    assert sorted(rows("SELECT execution_id, details IS NULL FROM runs")) == [("run-failed", 0), ("run-ok", 0)]


def test_an_index_of_the_previous_schema_is_upgraded_in_place(sessions_dir: Path, tmp_path: Path) -> None:
    s = Builder(sessions_dir, str(tmp_path))
    s.custom("2026-03-01T10:00:05.000Z", "ama.run", FAILED)
    listed(tmp_path)
    # the index as the previous ama left it: schema 4, no details column
    db = sqlite3.connect(D.path())
    schema_back_to(db, 4)
    db.commit()
    db.close()
    (file_row,) = rows("SELECT id, offset FROM files")
    run = listed(tmp_path)["run-failed"]
    n = len(D.MIGRATIONS)
    assert rows("SELECT max(version), count(*) FROM schema_migrations") == [(n, n)]
    assert rows("SELECT id, offset FROM files") == [file_row]  # not rebuilt
    assert rows("SELECT details FROM runs") == [(None,)]  # read from the session file instead
    assert run["errorMessage"] == "429 Too Many Requests" and run["httpStatus"] == 429
    assert run["fallback"] == FAILED["fallback"]
    status = ama_json("runs", "status", "run-failed", cwd=tmp_path)
    assert status["category"] == "provider" and status["fallback"]["count"] == 1
    # a run written after the upgrade has its details in the table
    s.custom("2026-03-01T12:00:00.000Z", "ama.run", {**FAILED, "executionId": "run-new", "httpStatus": 529})
    assert listed(tmp_path)["run-new"]["httpStatus"] == 529
    assert sorted(rows("SELECT execution_id, details IS NULL FROM runs")) == [("run-failed", 1), ("run-new", 0)]
