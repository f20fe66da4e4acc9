"""One changed session file -> a :class:`FileRecord`: everything the index stores for it,
as plain data, computed without the database.

:func:`read` is the whole per-file work of an index update (read the bytes, summarize,
extract entries, documents, stats facts and runs); ``index/update.py`` writes the record.
It is a pure function of the file and of what the index held for it before (``prior``:
the state saved when the file was last read, for a file that only grew), so it can run
in a forked worker (``index/build.py``), whose records travel through a pipe with
:mod:`marshal` as plain tuples (:meth:`FileRecord.plain`, :func:`from_plain`).
"""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Sequence
from typing import Any, NamedTuple

from ama.index import extract as X
from ama.index.facts import open_turn
from ama.index.listing import catalog_values
from ama.index.timeutil import Days
from ama.session.summary import summarize_bytes

TAIL = 64

#: what the read found
OK = 0  # read: write the record
NO_STATE = 1  # the header is damaged or still being written: only the summary
GONE = 2  # unreadable or vanished: drop the file's rows
SAME = 3  # the index already holds this very version of the file (another process)

class Prior(NamedTuple):
    """What the index holds of a file it read before (``update._ROW``)."""

    fid: int
    size: int
    ino: int
    offset: int
    head: bytes
    tail: bytes
    valid: int
    state: bytes | None
    parents: bytes
    offs: bytes
    lens: bytes
    users: bytes
    ndocs: int
    mtime_ns: int


class FileRecord(NamedTuple):
    path: str
    status: int
    size: int = 0
    mtime_ns: int = 0
    ino: int = 0
    #: read from the start (insert the file's rows) rather than from ``prior.offset``
    fresh: bool = True
    summary: str = ""  # the catalog summary as JSON
    error_count: int = 0
    pending_interaction: str | None = None
    task_status: str = "completed"
    catalog: tuple = ()  # the file's row of the listing (``listing.catalog_values``)
    end: int = 0  # the offset reading stopped at
    valid: int = 0
    session_id: str = ""
    cwd: str = ""
    version: int = 0
    last_ms: int = 0
    leaf: int = 0
    ndocs: int = 0  # documents of the whole file
    turn: tuple | None = None  # the open turn as a turn fact (facts.open_turn)
    head: bytes = b""
    tail: bytes = b""
    state: bytes | None = None
    parents: bytes = b""
    offs: bytes = b""
    lens: bytes = b""
    users: bytes = b""
    docs: Sequence[tuple[int, str]] = ()  # new search documents: ((k << 1) | part, text)
    req: Sequence[tuple] = ()  # rows of stat_requests without the file id; the same below
    turns: Sequence[tuple] = ()
    tools: Sequence[tuple] = ()
    external: Sequence[tuple] = ()
    latency: Sequence[tuple] = ()
    runs: Sequence[tuple] = ()
    steps: Sequence[tuple] = ()

    def plain(self) -> tuple:
        """The record as a plain tuple (what :mod:`marshal` can carry)."""
        return tuple(self)


def from_plain(t: tuple) -> FileRecord:
    return FileRecord(*t)


def read(path: str, prior: Prior | None, days: Days) -> FileRecord:
    """Read ``path`` into a record: from ``prior.offset`` when the file only grew since
    ``prior`` was saved, else from the start."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if prior is not None and (prior.size, prior.mtime_ns, prior.ino) == (
                st.st_size,
                st.st_mtime_ns,
                st.st_ino,
            ):
                return FileRecord(path, SAME)  # another process indexed it meanwhile
            data = f.read()
    except OSError:
        return FileRecord(path, GONE)
    summary = summarize_bytes(data, path, size=st.st_size, mtime_ns=st.st_mtime_ns)
    common: dict[str, Any] = {
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ino": st.st_ino,
        "summary": json.dumps(vars(summary), ensure_ascii=False),  # flat: no asdict() copy
        "error_count": summary.error_count,
        "pending_interaction": summary.pending_interaction,
        "task_status": summary.task_status,
        "catalog": catalog_values(summary),
    }
    grown = (
        prior is not None
        and prior.valid == 1
        and prior.ino == st.st_ino
        and st.st_size > prior.size
        and prior.state is not None
        and data.startswith(prior.head)
        and data[max(0, prior.offset - len(prior.tail)) : prior.offset] == prior.tail
    )
    state: X.FileState | str | None
    if grown:
        assert prior is not None and prior.state is not None
        state, pos, ndocs, head = X.load_state(prior.state), prior.offset, prior.ndocs, prior.head
        parents, offs, lens, users = (
            array("I", prior.parents),
            array("q", prior.offs),
            array("I", prior.lens),
            array("I", prior.users),
        )
    else:
        state, pos = X.start(data)
        ndocs, head = 0, data[:pos]
        parents, offs, lens, users = array("I"), array("q"), array("I"), array("I")
    if not isinstance(state, X.FileState):
        valid = 2 if state == X.HEADER_PENDING else 0
        return FileRecord(path, NO_STATE, fresh=True, end=pos, valid=valid, **common)
    chunk = X.extract(data, pos, state, days=days)
    parents.extend(chunk.parents)
    offs.extend(chunk.offs)
    lens.extend(chunk.lens)
    users.extend(chunk.users)
    fx = chunk.facts
    end = chunk.end
    return FileRecord(
        path,
        OK,
        fresh=not grown,
        end=end,
        valid=1,
        session_id=state.session_id,
        cwd=state.cwd,
        version=state.version,
        last_ms=state.last_ms,
        leaf=state.leaf,
        ndocs=ndocs + len(chunk.docs),
        turn=open_turn(state.stats),
        head=head,
        tail=data[max(len(head), end - TAIL) : end],
        state=X.dump_state(state),
        parents=parents.tobytes(),
        offs=offs.tobytes(),
        lens=lens.tobytes(),
        users=users.tobytes(),
        docs=[((k << 1) | part, text) for k, part, _role, text in chunk.docs],
        req=[(*key, *vals) for key, vals in fx.req.items()],
        turns=[(*key, *vals) for key, vals in fx.turns.items()],
        tools=[(day, name, n) for (day, name), n in fx.tools.items()],
        external=[(*key, *vals) for key, vals in fx.external.items()],
        latency=fx.latency,
        runs=[_run_row(rec) for rec in chunk.runs.values()],
        steps=chunk.steps,
        **common,
    )


def _run_row(rec: Any) -> tuple:
    return (
        rec.execution_id,
        rec.status,
        rec.terminal_reason,
        rec.error_code,
        rec.step_index,
        rec.created_ms,
        rec.updated_ms,
        rec.completed_ms,
        rec.prompt,
        rec.model,
        rec.start_k,
        rec.end_k,
        rec.last_k,
        rec.steps,
        int(rec.superseded),
        json.dumps(rec.anomalies),
        None if rec.details is None else json.dumps(rec.details),
    )
