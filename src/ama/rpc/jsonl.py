"""LF-delimited JSON lines, both ways.

Input lines are split on ``\\n`` only (a ``\\r`` before it is dropped); a line longer than
``MAX_LINE_BYTES`` is not buffered whole: it is skipped up to its newline and reported as
a ``TooLarge`` so the stream goes on.  Output is one compact JSON object per line.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

MAX_LINE_BYTES = 4 * 1024 * 1024


class TooLarge:
    """Yielded for a line over the limit; ``head`` is its first bytes (for the request id)."""

    def __init__(self, head: bytes) -> None:
        self.head = head

_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,18})')


async def read_lines(reader: asyncio.StreamReader, limit: int = MAX_LINE_BYTES) -> AsyncIterator[Any]:
    """Yield each line (bytes, without the newline) or a :class:`TooLarge`."""
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as e:
            if e.partial.strip():
                yield e.partial.rstrip(b"\r")
            return
        except asyncio.LimitOverrunError as e:
            head = (await reader.readexactly(e.consumed))[:4096]
            while True:  # discard the rest of the line
                try:
                    await reader.readuntil(b"\n")
                    break
                except asyncio.LimitOverrunError as e2:
                    await reader.readexactly(e2.consumed)
                except asyncio.IncompleteReadError:
                    return
            yield TooLarge(head)
            continue
        if len(line) > limit + 1:
            yield TooLarge(line[:4096])
            continue
        yield line[:-1].rstrip(b"\r")


def sniff_id(raw: bytes) -> Any:
    """The request id of a line that did not parse, if its text shows one."""
    m = _ID.search(raw)
    if not m:
        return None
    try:
        return json.loads(m.group(1))
    except ValueError:
        return None


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
