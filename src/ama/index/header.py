"""The session header at the start of a file's bytes: what the index's extraction and the
cold stats scan both read first.  Light (msgspec and the entry types), so that a cold
``ama stats`` can use it without the extraction's imports."""

from __future__ import annotations

import msgspec

from ama.index.fact_shapes import DECODE_ERRORS
from ama.session.entries import SessionHeader

_decoder = msgspec.json.Decoder(SessionHeader)


def first_header(data: bytes) -> tuple[SessionHeader | bool | None, int]:
    """``(header, position after its line)`` from the first line that is not blank;
    ``(None, len(data))`` when that line is complete but not a header (the file is
    damaged), ``(False, 0)`` when there is no complete header yet (an empty file, blank
    lines, or a header still being written: a shape error too, since an unfinished header
    may look like one)."""
    pos, n = 0, len(data)
    while pos < n:
        e = data.find(b"\n", pos)
        end = n if e < 0 else e
        line = data[pos:end]
        if line.strip():
            try:
                h = _decoder.decode(line)
            except DECODE_ERRORS:
                return (False, 0) if e < 0 else (None, n)
            return h, (n if e < 0 else e + 1)
        if e < 0:
            break
        pos = e + 1
    return False, 0
