"""A priced OpenAI-compatible model on a local server (tests/ai/server.py) for guard tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.ai.server import LocalServer, Reply

#: USD per million tokens: every reply below uses 1,000 input tokens = $0.01
PRICE = {"input": 10.0, "output": 0.0}


def _chunk(body: dict) -> bytes:
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def sse(*, text: str | None = None, call: tuple[str, dict] | None = None, prompt_tokens: int = 1000) -> Reply:
    base = {"id": "c1", "object": "chat.completion.chunk", "model": "m"}
    out = [_chunk({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})]
    if call is not None:
        name, args = call
        tc = {"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        out.append(_chunk({**base, "choices": [{"index": 0, "delta": {"tool_calls": [tc]}}]}))
        finish = "tool_calls"
    else:
        out.append(_chunk({**base, "choices": [{"index": 0, "delta": {"content": text or "done"}}]}))
        finish = "stop"
    out.append(_chunk({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}))
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 5, "total_tokens": prompt_tokens + 5}
    out.append(_chunk({**base, "choices": [], "usage": usage}))
    out.append(b"data: [DONE]\n\n")
    return Reply(chunks=out)


def error(status: int, message: str = "Overloaded") -> Reply:
    body = json.dumps({"error": {"message": message, "type": "overloaded_error" if status == 529 else "server_error"}})
    return Reply(status=status, chunks=[body.encode()], content_type="application/json")


def write_config(home: Path, url: str, **extra: Any) -> None:
    """User config: provider ``local`` with models ``main`` and ``backup``, both priced."""
    models = [{"id": mid, "contextWindow": 100000, "maxTokens": 1000, "cost": PRICE} for mid in ("main", "backup")]
    config = {
        "providers": {"local": {"api": "openai-completions", "baseUrl": url + "/v1", "models": models}},
        "model": "local/main",
        "retry": {"baseDelayMs": 1},
        **extra,
    }
    (home / "config.json").write_text(json.dumps(config))


def request_models(server: LocalServer) -> list[str]:
    return [json.loads(r.body)["model"] for r in server.requests]
