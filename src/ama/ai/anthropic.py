"""Anthropic Messages API (``api: "anthropic-messages"``), streaming.

Request: ``POST {baseUrl}/v1/messages`` with ``x-api-key`` and ``anthropic-version``.
Body keys in a fixed order, messages last.  Prompt caching: ``cache_control`` breakpoints
on the last system block, the last tool and the last block of the last user turn (3 of
the API's 4).  System text is ``Context.system_prompt`` followed by every ``system``
message of the context, one block each.  Thinking (``thinking.budget_tokens`` from the
level) only for models marked ``reasoning``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from ama.ai.builder import MessageBuilder
from ama.ai.convert import Item, arguments_raw, encode_body, normalize_id, prepare
from ama.ai.errors import ProviderError, error_for_type
from ama.ai.events import Event
from ama.ai.http import post_sse
from ama.ai.types import Context, Model, StreamOptions
from ama.messages import ImageContent, TextContent, ThinkingContent, ToolCall, Usage

API_VERSION = "2023-06-01"
CACHE = {"type": "ephemeral"}
THINKING_BUDGET = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 32768}
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
    "refusal": "error",
}


def _id(id: str) -> str:
    return normalize_id(id, max_len=64)


def _image(b: ImageContent) -> dict:
    return {"type": "image", "source": {"type": "base64", "media_type": b.mime_type, "data": b.data}}


def _user_block(b: Any, model: Model) -> dict:
    if isinstance(b, ImageContent):
        if model.images:
            return _image(b)
        return {"type": "text", "text": "(image omitted: this model does not accept images)"}
    return {"type": "text", "text": b.text}


def _assistant_blocks(item: Item) -> list[dict]:
    out: list[dict] = []
    for b in item.blocks:
        if isinstance(b, TextContent):
            out.append({"type": "text", "text": b.text})
        elif isinstance(b, ThinkingContent):
            sig = b.thinking_signature if isinstance(b.thinking_signature, str) else ""
            if b.redacted is True and sig:
                out.append({"type": "redacted_thinking", "data": sig})
            elif sig:
                out.append({"type": "thinking", "thinking": b.thinking, "signature": sig})
            # thinking without a signature cannot be replayed: dropped
        elif isinstance(b, ToolCall):
            out.append({"type": "tool_use", "id": b.id, "name": b.name, "input": arguments_raw(b)})
    return out


def convert_messages(context: Context, model: Model) -> tuple[list[str], list[dict]]:
    """(system texts, wire messages); consecutive user-side items merge into one message."""
    system = [context.system_prompt] if context.system_prompt else []
    messages: list[dict] = []
    for item in prepare(context.messages, model, _id):
        if item.role == "system":
            system.append(item.text)
            continue
        if item.role == "assistant":
            blocks = _assistant_blocks(item)
            if blocks:
                messages.append({"role": "assistant", "content": blocks})
            continue
        if item.role == "tool":
            r = item.result
            assert r is not None
            content = [_user_block(b, model) for b in r.content if not isinstance(b, TextContent) or b.text]
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": r.tool_call_id}
            block["content"] = content or [{"type": "text", "text": "(no output)"}]
            if r.is_error:
                block["is_error"] = True
            blocks = [block]
        else:
            blocks = [_user_block(b, model) for b in item.blocks]
        if messages and messages[-1]["role"] == "user":
            prev = messages[-1]["content"]
            # tool results must come first in a user message
            if blocks[0]["type"] == "tool_result" and any(b["type"] != "tool_result" for b in prev):
                messages.append({"role": "user", "content": blocks})
            else:
                prev.extend(blocks)
        else:
            messages.append({"role": "user", "content": blocks})
    return system, messages


def build_request(model: Model, context: Context, options: StreamOptions, api_key: str | None) -> tuple[str, dict, bytes]:
    system, messages = convert_messages(context, model)
    for m in reversed(messages):
        if m["role"] == "user":
            m["content"][-1] = {**m["content"][-1], "cache_control": CACHE}
            break
    system_blocks: list[dict[str, Any]] = [{"type": "text", "text": t} for t in system]
    if system_blocks:
        system_blocks[-1]["cache_control"] = CACHE
    tools = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in context.tools]
    if tools:
        tools[-1]["cache_control"] = CACHE
    max_tokens = options.max_tokens or model.max_tokens
    thinking = None
    level = options.thinking_level
    if model.reasoning and level in THINKING_BUDGET:
        budget = THINKING_BUDGET[level]
        if max_tokens <= budget:
            budget = max_tokens - 1024
        if budget >= 1024:
            thinking = {"type": "enabled", "budget_tokens": budget}
    body = encode_body(
        [
            ("model", model.id),
            ("max_tokens", max_tokens),
            ("stream", True),
            ("thinking", thinking),
            ("system", system_blocks or None),
            ("tools", tools or None),
            ("messages", messages),
        ]
    )
    headers = {
        "content-type": "application/json",
        "accept": "text/event-stream",
        "anthropic-version": API_VERSION,
    }
    if thinking:
        headers["anthropic-beta"] = "interleaved-thinking-2025-05-14"
    if api_key:
        headers["x-api-key"] = api_key
    headers.update(model.headers or {})
    headers.update(options.headers or {})
    url = model.base_url.rstrip("/") + "/v1/messages"
    return url, headers, body


def _usage(target: Usage, u: dict) -> None:
    if not isinstance(u, dict):
        return
    if u.get("input_tokens") is not None:
        target.input = int(u["input_tokens"])
    if u.get("output_tokens") is not None:
        target.output = int(u["output_tokens"])
    if u.get("cache_read_input_tokens") is not None:
        target.cache_read = int(u["cache_read_input_tokens"])
    if u.get("cache_creation_input_tokens") is not None:
        target.cache_write = int(u["cache_creation_input_tokens"])


async def run(
    model: Model, context: Context, options: StreamOptions, builder: MessageBuilder, api_key: str | None
) -> AsyncIterator[Event]:
    url, headers, body = build_request(model, context, options, api_key)
    index: dict[int, int] = {}  # API block index -> our content index
    stop = "stop"
    finished = False
    async with aclosing(post_sse(url, headers, body, options, builder)) as stream:
        async for event, data in stream:
            try:
                obj = json.loads(data)
            except ValueError:
                continue
            if not isinstance(obj, dict):
                continue
            kind = obj.get("type", event)
            out: Event | None = None
            if kind == "message_start":
                _usage(builder.usage, (obj.get("message") or {}).get("usage") or {})
            elif kind == "content_block_start":
                cb = obj.get("content_block") or {}
                t = cb.get("type")
                if t == "text":
                    i, out = builder.text_start()
                    yield out
                    out = builder.delta(i, cb.get("text") or "")
                elif t == "thinking":
                    i, out = builder.thinking_start()
                elif t == "redacted_thinking":
                    i, out = builder.thinking_start()
                    builder.set_signature(i, cb.get("data") or "")
                    builder.set_redacted(i)
                elif t in ("tool_use", "server_tool_use"):
                    i, out = builder.toolcall_start(cb.get("id") or "", cb.get("name") or "")
                else:
                    continue
                index[obj.get("index", -1)] = i
            elif kind == "content_block_delta":
                j = index.get(obj.get("index", -1))
                if j is None or builder.kind(j) is None:
                    continue
                d = obj.get("delta") or {}
                t = d.get("type")
                if t == "text_delta":
                    out = builder.delta(j, d.get("text") or "")
                elif t == "thinking_delta":
                    out = builder.delta(j, d.get("thinking") or "")
                elif t == "input_json_delta":
                    out = builder.delta(j, d.get("partial_json") or "")
                elif t == "signature_delta":
                    builder.set_signature(j, d.get("signature") or "", append=True)
            elif kind == "content_block_stop":
                j = index.pop(obj.get("index", -1), None)
                if j is not None and builder.kind(j) is not None:
                    out = builder.end(j)
            elif kind == "message_delta":
                reason = (obj.get("delta") or {}).get("stop_reason")
                if reason:
                    stop = STOP_REASONS.get(reason, "stop")
                _usage(builder.usage, obj.get("usage") or {})
            elif kind == "message_stop":
                finished = True
                break
            elif kind == "error":
                err = obj.get("error") or {}
                etype = err.get("type")
                raise error_for_type(etype, f"{etype or 'error'}: {err.get('message') or data}", provider=model.provider)
            if out is not None:
                yield out
    if not finished:
        raise ProviderError(
            "network",
            f"{model.provider}: stream ended before message_stop",
            retryable=True,
            provider=model.provider,
        )
    if stop == "error":
        raise ProviderError("provider_error", f"{model.provider}: the model refused to answer", provider=model.provider)
    for e in builder.finish(stop):
        yield e
