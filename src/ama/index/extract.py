"""One session file's bytes, from a byte offset, to rows: the single extraction that both
the index and the scans use.

:func:`start` reads the header and gives a :class:`FileState`; :func:`extract` reads the
lines after ``pos`` and returns a :class:`Chunk` (new entries with their parent, offset and
length; user-message numbers; search documents; stats facts; run records and steps),
updating the state in place.  Reading a file in two chunks gives the same rows as reading
it at once, which is what lets the index re-read only what was appended.

Entry numbering follows the session reader exactly (``ama.session.reader``):

* ``@k`` is the 1-based position of an entry among the file's entries: the header, leaf
  lines, blank and damaged lines (not JSON, not an object, no id, a repeated id, a second
  header) are not entries.  Old pi v1 lines without ids get ids as the reader gives them.
* ``#n`` is the 1-based number of a user message in file order, as
  ``ama.session.history.user_messages`` numbers them (``ama --from <id>#n``).
* A last line without its newline that is not JSON is a write in progress: it is not
  read, and the chunk ends before it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from ama.index import facts as F
from ama.index import lines as L
from ama.index.header import first_header
from ama.index.runlog import RunRec, RunsState, apply_record, record_of, step_of
from ama.index.timeutil import Days, ts_ms
from ama.session.entries import SessionHeader


class FileState(msgspec.Struct, kw_only=True):
    version: int = 3
    session_id: str = ""
    cwd: str = ""
    created: str = ""
    k: int = 0  # entries so far
    n: int = 0  # user messages so far
    ids: dict[str, int] = msgspec.field(default_factory=dict)
    leaf: int = 0  # @k of the current leaf, 0 = before the first entry
    v1: int = 0
    damaged: int = 0
    last_ms: int = 0  # timestamp of the last message line (the header's before any)
    stats: F.StatsState = msgspec.field(default_factory=F.StatsState)
    runs: RunsState = msgspec.field(default_factory=RunsState)


_state_enc = msgspec.json.Encoder()
_state_dec = msgspec.json.Decoder(FileState)


def dump_state(st: FileState) -> bytes:
    return _state_enc.encode(st)


def load_state(blob: bytes) -> FileState:
    return _state_dec.decode(blob)


@dataclass
class Chunk:
    end: int
    parents: list[int] = field(default_factory=list)  # per new entry: parent @k (0 = root)
    offs: list[int] = field(default_factory=list)
    lens: list[int] = field(default_factory=list)
    users: list[int] = field(default_factory=list)  # @k of each new user message
    docs: list[tuple[int, int, int, str]] = field(default_factory=list)  # (k, part, role, text)
    facts: F.Facts = field(default_factory=F.Facts)
    runs: dict[str, RunRec] = field(default_factory=dict)
    steps: list[tuple] = field(default_factory=list)



HEADER_PENDING = "pending"


def start(data: bytes) -> tuple[FileState | str | None, int]:
    """``(state, pos)`` after the header; ``(None, len)`` when the header is damaged (the
    file is skipped), ``(HEADER_PENDING, 0)`` when the header is still being written."""
    h, pos = first_header(data)
    if not isinstance(h, SessionHeader):
        return (None, pos) if h is None else (HEADER_PENDING, 0)
    st = FileState(version=h.version, session_id=h.id, cwd=h.cwd, created=h.timestamp, last_ms=ts_ms(h.timestamp))
    return st, pos


def extract(
    data: bytes,
    pos: int,
    st: FileState,
    *,
    days: Days | None = None,
    docs: bool = True,
    facts: bool = True,
    runs: bool = True,
    doc_lines: set[int] | None = None,
) -> Chunk:
    """Read the lines of ``data`` from ``pos`` (a line start after the header).

    ``doc_lines``: only make documents for lines starting at these offsets (a scan that
    already knows where its keyword can be)."""
    days = days or Days()
    out = Chunk(end=pos)
    n = len(data)
    find = data.find
    relevant = F.RELEVANT.match
    ids = st.ids
    sstate = st.stats
    rstate = st.runs
    fx = out.facts
    version = st.version
    message_ts: list[Any] = []  # timestamps of message lines: the last parseable one is last_ms
    while pos < n:
        e = find(b"\n", pos)
        term = e >= 0
        end = e if term else n
        nxt = e + 1 if term else n
        line = data[pos:end]
        if not line.strip():
            if not term:
                break
            pos = nxt
            continue
        want_text = docs and (doc_lines is None or pos in doc_lines)
        try:
            obj: Any = L.decode(line, with_text=want_text or runs)
        except L.DecodeError:
            if not term:
                break  # a write in progress
            st.damaged += 1
            pos = nxt
            continue
        if facts and relevant(data, pos - 1):
            F.handle(line, sstate, fx, days)
        if obj is L.NOT_OBJECT:
            st.damaged += 1
            pos = nxt
            continue
        t = obj.type
        if t == "message":
            message_ts.append(obj.timestamp)
        if t == "session":
            st.damaged += 1
        elif t == "leaf" and L.leaf_line_ok(obj):
            target = obj.target_id
            if target is None:
                st.leaf = 0
            elif target in ids:
                st.leaf = ids[target]
            else:
                st.damaged += 1
        else:
            eid = obj.id
            parent = obj.parent_id if isinstance(obj.parent_id, str) else None
            if version < 2 and eid is L.UNSET:
                st.v1 += 1
                eid = f"{st.v1:08x}"
                pk = st.leaf
            elif not isinstance(eid, str) or (not eid and not L.typed_entry_ok(line)):
                st.damaged += 1
                pos = nxt
                continue
            else:
                pk = 0 if parent is None else ids.get(parent, st.k)
            if eid in ids:
                st.damaged += 1
                pos = nxt
                continue
            st.k += 1
            k = st.k
            ids[eid] = k
            st.leaf = k
            out.parents.append(pk)
            out.offs.append(pos)
            out.lens.append(end - pos)
            if t == "message":
                role = L.role_of(obj)
                if role == "user":
                    um = L.user_message(line, version)
                    if um is not None:
                        st.n += 1
                        out.users.append(k)
                        if want_text:
                            text = L.user_doc(um)
                            if text:
                                out.docs.append((k, 0, L.ROLE_USER, text))
                elif isinstance(obj, L.DLine) and obj.message is not None:
                    if want_text:
                        for part, r, text in L.message_docs(obj.message):
                            out.docs.append((k, part, r, text))
                    if runs and role == "assistant" and rstate.open is not None:
                        step = step_of(rstate, k, eid, obj.timestamp, obj.message, out.runs)
                        if step is not None:
                            out.steps.append(step)
            elif runs and t == "custom" and b'"ama.run"' in line:
                rec = record_of(line)
                if rec is not None:
                    apply_record(rstate, rec, k, ts_ms(obj.timestamp), out.runs)
        pos = nxt
    for ts in reversed(message_ts):
        ms = ts_ms(ts)
        if ms:
            st.last_ms = ms
            break
    out.end = pos
    return out


def last_message_ms(data: bytes | Any, lo: int, hi: int) -> int:
    """The order key's update from the lines in ``data[lo:hi]``: the timestamp of the last
    line that decodes as a ``message``, or 0.  Reads backwards, so it usually parses one
    line (the same lines :func:`extract` takes its ``last_ms`` from)."""
    end = hi
    while end > lo:
        nl = data.rfind(b"\n", lo, end)
        s = nl + 1 if nl >= 0 else lo
        line = bytes(data[s:end])
        if line.strip():
            try:
                obj = L.decode(line, with_text=False)
            except L.DecodeError:
                obj = L.NOT_OBJECT
            if obj is not L.NOT_OBJECT and obj.type == "message":
                ms = ts_ms(obj.timestamp)
                if ms:
                    return ms
        end = nl if nl >= 0 else lo
    return 0
