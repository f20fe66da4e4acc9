"""A small server-sent events parser (the WHATWG ``text/event-stream`` rules we need).

Lines end in LF, CR or CRLF; ``event:`` names the event, ``data:`` lines are joined with
LF, a line starting with ``:`` is a comment, an empty line dispatches.  ``id`` and
``retry`` are ignored.  A pending event at end of input is dispatched too (lenient).
"""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterable, AsyncIterator


async def iter_sse(chunks: AsyncIterable[bytes]) -> AsyncIterator[tuple[str, str]]:
    """Yield ``(event, data)`` pairs; ``event`` defaults to ``"message"``."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    buf = ""
    event, data = "", list[str]()
    async for chunk in chunks:
        buf += decoder.decode(chunk)
        pos = 0
        while True:
            n = buf.find("\n", pos)
            r = buf.find("\r", pos, n if n >= 0 else len(buf))
            if n < 0 and (r < 0 or r == len(buf) - 1):  # a CR at the end may be half a CRLF
                break
            cut = r if r >= 0 else n
            line = buf[pos:cut]
            pos = cut + (2 if buf.startswith("\r\n", cut) else 1)
            if not line:
                if data:
                    yield event or "message", "\n".join(data)
                event, data = "", list[str]()
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if name == "event":
                event = value
            elif name == "data":
                data.append(value)
        buf = buf[pos:]
    buf += decoder.decode(b"", final=True)
    for line in buf.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        name, _, value = line.partition(":")
        if name == "data":
            data.append(value[1:] if value.startswith(" ") else value)
        elif name == "event":
            event = value[1:] if value.startswith(" ") else value
    if data:
        yield event or "message", "\n".join(data)
