"""A local model server that streams slowly (127.0.0.1, OS-chosen port), for the tmux tests.

It speaks the OpenAI chat-completions wire API.  Each request is answered by the next
:class:`Turn`: text chunks sent one by one with ``delay`` seconds between them (and the
last chunk held back until :meth:`SlowServer.release` when ``hold`` is set, so a test can
look at the screen while the reply is certainly unfinished), optional thinking chunks
(``reasoning_content``) first, or a tool call.  Requests without tools (summaries) get a
fixed summary text.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Turn:
    chunks: list[str] = field(default_factory=list)
    delay: float = 0.0
    hold: bool = False
    thinking: list[str] = field(default_factory=list)
    tool: tuple[str, dict[str, Any]] | None = None


class SlowServer:
    def __init__(self, turns: list[Turn]) -> None:
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []
        self.released = threading.Event()
        #: summary requests wait for :meth:`release` (a test cancels a compaction meanwhile)
        self.hold_summaries = False
        srv = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                srv.answer(self, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def provider(self) -> dict[str, Any]:
        return {
            "api": "openai-completions",
            "baseUrl": f"http://127.0.0.1:{self.httpd.server_address[1]}/v1",
            "apiKey": "k",
            "models": [{"id": "m", "contextWindow": 100_000, "maxTokens": 1000}],
        }

    def release(self) -> None:
        self.released.set()

    def close(self) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        self.requests.append(body)
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("transfer-encoding", "chunked")
        h.end_headers()

        def send(obj: dict[str, Any] | str) -> None:
            data = ("data: " + (obj if isinstance(obj, str) else json.dumps(obj)) + "\n\n").encode()
            h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            h.wfile.flush()

        def delta(d: dict[str, Any], finish: str | None = None) -> None:
            send({"choices": [{"index": 0, "delta": d, "finish_reason": finish}]})

        try:
            if not body.get("tools"):
                turn = Turn(["Summary: ", "the user asked for things."], hold=self.hold_summaries)
            else:
                turn = self.turns.pop(0) if self.turns else Turn(["(no more turns)"])
            for t in turn.thinking:
                delta({"reasoning_content": t})
                time.sleep(turn.delay)
            if turn.tool is not None:
                name, args = turn.tool
                n = len(self.requests)
                call = {"index": 0, "id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                delta({"tool_calls": [call]}, "tool_calls")
            else:
                for i, c in enumerate(turn.chunks):
                    if turn.hold and i == len(turn.chunks) - 1:
                        self.released.wait(60)
                    delta({"content": c})
                    if i < len(turn.chunks) - 1:
                        time.sleep(turn.delay)
                delta({}, "stop")
            send({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
            send("[DONE]")
            h.wfile.write(b"0\r\n\r\n")
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client aborted the request
            pass
