"""A local model server with a small context window (127.0.0.1, port 0), for compaction tests.

It speaks both wire APIs (``/v1/chat/completions`` and ``/v1/messages``), counts a request's
tokens as ``ceil(len(body) / 4)``, answers a request over ``window`` with the provider's
real "too long" error (OpenAI ``context_length_exceeded`` / Anthropic ``prompt is too
long``), and reports that count as the usage of every reply.  Requests without tools are
summary requests; turn requests are answered by ``plan(n)`` (n = 0, 1, ...): a tool call
``(name, arguments)`` or a text reply.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OPENAI_TOO_LONG = {
    "error": {
        "message": "This model's maximum context length is {window} tokens. However, your messages resulted in "
        "{tokens} tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
ANTHROPIC_TOO_LONG = {
    "type": "error",
    "error": {"type": "invalid_request_error", "message": "prompt is too long: {tokens} tokens > {window} maximum"},
}

Plan = Callable[[int], "str | tuple[str, dict[str, Any]]"]


class WindowServer:
    def __init__(self, window: int, plan: Plan) -> None:
        self.window = window
        self.plan = plan
        self.turns: list[dict[str, Any]] = []  # bodies of turn requests (parsed)
        self.raw_turns: list[bytes] = []  # the same, as sent
        self.summaries: list[dict[str, Any]] = []
        self.sizes: list[int] = []  # token count of every request
        self.overflows = 0
        self.force_overflow: int = 0  # answer this many next turn requests with "too long"
        srv = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                srv.handle(self, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def provider(self, api: str, **model: Any) -> dict[str, Any]:
        return {
            "api": api,
            "baseUrl": self.base_url if api == "anthropic-messages" else self.base_url + "/v1",
            "apiKey": "k",
            "models": [{"id": "m", "contextWindow": self.window, "maxTokens": 1000, **model}],
        }

    # --- answers ---------------------------------------------------------------------

    def handle(self, h: BaseHTTPRequestHandler, body: bytes) -> None:
        anthropic = h.path.endswith("/messages")
        data = json.loads(body)
        tokens = -(-len(body) // 4)
        self.sizes.append(tokens)
        is_turn = bool(data.get("tools"))
        if is_turn and self.force_overflow > 0:
            self.force_overflow -= 1
            return self._too_long(h, anthropic, tokens)
        if tokens > self.window:
            return self._too_long(h, anthropic, tokens)
        if is_turn:
            self.turns.append(data)
            self.raw_turns.append(body)
            answer = self.plan(len(self.turns) - 1)
        else:
            self.summaries.append(data)
            answer = f"Summary {len(self.summaries)}: the agent read files in a loop."
        self._reply(h, anthropic, answer, tokens)

    def _too_long(self, h: BaseHTTPRequestHandler, anthropic: bool, tokens: int) -> None:
        self.overflows += 1
        shape = ANTHROPIC_TOO_LONG if anthropic else OPENAI_TOO_LONG
        text = json.dumps(shape).replace("{window}", str(self.window)).replace("{tokens}", str(tokens)).encode()
        h.send_response(400)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(text)))
        h.end_headers()
        h.wfile.write(text)

    def _reply(self, h: BaseHTTPRequestHandler, anthropic: bool, answer: Any, tokens: int) -> None:
        n = len(self.turns) + len(self.summaries)
        events = self._anthropic(answer, tokens, n) if anthropic else self._openai(answer, tokens, n)
        raw = "".join(events).encode()
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("content-length", str(len(raw)))
        h.end_headers()
        h.wfile.write(raw)

    @staticmethod
    def _openai(answer: Any, tokens: int, n: int) -> list[str]:
        def chunk(obj: dict[str, Any]) -> str:
            return f"data: {json.dumps(obj)}\n\n"

        out = []
        if isinstance(answer, str):
            out.append(chunk({"choices": [{"index": 0, "delta": {"content": answer}, "finish_reason": "stop"}]}))
        else:
            name, args = answer
            call = {"index": 0, "id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            out.append(chunk({"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": "tool_calls"}]}))
        usage = {"prompt_tokens": tokens, "completion_tokens": 20, "total_tokens": tokens + 20}
        out.append(chunk({"choices": [], "usage": usage}))
        out.append("data: [DONE]\n\n")
        return out

    @staticmethod
    def _anthropic(answer: Any, tokens: int, n: int) -> list[str]:
        def ev(name: str, obj: dict[str, Any]) -> str:
            return f"event: {name}\ndata: {json.dumps({'type': name, **obj})}\n\n"

        msg = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "m", "content": [],
               "stop_reason": None, "usage": {"input_tokens": tokens, "output_tokens": 1}}  # fmt: skip
        out = [ev("message_start", {"message": msg})]
        if isinstance(answer, str):
            out.append(ev("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}))
            out.append(ev("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": answer}}))
            stop = "end_turn"
        else:
            name, args = answer
            block = {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": {}}
            out.append(ev("content_block_start", {"index": 0, "content_block": block}))
            delta = {"type": "input_json_delta", "partial_json": json.dumps(args)}
            out.append(ev("content_block_delta", {"index": 0, "delta": delta}))
            stop = "tool_use"
        out.append(ev("content_block_stop", {"index": 0}))
        out.append(ev("message_delta", {"delta": {"stop_reason": stop}, "usage": {"output_tokens": 20}}))
        out.append(ev("message_stop", {}))
        return out
