"""A local server playing the ``auto`` mode's permission classifier (127.0.0.1, port 0).

It speaks OpenAI ``/v1/chat/completions`` (streamed), counts and records every request, and
answers by ``behaviour``: ``"answer"`` (the text ``answer(prompt)`` returns), ``"500"``
(an HTTP 500), ``"hang"`` (no reply for ``hang_s`` seconds) or ``"garbage"`` (prose instead of
the JSON object).  Usage: 100 prompt tokens, 10 completion tokens per answer.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ALLOW = json.dumps({"decision": "allow", "reason": "a routine build step in the workspace"})
ASK = json.dumps({"decision": "ask", "reason": "this is not what the user asked for"})


class ClassifierServer:
    def __init__(self, answer: Callable[[str], str] = lambda _prompt: ALLOW) -> None:
        self.answer = answer
        self.behaviour = "answer"
        self.hang_s = 5.0
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        srv = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                with srv._lock:
                    srv.bodies.append(body)
                srv.handle(self, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def requests(self) -> int:
        with self._lock:
            return len(self.bodies)

    def prompts(self) -> list[str]:
        """The user message of every request."""
        return [b["messages"][-1]["content"] for b in self.bodies]

    def provider(self) -> dict[str, Any]:
        base = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        model = {"id": "judge-small", "maxTokens": 500, "cost": {"input": 1.0, "output": 5.0}}
        return {"api": "openai-completions", "baseUrl": base, "apiKey": "k", "models": [model]}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def handle(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if self.behaviour == "500":
            data = json.dumps({"error": {"message": "internal error", "type": "server_error"}}).encode()
            return self._send(h, 500, data, "application/json")
        if self.behaviour == "hang":
            time.sleep(self.hang_s)
            return self._send(h, 200, b"data: [DONE]\n\n", "text/event-stream")
        text = "Sure! I think this is fine to run." if self.behaviour == "garbage" else self.answer(
            body["messages"][-1]["content"]
        )
        chunks = [
            {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]},
            {"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}},
        ]
        raw = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        self._send(h, 200, raw.encode(), "text/event-stream")

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, data: bytes, ctype: str) -> None:
        try:
            h.send_response(status)
            h.send_header("content-type", ctype)
            h.send_header("content-length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
        except OSError:  # the client gave up (timeout test)
            pass
