"""The small HTTP/1.1 client (direct connections) and the httpx path (proxied), on real sockets."""

from __future__ import annotations

import asyncio
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ama.ai import http11
from ama.ai.http import proxy_configured, ssl_context


async def serve(handler, connections: list) -> tuple[asyncio.AbstractServer, int]:
    async def on_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                body = await reader.readexactly(length)
                keep = await handler(head, body, writer)
                await writer.drain()
                if not keep:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    server = await asyncio.start_server(on_conn, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def fetch(port: int, body: bytes = b"{}") -> tuple[int, dict, bytes]:
    resp = await http11.request(
        "POST", f"http://127.0.0.1:{port}/v1/x?q=1", {"content-type": "application/json"}, body,
        tls=ssl_context, connect_timeout=5, read_timeout=5,
    )
    data = b"".join([c async for c in resp.aiter_bytes()])
    await resp.aclose()
    return resp.status_code, resp.headers, data


def test_content_length_chunked_and_close_delimited_bodies_and_keep_alive() -> None:
    seen: list[bytes] = []

    async def handler(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        seen.append(head.split(b"\r\n")[0] + b" " + body)
        n = len(seen)
        if n == 1:
            w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
            return True
        if n == 2:
            w.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: y\r\n\r\n")
            return True
        w.write(b"HTTP/1.1 429 Too Many\r\nRetry-After: 7\r\nConnection: close\r\n\r\nslow down")
        return False

    async def go():
        conns: list = []
        server, port = await serve(handler, conns)
        async with server:
            r1 = await fetch(port, b'{"a":1}')
            r2 = await fetch(port)
            r3 = await fetch(port)
        return r1, r2, r3, len(conns)

    r1, r2, r3, n_conns = asyncio.run(go())
    assert r1[0] == 200 and r1[2] == b"hello"
    assert r2[2] == b"abcde"
    assert r3[0] == 429 and r3[1]["retry-after"] == "7" and r3[2] == b"slow down"
    assert n_conns == 1  # one kept-alive connection served all three
    assert seen[0] == b'POST /v1/x?q=1 HTTP/1.1 {"a":1}'


def test_stale_keep_alive_connection_is_replaced_transparently() -> None:
    count = 0

    async def handler(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        nonlocal count
        count += 1
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        return False  # close after answering, without saying so

    async def go():
        conns: list = []
        server, port = await serve(handler, conns)
        async with server:
            a = await fetch(port)
            await asyncio.sleep(0.05)
            b = await fetch(port)
        return a, b, len(conns)

    a, b, n = asyncio.run(go())
    assert a[2] == b"ok" == b[2] and n == 2 and count == 2


def test_body_cut_mid_stream_and_refused_connection_raise_http_errors() -> None:
    async def handler(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
        return False

    async def go():
        conns: list = []
        server, port = await serve(handler, conns)
        async with server:
            with pytest.raises(http11.HttpError) as cut:
                await fetch(port)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            free = s.getsockname()[1]
        with pytest.raises(http11.HttpError) as refused:
            await fetch(free)
        return cut.value, refused.value

    cut, refused = asyncio.run(go())
    assert cut.kind == "closed" and refused.kind == "connect"


def test_read_timeout() -> None:
    async def handler(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(2)
        return False

    async def go():
        conns: list = []
        server, port = await serve(handler, conns)
        async with server:
            with pytest.raises(http11.HttpError) as err:
                await http11.request("POST", f"http://127.0.0.1:{port}/", {}, b"", tls=ssl_context, connect_timeout=5, read_timeout=0.2)
        return err.value

    assert asyncio.run(go()).kind == "timeout"


def test_proxy_detection_and_requests_through_a_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """With HTTP_PROXY set, requests go through the proxy (httpx path); NO_PROXY bypasses it."""
    from ama.ai import Context, Model, StreamOptions, complete
    from ama.messages import UserMessage

    class Upstream(BaseHTTPRequestHandler):
        def log_message(self, *a): pass

        def do_POST(self):
            self.rfile.read(int(self.headers["content-length"]))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            chunk = b'data: {"choices":[{"index":0,"delta":{"content":"via proxy"},"finish_reason":"stop"}]}\n\n'
            self.wfile.write(chunk + b"data: [DONE]\n\n")

    proxied: list[str] = []

    class Proxy(BaseHTTPRequestHandler):
        def log_message(self, *a): pass

        def do_POST(self):  # absolute-form request: forward it
            import urllib.request

            proxied.append(self.path)
            body = self.rfile.read(int(self.headers["content-length"]))
            req = urllib.request.Request(self.path, data=body, headers={"content-type": "application/json"})
            with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req) as r:
                data = r.read()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    servers = [ThreadingHTTPServer(("127.0.0.1", 0), h) for h in (Upstream, Proxy)]
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    up, px = (s.server_address[1] for s in servers)
    try:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{px}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        url = f"http://127.0.0.1:{up}/v1"
        assert proxy_configured(url + "/chat/completions")
        model = Model("local", "m", "openai-completions", url, 1000, 100, None)
        ctx = Context(system_prompt="", messages=[UserMessage(content="hi")], tools=[])
        msg = asyncio.run(complete(model, ctx, StreamOptions(api_key="x")))
        assert msg.content[0].text == "via proxy" and proxied and proxied[0].startswith(url)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert not proxy_configured(url)
    finally:
        for s in servers:
            s.shutdown()
