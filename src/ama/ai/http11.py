"""A small HTTP/1.1 client on asyncio streams, for streaming POST requests to model APIs.

Why not httpx here: on asyncio, httpx needs httpcore and anyio, about 110 ms of imports per
process, more than the rest of a one-reply ``ama -p``.  This client does exactly what the
providers need: one request per connection at a time, ``Content-Length`` request bodies,
responses with ``Content-Length``, chunked encoding or read-to-close, no compression, TLS
through the standard library, idle connections kept per loop for the next turn.  Requests
through a proxy (``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``ALL_PROXY``) use httpx instead (see
``http.py``).
"""

from __future__ import annotations

import asyncio
import ssl
import weakref
from collections.abc import AsyncIterator, Callable
from urllib.parse import urlsplit

MAX_HEADER_BYTES = 64 * 1024


class HttpError(Exception):
    """A transport failure: ``kind`` is ``connect``, ``timeout``, ``protocol`` or ``closed``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class _Conn:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def close(self) -> None:
        try:
            self.writer.close()
        except Exception:
            pass


# idle keep-alive connections per event loop: (scheme, host, port) -> connections
_idle: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str, int], list[_Conn]]] = (
    weakref.WeakKeyDictionary()
)


class Response:
    def __init__(self, conn: _Conn, status: int, headers: dict[str, str], key: tuple[str, str, int], read_timeout: float) -> None:
        self._conn: _Conn | None = conn
        self.status_code = status
        self.headers = headers  # lower-case names
        self._key = key
        self._timeout = read_timeout
        self._done = False

    async def _read(self, coro: object) -> bytes:
        try:
            return await asyncio.wait_for(coro, self._timeout)  # type: ignore[arg-type]
        except TimeoutError:
            raise HttpError("timeout", f"no data for {self._timeout:g}s") from None
        except asyncio.IncompleteReadError:
            raise HttpError("closed", "the connection closed before the response ended") from None
        except (ConnectionError, OSError) as e:
            raise HttpError("closed", f"connection lost: {e}") from None

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        conn = self._conn
        assert conn is not None
        r = conn.reader
        te = self.headers.get("transfer-encoding", "").lower()
        if "chunked" in te:
            while True:
                line = await self._read(r.readuntil(b"\r\n"))
                try:
                    size = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise HttpError("protocol", f"bad chunk size line {line[:40]!r}") from None
                if size == 0:
                    while (await self._read(r.readuntil(b"\r\n"))) != b"\r\n":
                        pass  # trailers
                    break
                data = await self._read(r.readexactly(size + 2))
                yield data[:-2]
        elif "content-length" in self.headers:
            left = int(self.headers["content-length"])
            while left > 0:
                data = await self._read(r.read(min(left, 65536)))
                if not data:
                    raise HttpError("closed", "the connection closed before the response ended")
                left -= len(data)
                yield data
        else:
            while True:
                data = await self._read(r.read(65536))
                if not data:
                    break
                yield data
            self.headers["connection"] = "close"
        self._done = True

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        reusable = self._done and self.headers.get("connection", "").lower() != "close"
        if reusable:
            _idle.setdefault(asyncio.get_running_loop(), {}).setdefault(self._key, []).append(conn)
        else:
            conn.close()


async def _connect(
    scheme: str, host: str, port: int, tls: Callable[[], ssl.SSLContext], timeout: float, *, reuse: bool = True
) -> tuple[_Conn, bool]:
    """A connection (an idle kept-alive one when ``reuse``) and whether it was reused."""
    pool = _idle.get(asyncio.get_running_loop(), {}).get((scheme, host, port)) if reuse else None
    while pool:
        conn = pool.pop()
        if not conn.reader.at_eof() and not conn.writer.is_closing():
            return conn, True
        conn.close()
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, ssl=tls() if scheme == "https" else None, limit=MAX_HEADER_BYTES),
            timeout,
        )
    except TimeoutError:
        raise HttpError("timeout", f"connecting to {host}:{port} timed out after {timeout:g}s") from None
    except (OSError, ssl.SSLError) as e:
        raise HttpError("connect", f"cannot connect to {host}:{port}: {e}") from None
    return _Conn(reader, writer), False


async def request(
    method: str,
    url: str,
    headers: dict[str, str],
    body: bytes,
    *,
    tls: Callable[[], ssl.SSLContext],
    connect_timeout: float,
    read_timeout: float,
) -> Response:
    """Send a request and read the status line and headers; the body streams from the result."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise HttpError("protocol", f"unsupported URL {url!r}")
    host = parts.hostname
    port = parts.port or (443 if scheme == "https" else 80)
    key = (scheme, host, port)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host_header = host if parts.port is None else f"{host}:{port}"
    if ":" in host and not host.startswith("["):
        host_header = f"[{host}]" + ("" if parts.port is None else f":{port}")
    lines = [f"{method} {target} HTTP/1.1", f"host: {host_header}", f"content-length: {len(body)}", "accept-encoding: identity"]
    lines += [f"{k}: {v}" for k, v in headers.items() if k.lower() not in ("host", "content-length", "accept-encoding")]
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    for attempt in (1, 2):
        conn, reused = await _connect(scheme, host, port, tls, connect_timeout, reuse=attempt == 1)
        try:
            conn.writer.write(head + body)
            await asyncio.wait_for(conn.writer.drain(), read_timeout)
            status_line = await asyncio.wait_for(conn.reader.readuntil(b"\r\n"), read_timeout)
            raw_headers = await asyncio.wait_for(conn.reader.readuntil(b"\r\n\r\n"), read_timeout)
        except (asyncio.IncompleteReadError, ConnectionError) as e:
            conn.close()
            if reused:
                # a kept-alive connection the server had closed meanwhile: retry on a new one
                continue
            raise HttpError("closed", f"the connection closed before the response: {e}") from None
        except TimeoutError:
            conn.close()
            raise HttpError("timeout", f"no response for {read_timeout:g}s") from None
        except asyncio.LimitOverrunError:
            conn.close()
            raise HttpError("protocol", "response headers too large") from None
        except OSError as e:
            conn.close()
            raise HttpError("closed", f"connection lost: {e}") from None
        break
    try:
        _version, code, *_ = status_line.decode("latin-1").split(" ", 2)
        status = int(code)
    except ValueError:
        conn.close()
        raise HttpError("protocol", f"bad status line {status_line[:60]!r}") from None
    hdrs: dict[str, str] = {}
    for line in raw_headers.decode("latin-1").split("\r\n"):
        if ":" in line:
            name, _, value = line.partition(":")
            name = name.strip().lower()
            hdrs[name] = f"{hdrs[name]}, {value.strip()}" if name in hdrs else value.strip()
    return Response(conn, status, hdrs, key, read_timeout)


async def close_idle() -> None:
    loop = asyncio.get_running_loop()
    for conns in _idle.pop(loop, {}).values():
        for c in conns:
            c.close()
