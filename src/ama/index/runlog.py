"""Run records (SPEC D3, seeds/003): ``custom{customType:"ama.run"}`` entries projected into
runs, with their state machine, and run steps derived from the entries in between.

A run is ``CREATED -> RUNNING -> COMPLETED | FAILED | CANCELLED``.  A record that would
move a run backwards (a terminal state back to ``RUNNING``, ``COMPLETED`` to ``FAILED``,
...) is refused: the run keeps its state and the refusal is kept in ``anomalies`` (shown
by ``ama runs status --verbose``).  Writing the same terminal state again is accepted
silently.  ``stepIndex`` only grows and ``createdAt`` never changes.

Steps are not records: while a run is ``RUNNING``, every assistant message of the session
is one step (its stop reason, tool calls and error).  A run still ``RUNNING`` when a newer
run starts in the same file was cut off (its process died before writing the end): it is
marked ``superseded``.  Whether a run left ``RUNNING`` is *interrupted* depends on the
file's lease at read time, so it is decided by the query, not here.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ama.index.timeutil import ts_ms
from ama.session.reader import DECODE_ERRORS

RUN_TYPE = "ama.run"
STATUSES = ("CREATED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED")
TERMINAL = frozenset({"COMPLETED", "FAILED", "CANCELLED"})
#: fields of a run record kept as the run's ``details`` (from its latest accepted record):
#: the message, the budget that stopped it, a failure's error package, the fallback it used
DETAIL_KEYS = ("errorMessage", "limit", "category", "httpStatus", "retryable", "errorType", "provider", "fallback")
_ALLOWED: dict[str | None, frozenset[str]] = {
    None: frozenset(STATUSES),
    "CREATED": frozenset({"CREATED", "RUNNING", "FAILED", "CANCELLED"}),
    "RUNNING": frozenset({"RUNNING", "COMPLETED", "FAILED", "CANCELLED"}),
    "COMPLETED": frozenset({"COMPLETED"}),
    "FAILED": frozenset({"FAILED"}),
    "CANCELLED": frozenset({"CANCELLED"}),
}


class RunRec(msgspec.Struct, kw_only=True):
    execution_id: str
    status: str
    terminal_reason: str | None = None
    error_code: str | None = None
    step_index: int = 0
    created_ms: int = 0
    updated_ms: int = 0
    completed_ms: int | None = None
    prompt: str | None = None
    model: str | None = None
    start_k: int = 0  # entry ordinal of its first record
    end_k: int | None = None  # ... of its terminal record
    last_k: int = 0  # ... of its latest accepted record
    steps: int = 0  # derived: assistant messages while RUNNING
    superseded: bool = False
    anomalies: list[str] = msgspec.field(default_factory=list)
    #: ``DETAIL_KEYS`` of the latest accepted record; None for runs indexed before they were kept
    details: dict[str, Any] | None = None


class RunsState(msgspec.Struct):
    runs: dict[str, RunRec] = msgspec.field(default_factory=dict)
    open: str | None = None  # the run that is RUNNING now


class _RunLine(msgspec.Struct, rename="camel"):
    type: Any = None
    custom_type: Any = None
    data: Any = None


_runline = msgspec.json.Decoder(_RunLine)


def _ms(x: Any) -> int | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, int | float):
        return int(x)
    if isinstance(x, str):
        return ts_ms(x) or None
    return None


def _str(x: Any) -> str | None:
    return x if isinstance(x, str) and x else None


def record_of(line: bytes) -> dict | None:
    """The ``data`` of an ``ama.run`` custom entry line, or None."""
    try:
        e = _runline.decode(line)
    except DECODE_ERRORS:
        return None
    if e.type != "custom" or e.custom_type != RUN_TYPE or not isinstance(e.data, dict):
        return None
    return e.data


def apply_record(st: RunsState, data: dict, k: int, entry_ms: int, changed: dict[str, RunRec]) -> None:
    eid = data.get("executionId")
    if not isinstance(eid, str) or not eid:
        return
    status = data.get("status")
    cur = st.runs.get(eid)
    if status not in _ALLOWED[None]:
        if cur is not None:
            cur.anomalies.append(f"@{k}: unknown status {status!r} ignored")
            changed[eid] = cur
        return
    prev = cur.status if cur is not None else None
    if status not in _ALLOWED[prev]:
        assert cur is not None
        cur.anomalies.append(f"@{k}: transition {prev} -> {status} refused")
        changed[eid] = cur
        return
    updated = _ms(data.get("updatedAt")) or entry_ms
    if cur is None:
        if st.open is not None and st.open != eid:
            other = st.runs.get(st.open)
            if other is not None and other.status in ("CREATED", "RUNNING"):
                other.superseded = True
                changed[other.execution_id] = other
            st.open = None
        cur = RunRec(
            execution_id=eid,
            status=status,
            created_ms=_ms(data.get("createdAt")) or updated,
            start_k=k,
        )
        st.runs[eid] = cur
    elif prev == status and status in TERMINAL:
        return  # the same end written again
    cur.status = status
    cur.last_k = k
    cur.details = {key: data[key] for key in DETAIL_KEYS if key in data}
    cur.updated_ms = max(cur.updated_ms, updated)
    step = data.get("stepIndex")
    if isinstance(step, int) and not isinstance(step, bool):
        if step < cur.step_index:
            cur.anomalies.append(f"@{k}: stepIndex {step} < {cur.step_index} ignored")
        else:
            cur.step_index = step
    for attr, key in (("terminal_reason", "terminalReason"), ("error_code", "errorCode"), ("model", "model")):
        v = _str(data.get(key))
        if v is not None:
            setattr(cur, attr, v)
    if cur.prompt is None:
        cur.prompt = _str(data.get("prompt"))
    if status == "RUNNING":
        st.open = eid
    elif status in TERMINAL:
        cur.end_k = k
        cur.completed_ms = _ms(data.get("completedAt")) or updated
        if st.open == eid:
            st.open = None
    changed[eid] = cur


def step_of(
    st: RunsState, k: int, entry_id: str, ts: Any, msg: Any, changed: dict[str, RunRec]
) -> tuple | None:
    """A step of the open run for an assistant message ``msg`` (light-decoded), or None."""
    eid = st.open
    if eid is None:
        return None
    run = st.runs.get(eid)
    if run is None or run.status != "RUNNING":
        return None
    run.steps += 1
    changed[eid] = run
    tools = []
    if isinstance(msg.content, list):
        tools = [b.name for b in msg.content if b.type == "toolCall" and isinstance(b.name, str)]
    return (
        eid,
        run.steps,
        k,
        entry_id,
        ts if isinstance(ts, str) else "",
        msg.stop_reason if isinstance(msg.stop_reason, str) else "",
        ",".join(tools),
        msg.error_message if isinstance(msg.error_message, str) else None,
    )
