"""A local OpenAI-compatible server (127.0.0.1, port 0) that reports prompt caching.

Per model it remembers the messages of the latest request for ``ttl`` seconds; a request
reads from the cache the tool definitions plus the longest run of leading messages equal
to that request's (``prompt_tokens_details.cached_tokens``, tokens = characters / 4).
A request whose last message is ama's keep-alive note is answered "ok"; the others by
``plan(n)`` as in ``WindowServer``.
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.agent.window_server import Plan, WindowServer


class CacheServer(WindowServer):
    def __init__(self, plan: Plan, *, ttl: float = 60.0) -> None:
        super().__init__(1_000_000, plan)
        self.ttl = ttl
        self._cache: dict[str, tuple[float, list[str]]] = {}
        self.requests: list[dict[str, Any]] = []  # every request body, warm ones included
        self.cache_reads: list[int] = []

    def handle(self, h: BaseHTTPRequestHandler, body: bytes) -> None:
        data = json.loads(body)
        tokens = -(-len(body) // 4)
        msgs = [json.dumps(m, sort_keys=True) for m in data["messages"]]
        now = time.monotonic()
        cached = 0
        prev = self._cache.get(data["model"])
        if prev is not None and now - prev[0] <= self.ttl:
            k = 0
            while k < min(len(msgs), len(prev[1])) and msgs[k] == prev[1][k]:
                k += 1
            if k:
                cached = min(tokens, (len(json.dumps(data.get("tools") or [])) + sum(len(x) for x in msgs[:k])) // 4)
        self._cache[data["model"]] = (now, msgs)
        self.requests.append(data)
        self.cache_reads.append(cached)
        last = data["messages"][-1]
        if "keep-alive" in json.dumps(last.get("content")):
            answer: Any = "ok"
        else:
            self.turns.append(data)
            answer = self.plan(len(self.turns) - 1)
        chunks = self._openai(answer, tokens, len(self.requests))
        usage = {"prompt_tokens": tokens, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": cached}}
        chunks[-2] = f"data: {json.dumps({'choices': [], 'usage': usage})}\n\n"
        raw = "".join(chunks).encode()
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("content-length", str(len(raw)))
        h.end_headers()
        h.wfile.write(raw)
