"""stdin in the event loop, line by line, whatever it is: a pipe, a socket, a terminal, a
regular file, ``/dev/null``, or closed (and stdout, for the protocol's writer, likewise).

Lines are split on ``\\n`` as ``rpc/jsonl.py`` describes; a line over ``MAX_LINE_BYTES`` is
skipped to its newline and yielded as a ``TooLarge`` carrying the id the scan of its bytes found.
The bytes the start-up already read (``rpc/start.py``) are handed in as ``prefix`` and come first.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator
from typing import Any

from ama.rpc.jsonl import MAX_LINE_BYTES, IdScanner, TooLarge, scan_line

_CHUNK = 64 * 1024


class _FileTransport(asyncio.ReadTransport):
    """Reads a regular file or a character device (``/dev/null``) into a protocol.

    Such files cannot be watched by the event loop (epoll refuses them) and never block for
    long, so they are read in the loop, one chunk per iteration, honouring the reader's
    back-pressure (``pause_reading``).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int, protocol: asyncio.Protocol) -> None:
        super().__init__()
        self._loop = loop
        self._fd = fd
        self._protocol = protocol
        self._paused = False
        self._closed = False
        self._scheduled = False
        protocol.connection_made(self)
        self._schedule()

    def _schedule(self) -> None:
        if not self._scheduled and not self._paused and not self._closed:
            self._scheduled = True
            self._loop.call_soon(self._pump)

    def _pump(self) -> None:
        self._scheduled = False
        if self._paused or self._closed:
            return
        try:
            data = os.read(self._fd, _CHUNK)
        except OSError as exc:
            self._closed = True
            self._protocol.connection_lost(exc)
            return
        if not data:
            self._closed = True
            self._protocol.eof_received()
            self._protocol.connection_lost(None)
            return
        self._protocol.data_received(data)
        self._schedule()

    def pause_reading(self) -> None:
        self._paused = True

    def resume_reading(self) -> None:
        self._paused = False
        self._schedule()

    def is_reading(self) -> bool:
        return not self._paused and not self._closed

    def close(self) -> None:
        self._closed = True

    def is_closing(self) -> bool:
        return self._closed


async def open_reader(
    fd: int | None, limit: int = MAX_LINE_BYTES, *, prefix: bytes = b"", at_eof: bool = False
) -> asyncio.StreamReader:
    """A StreamReader over ``fd`` whatever it is: pipe, socket, terminal, file, /dev/null;
    None (stdin closed, ``<&-``) reads as an empty input.  ``prefix``: bytes already read
    from ``fd``, read first; ``at_eof``: ``fd`` has already reached its end."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit + 1)
    protocol = asyncio.StreamReaderProtocol(reader)
    if prefix:
        reader.feed_data(prefix)
    try:
        if fd is None or at_eof:
            raise OSError("no stdin")
        mode = os.fstat(fd).st_mode
    except OSError:
        reader.feed_eof()
        return reader
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd):
        await loop.connect_read_pipe(lambda: protocol, os.fdopen(fd, "rb", buffering=0, closefd=False))
    else:
        _FileTransport(loop, fd, protocol)
    return reader


class _FileWriteTransport(asyncio.WriteTransport):
    """Writes to a regular file (``> replies.jsonl``), which the event loop cannot watch:
    each write goes to the file at once (a full disk raises from ``write``)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def can_write_eof(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0

    def close(self) -> None:
        self._closed = True

    def is_closing(self) -> bool:
        return self._closed

    def abort(self) -> None:
        self._closed = True


async def open_writer(fd: int) -> asyncio.StreamWriter:
    """A StreamWriter over ``fd`` whatever it is: a pipe, socket, terminal or other device
    through the event loop, a regular file directly."""
    loop = asyncio.get_running_loop()
    mode = os.fstat(fd).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode):
        out = os.fdopen(fd, "wb", buffering=0, closefd=False)
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out)
        return asyncio.StreamWriter(transport, protocol, None, loop)
    return asyncio.StreamWriter(_FileWriteTransport(fd), asyncio.streams.FlowControlMixin(loop), None, loop)


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
            scan = IdScanner()
            scan.feed(await reader.readexactly(e.consumed))
            while True:  # discard the rest of the line, scanning it for the id
                try:
                    scan.feed(await reader.readuntil(b"\n"))
                    break
                except asyncio.LimitOverrunError as e2:
                    scan.feed(await reader.readexactly(e2.consumed))
                except asyncio.IncompleteReadError as e3:
                    scan.feed(e3.partial)
                    scan.feed(b"")
                    yield TooLarge(scan.result, scan.command)
                    return
            scan.feed(b"")
            yield TooLarge(scan.result, scan.command)
            continue
        if len(line) > limit + 1:
            scan = scan_line(line)
            yield TooLarge(scan.result, scan.command)
            continue
        yield line[:-1].rstrip(b"\r")


