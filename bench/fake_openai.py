"""A local OpenAI-compatible Chat Completions server for benchmarks (streams SSE).

    python bench/fake_openai.py [--port 0] [--tool-first]

It prints ``PORT <n>`` on stdout once it listens (port 0, the default: a free port chosen
by the system); if it cannot bind, it says why on stderr and exits 1.

Replies "Hello from the local server." to every request; with --tool-first, a request whose
last message is from the user gets a tool call (``ls .``) instead, so `ama -p` makes one
tool call and a second request.
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def chunk(delta: dict, finish: str | None = None, usage: dict | None = None) -> bytes:
    body: dict = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "model": "bench",
                  "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    if usage is not None:
        body = {**body, "choices": [], "usage": usage}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class Handler(BaseHTTPRequestHandler):
    tool_first = False
    words = 0

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(length)
        # the role of the last message, without parsing a possibly huge body
        i = raw.rfind(b'"role":')
        last = raw[i + 7 : i + 40].split(b'"')[1].decode() if i >= 0 else "user"
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        out = [chunk({"role": "assistant", "content": ""})]
        if self.tool_first and last == "user":
            call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "ls", "arguments": ""}}
            out.append(chunk({"tool_calls": [call]}))
            out.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": "."}'}}]}))
            out.append(chunk({}, "tool_calls"))
        else:
            for w in ["Hello ", "from ", "the ", "local ", "server."] + ["word "] * self.words:
                out.append(chunk({"content": w}))
            out.append(chunk({}, "stop"))
        out.append(chunk({}, usage={"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}))
        out.append(b"data: [DONE]\n\n")
        for part in out:
            self.wfile.write(part)
            self.wfile.flush()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=0, help="0 (default): any free port")
    ap.add_argument("--tool-first", action="store_true")
    ap.add_argument("--words", type=int, default=0, help="extra streamed words per reply")
    a = ap.parse_args()
    Handler.tool_first = a.tool_first
    Handler.words = a.words
    try:
        server = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    except OSError as e:
        print(f"fake_openai: cannot listen on 127.0.0.1:{a.port}: {e.strerror}", file=sys.stderr)
        raise SystemExit(1) from None
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
