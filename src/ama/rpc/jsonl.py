"""LF-delimited JSON lines, both ways.

Input lines are split on ``\\n`` only (a ``\\r`` before it is dropped); a line longer than
``MAX_LINE_BYTES`` is not buffered whole: it is skipped up to its newline and reported as
a ``TooLarge`` so the stream goes on.  Output is one compact JSON object per line.

Reading stdin in the event loop (a pipe, a socket, a terminal, a regular file or
``/dev/null``) is ``rpc/stdin.py``; this module needs no event loop, so the start-up
(``rpc/start.py``) answers its first lines before ``asyncio`` is imported.

A line that does not parse still gets its request id when one can be seen: :class:`IdScanner`
follows the JSON structure of the raw bytes (strings, nesting; no decoding, constant memory)
and picks the values of the top-level ``"id"`` and ``"type"`` members, also when it comes after the first
4 MiB of a too-large line.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

MAX_LINE_BYTES = 4 * 1024 * 1024
#: an id longer than this (in bytes, as written) is not recovered from a broken line
MAX_ID_BYTES = 200


class TooLarge:
    """Yielded for a line over the limit; ``id`` and ``command`` (its ``type``) are what the
    scan of the line found (None when nothing could be found)."""

    def __init__(self, rid: Any, command: str | None = None) -> None:
        self.id = rid
        self.command = command


# --- request ids of lines that do not parse ------------------------------------------------

_NEXT = re.compile(rb'["{}\[\]:,]')
_STRING_END = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_SPACE = re.compile(rb"[ \t\r\n]*")
_NUMBER = re.compile(rb"-?[0-9]*")


class IdScanner:
    """Find the top-level ``"id"`` and ``"type"`` of a JSON object line fed in chunks, without
    decoding it.

    Feed the line's bytes in order, then ``feed(b"")`` at its end.  ``result`` is the id (a str
    of at most ``MAX_ID_BYTES`` bytes of valid UTF-8, or an integer of at most 18 digits) and
    ``command`` the ``type`` (such a str), else None.  The scan stops (``done``) once both
    were seen, at the end of the top-level object, or at a structural error.
    """

    _WANTED = (b"id", b"type")

    def __init__(self) -> None:
        self.found: dict[bytes, Any] = {}
        self.done = False
        self._started = False
        self._depth = 0
        self._in_string = False
        self._string = bytearray()  # the current depth-1 string, while it is short
        self._string_long = False
        self._expect_key = False  # depth 1, after '{' or ','
        self._key: bytes | None = None  # the depth-1 key whose value comes next
        self._want: bytes | None = None  # a wanted key whose value comes next
        self._carry = b""

    @property
    def result(self) -> Any:
        return self.found.get(b"id")

    @property
    def command(self) -> str | None:
        return self.found.get(b"type")

    def _got(self, key: bytes, value: Any) -> None:
        self._want = None
        self.found.setdefault(key, value)
        if all(k in self.found for k in self._WANTED):
            self.done = True

    def feed(self, chunk: bytes) -> None:
        if self.done:
            return
        end = not chunk
        data = self._carry + chunk
        self._carry = b""
        pos, n = 0, len(data)
        while pos < n and not self.done:
            if self._in_string:
                m = _STRING_END.match(data, pos)
                if m is None:  # the string goes on in the next chunk
                    rest = data[pos:]
                    if (len(rest) - len(rest.rstrip(b"\\"))) % 2:  # keep a split escape whole
                        rest, self._carry = rest[:-1], rest[-1:]
                    self._keep(rest)
                    return
                self._keep(data[pos : m.end() - 1])
                pos = m.end()
                self._in_string = False
                self._string_done()
                continue
            if self._want is not None:
                pos = _SPACE.match(data, pos).end()  # type: ignore[union-attr]
                if pos == n:
                    return
                if data[pos : pos + 1] != b'"':
                    num = _NUMBER.match(data, pos).group()  # type: ignore[union-attr]
                    if num and pos + len(num) == n and not end:  # the number may go on
                        self._carry = num
                        return
                    digits = num.lstrip(b"-")
                    after = data[pos + len(num) : pos + len(num) + 1]
                    ok = self._want == b"id" and digits and len(digits) <= 18 and after in b" \t\r\n,}"
                    self._got(self._want, int(num) if ok else None)
                    pos += len(num)
                    continue  # an object or array value is walked as usual
            m = _NEXT.search(data, pos)
            if m is None:
                return
            c = m.group()
            if not self._started:
                if c != b"{" or data[pos : m.start()].strip():
                    self.done = True  # not an object
                    return
                self._started = True
            pos = m.end()
            if c == b'"':
                self._in_string = True
                self._string = bytearray()
                self._string_long = False
            elif c in b"{[":
                self._depth += 1
                self._expect_key = self._depth == 1
            elif c in b"}]":
                self._depth -= 1
                if self._depth <= 0:
                    self.done = True
                    return
            elif self._depth == 1 and c == b",":
                self._expect_key = True
                self._key = None
            elif self._depth == 1 and c == b":":
                if self._key in self._WANTED and self._key not in self.found:
                    self._want = self._key
                self._key = None

    def _keep(self, part: bytes) -> None:
        if self._depth != 1 or self._string_long:
            return
        if len(self._string) + len(part) > MAX_ID_BYTES * 6:  # \\uXXXX escapes take 6 bytes
            self._string_long = True
            self._string = bytearray()
        else:
            self._string += part

    def _string_done(self) -> None:
        if self._depth != 1:
            return
        text = None if self._string_long else bytes(self._string)
        if self._expect_key:
            self._key = text
            self._expect_key = False
            return
        if self._want is not None:
            try:
                value = json.loads(b'"' + text + b'"') if text is not None else None
            except ValueError:  # invalid UTF-8 or a bad escape inside the value itself
                value = None
            ok = isinstance(value, str) and len(value.encode()) <= MAX_ID_BYTES
            self._got(self._want, value if ok else None)


def scan_line(raw: bytes) -> IdScanner:
    """The scan of a whole line that did not parse."""
    scan = IdScanner()
    scan.feed(raw)
    scan.feed(b"")
    return scan


def sniff_id(raw: bytes) -> Any:
    """The request id of a line that did not parse, if its bytes show one."""
    return scan_line(raw).result


class RawJSON:
    """A value that is JSON text already (the concatenation of ``parts``, UTF-8), written
    where the value stands by :func:`dump_parts`: a large answer (``get_messages`` of a long
    session) is encoded once, straight from its structs, and never joined into one copy."""

    __slots__ = ("parts",)

    def __init__(self, parts: list[bytes]) -> None:
        self.parts = parts


def dumps(obj: Any) -> bytes:
    """One output line: ``obj`` as compact JSON and a newline."""
    return b"".join(dump_parts(obj))


def dump_parts(obj: Any) -> list[bytes]:
    """:func:`dumps` in parts (the bytes of each :class:`RawJSON` as they are, between the
    encoded rest), for a writer that need not join them."""
    raws: list[list[bytes]] = []
    mark = ""

    def raw(o: Any) -> str:
        nonlocal mark
        if not isinstance(o, RawJSON):
            raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")
        if not mark:  # a string no other value of the line holds (a random part)
            mark = f"\x00raw-{os.urandom(8).hex()}\x00"
        raws.append(o.parts)
        return mark

    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=raw)
    if not raws:
        return [text.encode() + b"\n"]
    pieces = text.split(json.dumps(mark))
    out = [pieces[0].encode()]
    for parts, piece in zip(raws, pieces[1:], strict=True):
        out += parts
        out.append(piece.encode())
    out.append(b"\n")
    return out
