"""The run ledger's queries (``ama runs list / status``), from the index or by scanning.

A run whose last record is ``CREATED`` or ``RUNNING`` reads as **interrupted** (status
``CANCELLED``, terminal reason ``interrupted``) when nobody is writing its session any
more: a newer run started in the same file, or no process holds the file's lease (tested
with a shared, non-blocking ``flock`` that is released at once).
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
from array import array
from typing import Any

from ama.index.runlog import DETAIL_KEYS
from ama.index.timeutil import iso_of_ms
from ama.session.layout import iter_session_files

STEP_COLS = ("step", "entry", "entryId", "timestamp", "stopReason", "tools", "error")  # JSON keys of a step


def _step(row: tuple) -> dict:
    d = dict(zip(STEP_COLS, row))
    d["tools"] = d["tools"].split(",") if d["tools"] else []
    return d


class Run:
    def __init__(
        self, path: str, session_id: str, cwd: str, rec: dict[str, Any], steps: list[dict] | None = None
    ) -> None:
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self.rec = rec  # RunRec fields (snake case)
        self.steps = steps
        self.status = rec["status"]
        self.terminal_reason = rec["terminal_reason"]
        self.interrupted = False

    @property
    def execution_id(self) -> str:
        return self.rec["execution_id"]

    @property
    def updated_ms(self) -> int:
        return self.rec["updated_ms"]

    @property
    def terminal(self) -> bool:
        return self.status in ("COMPLETED", "FAILED", "CANCELLED")

    def settle(self) -> None:
        """Decide whether a run that never ended was interrupted (lease probe)."""
        if self.rec["status"] not in ("CREATED", "RUNNING"):
            return
        if self.rec["superseded"] or not lease_held(self.path):
            self.status = "CANCELLED"
            self.terminal_reason = "interrupted"
            self.interrupted = True

    def details(self) -> dict[str, Any]:
        """``DETAIL_KEYS`` of the run's latest record: from the index or the scan, or, for a
        row indexed before they were kept, from the record in the session file."""
        d = self.rec.get("details")
        if d is None:
            d = self.rec["details"] = record_extras(self.path, self.rec["last_k"])
        return d

    def to_json(self) -> dict:
        r = self.rec
        out = {
            "executionId": r["execution_id"],
            "session": self.session_id,
            "project": self.cwd,
            "path": self.path,
            "status": self.status,
            "terminalReason": self.terminal_reason,
            "errorCode": r["error_code"],
            "stepIndex": r["step_index"],
            "steps": r["steps"],
            "createdAt": iso_of_ms(r["created_ms"]) if r["created_ms"] else None,
            "updatedAt": iso_of_ms(r["updated_ms"]) if r["updated_ms"] else None,
            "completedAt": iso_of_ms(r["completed_ms"]) if r["completed_ms"] else None,
            "prompt": r["prompt"],
            "model": r["model"],
            "interrupted": self.interrupted,
            "recordedStatus": r["status"],
            "anomalies": r["anomalies"],
            "entries": {"first": r["start_k"], "last": r["end_k"] or r["last_k"]},
        }
        details = self.details()
        for key in DETAIL_KEYS:
            out[key] = details.get(key)
        if self.steps is not None:
            out["recentSteps"] = self.steps
        return out


def lease_held(path: str) -> bool:
    """Whether a writer holds the session file's lease right now."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


_RUN_COLS = (
    "execution_id, status, terminal_reason, error_code, step_index, created_ms, updated_ms, completed_ms, prompt,"
    " model, start_k, end_k, last_k, steps, superseded, anomalies, details"
)
_NAMES = [c.strip() for c in _RUN_COLS.split(",")]


def _rec_of_row(row: tuple) -> dict:
    d = dict(zip(_NAMES, row))
    d["superseded"] = bool(d["superseded"])
    d["anomalies"] = json.loads(d["anomalies"])
    d["details"] = None if d["details"] is None else json.loads(d["details"])
    return d


def from_index(
    db: sqlite3.Connection,
    root_id: int,
    *,
    project: str | None = None,
    session_path: str | None = None,
    execution_id: str | None = None,
    steps: int = 0,
) -> list[Run]:
    where = "f.root_id = ?"
    args: list[Any] = [root_id]
    if project is not None:
        where += " AND f.cwd = ?"
        args.append(project)
    if session_path is not None:
        where += " AND f.path = ?"
        args.append(session_path)
    if execution_id is not None:
        where += " AND r.execution_id = ?"
        args.append(execution_id)
    out = []
    cols = ", ".join(f"r.{c}" for c in _NAMES)
    for row in db.execute(
        f"SELECT f.id, f.path, f.session_id, f.cwd, {cols} FROM runs r JOIN files f ON f.id = r.file_id WHERE {where}",
        args,
    ):
        rec = _rec_of_row(row[4:])
        st = None
        if steps:
            st = [
                _step(s)
                for s in db.execute(
                    "SELECT step, k, entry_id, timestamp, stop_reason, tools, error FROM run_steps"
                    " WHERE file_id = ? AND execution_id = ? ORDER BY step DESC LIMIT ?",
                    (row[0], rec["execution_id"], steps),
                )
            ][::-1]
        out.append(Run(row[1], row[2], row[3], rec, st))
    return out


def scan(
    root: str,
    *,
    project: str | None = None,
    session_path: str | None = None,
    execution_id: str | None = None,
    steps: int = 0,
) -> list[Run]:
    from ama.index.extract import FileState, extract, start

    out = []
    for path in iter_session_files(os.path.abspath(root)):
        if session_path is not None and path != session_path:
            continue
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        if b'"ama.run"' not in data:
            continue
        state, pos = start(data)
        if not isinstance(state, FileState) or (project is not None and state.cwd != project):
            continue
        chunk = extract(data, pos, state, docs=False, facts=False)
        for rec in state.runs.runs.values():
            if execution_id is not None and rec.execution_id != execution_id:
                continue
            d = {n: getattr(rec, n) for n in _NAMES}
            st = None
            if steps:
                st = [_step(s[1:]) for s in chunk.steps if s[0] == rec.execution_id][-steps:]
            out.append(Run(path, state.session_id, state.cwd, d, st))
    return out


def tail_events(path: str, first: int, last: int, offs: Any, lens: Any, count: int = 10) -> list[dict]:
    """The last ``count`` entries of a run (``@first..@last``), summarized."""
    from ama.index import lines as L

    out: list[dict] = []
    try:
        f = open(path, "rb")  # noqa: SIM115 (closed by the with below)
    except OSError:
        return out
    with f:
        for k in range(max(first, last - count + 1), last + 1):
            if not 0 < k <= len(offs):
                continue
            line = os.pread(f.fileno(), lens[k - 1], offs[k - 1])
            try:
                obj = L.decode(line, with_text=True)
            except L.DecodeError:
                continue
            if obj is L.NOT_OBJECT:
                continue
            ev: dict[str, Any] = {
                "entry": k,
                "type": obj.type,
                "timestamp": obj.timestamp if isinstance(obj.timestamp, str) else None,
            }
            msg = getattr(obj, "message", None)
            if msg is not None:
                ev["role"] = msg.role
                docs = L.docs_of_line(line, 3)
                if docs:
                    ev["text"] = " ".join(docs[0][2].split())[:100]
                if getattr(msg, "stop_reason", None):
                    ev["stopReason"] = msg.stop_reason
            out.append(ev)
    return out


#: fields of a run record the runs table does not keep; ``ama runs status`` reads them
#: from the run's latest record in its session file
RECORD_EXTRAS = DETAIL_KEYS


def record_extras(path: str, k: int, offs: Any = None, lens: Any = None) -> dict[str, Any]:
    """``RECORD_EXTRAS`` of the ``ama.run`` record at entry ``@k`` of ``path`` (empty when
    it cannot be read)."""
    import msgspec

    if offs is None or lens is None:
        try:
            offs, lens = offsets_by_scan(path)
        except OSError:
            return {}
    if not 0 < k <= len(offs):
        return {}
    try:
        with open(path, "rb") as f:
            line = os.pread(f.fileno(), lens[k - 1], offs[k - 1])
        obj = msgspec.json.decode(line)
    except (OSError, msgspec.DecodeError):
        return {}
    data = obj.get("data") if isinstance(obj, dict) and obj.get("customType") == "ama.run" else None
    if not isinstance(data, dict):
        return {}
    return {key: data[key] for key in RECORD_EXTRAS if key in data}


def offsets_from_index(db: sqlite3.Connection, root_id: int, path: str) -> tuple[Any, Any]:
    row = db.execute(
        "SELECT d.offs, d.lens FROM files f JOIN file_data d ON d.file_id = f.id WHERE f.root_id = ? AND f.path = ?",
        (root_id, path),
    ).fetchone()
    if row is None:
        return array("q"), array("I")
    return array("q", row[0]), array("I", row[1])


def offsets_by_scan(path: str) -> tuple[Any, Any]:
    from ama.index.extract import FileState, extract, start

    with open(path, "rb") as f:
        data = f.read()
    state, pos = start(data)
    if not isinstance(state, FileState):
        return [], []
    chunk = extract(data, pos, state, docs=False, facts=False, runs=False)
    return chunk.offs, chunk.lens
