"""A local HTTP server for adapter tests: replays queued responses, records requests.

Real sockets on 127.0.0.1, stdlib only.  Each queued :class:`Reply` is served to the next
POST; the request (path, headers, body bytes) is recorded.  A reply can stream its body in
chunks (chunked transfer encoding), drop the connection mid-body, or hang after its chunks
until released (for abort tests).
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def split_events(raw: bytes) -> list[bytes]:
    """SSE bytes cut at event boundaries (each chunk one event)."""
    parts = raw.replace(b"\r\n", b"\n").split(b"\n\n")
    return [p + b"\n\n" for p in parts if p.strip()]


def split_every(raw: bytes, size: int) -> list[bytes]:
    return [raw[i : i + size] for i in range(0, len(raw), size)]


@dataclass
class Reply:
    status: int = 200
    chunks: list[bytes] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    drop_after: int | None = None  # close the socket after this many chunks, body unfinished
    hang_after: int | None = None  # stop sending after this many chunks until released
    delay: float = 0.0  # chunk n is sent n * delay seconds after the first (a known stream rate)


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: bytes


class LocalServer:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[Request] = []
        self.release = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                with server._lock:
                    server.requests.append(
                        Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                    reply = server.replies.pop(0) if server.replies else Reply(status=500, chunks=[b"no reply queued"])
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for n, chunk in enumerate(reply.chunks):
                    if reply.drop_after is not None and n >= reply.drop_after:
                        self.wfile.flush()
                        self.connection.shutdown(socket.SHUT_RDWR)
                        self.close_connection = True
                        return
                    if reply.hang_after is not None and n >= reply.hang_after:
                        self.wfile.flush()
                        server.release.wait(10)
                        self.close_connection = True
                        return
                    if n == 0:
                        began = time.monotonic()
                    elif reply.delay:  # on a schedule, so that write times do not add up
                        time.sleep(max(0.0, began + n * reply.delay - time.monotonic()))
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                if reply.drop_after is not None:
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: object, client_address: object) -> None:
                pass  # clients closing kept-alive connections are not errors here

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self) -> LocalServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def reset(self) -> None:
        with self._lock:
            self.replies.clear()
            self.requests.clear()
        self.release.clear()

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)
