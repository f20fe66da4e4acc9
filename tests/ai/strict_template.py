"""A local OpenAI-compatible server that enforces what strict chat templates enforce.

Real llama.cpp ``llama-server`` with a strict Jinja template (Qwen, Mistral, Gemma...)
answers HTTP 500 when a request breaks the template's rules; this stub checks the same
three rules on every ``POST /v1/chat/completions`` and answers in llama.cpp's error shape
(``{"error": {"code": 500, "message": ..., "type": "server_error"}}``):

* a ``system`` message only as the very first message;
* after it, roles alternate: ``user`` first, then ``assistant``, ``user``, ...;
* an assistant message with ``tool_calls`` is followed by one ``tool`` message per call
  (its ``tool_call_id``), and a ``tool`` message only follows its call.

A valid request is answered by streaming: after a user message, a ``read`` tool call of
``notes.txt``; after tool results, a text reply.  Real sockets on 127.0.0.1, port 0.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def template_error(messages: list[dict[str, Any]]) -> str | None:
    """Why a strict chat template refuses ``messages``, or None."""
    rest = messages
    if rest and rest[0].get("role") == "system":
        rest = rest[1:]
    allowed = {"user"}
    pending: list[str] = []
    for m in rest:
        role = m.get("role")
        if role == "system":
            return "System message must be at the beginning."
        if pending:
            if role != "tool" or m.get("tool_call_id") not in pending:
                return "A tool result must follow its tool call: expected results for " + ", ".join(pending)
            pending.remove(m["tool_call_id"])
            if not pending:
                allowed = {"assistant", "user"}
            continue
        if role == "tool":
            return "A tool result must follow its tool call: got a tool message without a call"
        if role not in allowed:
            return "Conversation roles must alternate user/assistant/user/assistant/..."
        if role == "assistant":
            pending = [c["id"] for c in m.get("tool_calls") or []]
            allowed = {"user"}
        else:
            allowed = {"assistant"}
    if pending:
        return "A tool result must follow its tool call: expected results for " + ", ".join(pending)
    if not rest or rest[-1].get("role") not in ("user", "tool"):
        return "The last message must be from the user or a tool result"
    return None


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {"object": "chat.completion.chunk", "model": "strict", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class StrictTemplateServer:
    """``with StrictTemplateServer() as s:`` ... ``s.base_url``, ``s.requests``, ``s.errors``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.errors: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                server.requests.append(body)
                problem = template_error(body.get("messages") or [])
                if problem is not None:
                    server.errors.append(problem)
                    payload = json.dumps({"error": {"code": 500, "message": problem, "type": "server_error"}}).encode()
                    self.send_response(500)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                last = body["messages"][-1]
                if last["role"] == "tool":
                    out = _chunk({"role": "assistant", "content": "notes.txt says: " + str(last["content"])[:40]}, "stop")
                else:
                    n = len(server.requests)
                    call = {"index": 0, "id": f"call_{n}", "type": "function",
                            "function": {"name": "read", "arguments": '{"path": "notes.txt"}'}}  # fmt: skip
                    out = _chunk({"role": "assistant", "tool_calls": [call]}) + _chunk({}, "tool_calls")
                out += b"data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> StrictTemplateServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def provider_config(base_url: str, model: str = "strict") -> dict[str, Any]:
    """An ama config that names the server as provider ``strict`` (one attempt per request)."""
    return {
        "providers": {"strict": {"api": "openai-completions", "baseUrl": base_url,
                                 "models": [{"id": model, "contextWindow": 32768, "maxTokens": 1024}]}},
        "retry": {"maxAttempts": 1},
    }  # fmt: skip
