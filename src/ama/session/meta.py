"""Catalog metadata of a session file (seed 002): errors, a pending interaction, task status.

One function, :func:`derive`, computes them from a file's bytes for every path that lists
sessions: the catalog scan and the SQLite index both store what
``ama.session.summary.summarize_bytes`` returns, and that calls this.  It reads only the
few lines that matter, found by byte patterns (any JSON spacing: compact as ama and pi write
it, or spaced as Python's ``json`` does) and then decoded whole (a pattern inside a string -- where quotes are escaped -- never matches,
and one in a tool call's arguments is told apart by the decoded line):

* ``errorCount``: assistant messages with ``stopReason: "error"`` in the file (every
  branch: an error stays part of the session's history after a rewind);
* ``pendingInteraction``: ``"approval"`` when the latest ``ama.pending_approval`` record is
  still open, else ``"tool_result"`` when the file's last message is an assistant message
  whose tool calls never got results (the run stopped while a call -- typically its
  approval -- was unanswered), else None;
* ``taskStatus``: the status of the latest ``ama.run`` record, lower-case (``running``,
  ``completed``, ``failed``, ``cancelled``); a session without run records reads as
  ``completed`` (the seed's default for legacy transcripts).  A ``running`` status left by
  a dead process is told apart by the reader that can check the lease (``sessions list``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import msgspec

from ama.messages import AssistantMessage
from ama.session.entries import CustomEntry, MessageEntry, UnknownEntry
from ama.session.reader import DECODE_ERRORS

RUN_TYPE = "ama.run"
APPROVAL_TYPE = "ama.pending_approval"


class _Msg(msgspec.Struct, rename="camel"):
    role: Any = None
    stop_reason: Any = None


class _Line(msgspec.Struct, rename="camel"):
    type: Any = None
    message: _Msg | None = None
    custom_type: Any = None
    data: Any = None


_dec = msgspec.json.Decoder(_Line)
#: any JSON spacing (compact as ama and pi write it, or Python's ``json`` default)
_ERROR = re.compile(rb'"stopReason"\s*:\s*"error"')
_MESSAGE = re.compile(rb'"type"\s*:\s*"message"')


@dataclass
class Meta:
    error_count: int = 0
    pending_interaction: str | None = None
    task_status: str = "completed"


def _line_around(data: bytes, pos: int) -> bytes:
    start = data.rfind(b"\n", 0, pos) + 1
    end = data.find(b"\n", pos)
    return data[start : len(data) if end < 0 else end]


def _decode(line: bytes | memoryview) -> _Line | None:
    try:
        return _dec.decode(line)
    except DECODE_ERRORS:
        return None


def _latest_custom(data: bytes, custom_type: str) -> Any:
    """The ``data`` of the last ``custom`` entry of that type, or None."""
    mark = f'"{custom_type}"'.encode()
    pos = data.rfind(mark)
    while pos >= 0:
        e = _decode(_line_around(data, pos))
        if e is not None and e.type == "custom" and e.custom_type == custom_type:
            return e.data
        pos = data.rfind(mark, 0, pos)
    return None


def _last_message(data: bytes) -> _Msg | None:
    """The message of the file's last ``message`` line (read backwards, line by line)."""
    end = len(data)
    while end > 0:
        nl = data.rfind(b"\n", 0, end)
        line = data[nl + 1 : end]
        end = nl if nl >= 0 else 0
        if _MESSAGE.search(line) is None:
            continue
        e = _decode(line)
        if e is not None and e.type == "message" and e.message is not None:
            return e.message
    return None


def derive(data: bytes) -> Meta:
    """The metadata of one session file's bytes (at most three passes of a byte search)."""
    out = Meta()
    m = _ERROR.search(data)
    while m is not None:
        pos = m.start()
        line_end = data.find(b"\n", pos)
        e = _decode(_line_around(data, pos))
        msg = e.message if e is not None and e.type == "message" else None
        if msg is not None and msg.role == "assistant" and msg.stop_reason == "error":
            out.error_count += 1
        if line_end < 0:
            break
        m = _ERROR.search(data, line_end)
    return _conclude(out, _latest_custom(data, APPROVAL_TYPE), _latest_custom(data, RUN_TYPE), data)


def _conclude(out: Meta, approval: Any, run: Any, data: bytes) -> Meta:
    """``out`` completed from the latest approval and run records' data."""
    if isinstance(approval, dict) and not approval.get("resolved"):
        out.pending_interaction = "approval"
    else:
        last = _last_message(data)
        if last is not None and last.role == "assistant" and last.stop_reason == "toolUse":
            out.pending_interaction = "tool_result"
    if isinstance(run, dict) and isinstance(run.get("status"), str) and run["status"]:
        status = run["status"].lower()
        out.task_status = "running" if status == "created" else status
    return out


_MARKS = ((f'"{APPROVAL_TYPE}"'.encode(), APPROVAL_TYPE), (f'"{RUN_TYPE}"'.encode(), RUN_TYPE))


class MetaWalk:
    """:func:`derive` computed along the reader's walk over a file
    (:func:`ama.session.reader.iter_entries`), for a reader that reads every line anyway
    (``sessions show``): no pass of its own over the bytes.

    :meth:`line` does for one line what :func:`derive` does for each line its byte searches
    land in.  :meth:`entry` hands it only the lines that can matter: a line derive counts or
    takes is one whose plain decoding has ``type`` ``message`` with an assistant message
    ending in ``error``, or ``type`` ``custom`` with one of the two record types; the
    reader's typed decoding of that line reads the same keys (msgspec takes the last of
    repeated keys in both, and a repeated ``type`` or ``role`` that disagrees fails the
    typed decoding), so it gave such an entry -- or none, or an unknown one, which are
    looked at too.  The file's last message is found as derive finds it, from the end."""

    def __init__(self) -> None:
        self.meta = Meta()
        self.latest: dict[str, Any] = {}

    def line(self, line: bytes | memoryview) -> None:
        """Look at one line of the file (lines in file order)."""
        if _ERROR.search(line) is not None:
            e = _decode(line)
            msg = e.message if e is not None and e.type == "message" else None
            if msg is not None and msg.role == "assistant" and msg.stop_reason == "error":
                self.meta.error_count += 1
        raw = bytes(line)
        for mark, custom_type in _MARKS:
            if mark in raw:
                e = _decode(raw)
                if e is not None and e.type == "custom" and e.custom_type == custom_type:
                    self.latest[custom_type] = e.data

    def entry(self, entry: object, line: memoryview) -> None:
        """The reader's next line and what it read there (None: not an entry)."""
        cls = entry.__class__
        if cls is MessageEntry:
            m = entry.message  # type: ignore[attr-defined]
            if m.__class__ is AssistantMessage and m.stop_reason == "error":
                self.line(line)
        elif cls is CustomEntry:
            if entry.custom_type in (APPROVAL_TYPE, RUN_TYPE):  # type: ignore[attr-defined]
                self.line(line)
        elif entry is None or cls is UnknownEntry:
            self.line(line)

    def done(self, data: bytes) -> Meta:
        """The metadata, once every line was seen (``data``: the file's bytes, read from the
        end for the last message)."""
        return _conclude(self.meta, self.latest.get(APPROVAL_TYPE), self.latest.get(RUN_TYPE), data)
