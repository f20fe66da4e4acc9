"""OpenAI Chat Completions API (``api: "openai-completions"``), streaming.

Works with OpenAI and compatible servers (vLLM, llama.cpp, Ollama, DeepSeek, OpenRouter).
Request: ``POST {baseUrl}/chat/completions`` with ``Authorization: Bearer`` when a key is
set; ``stream_options.include_usage`` for usage (cached tokens from
``prompt_tokens_details.cached_tokens`` or DeepSeek's ``prompt_cache_hit_tokens``; usage
``input`` excludes them).  Reasoning text of compatible servers is read from
``reasoning_content``, ``reasoning`` or ``reasoning_text`` deltas; the field name is kept
as the thinking block's signature.  It is sent back (same model only) when the
provider's ``compat.replayReasoning`` is true.  ``system`` messages stay in place.

``compat`` keys: ``maxTokensField`` (default ``max_completion_tokens`` for the built-in
``openai`` provider, ``max_tokens`` elsewhere), ``streamUsage`` (default true),
``reasoningEffort`` (send ``reasoning_effort`` for reasoning models; default true),
``replayReasoning`` (default false).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from ama.ai.builder import MessageBuilder
from ama.ai.convert import Item, arguments_json, encode_body, normalize_id, prepare
from ama.ai.errors import ProviderError, error_for_type
from ama.ai.events import Event
from ama.ai.http import post_sse
from ama.ai.types import Context, Model, StreamOptions
from ama.messages import ImageContent, TextContent, ThinkingContent, ToolCall

REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
STOP_REASONS = {"stop": "stop", "length": "length", "tool_calls": "toolUse", "function_call": "toolUse"}


def _id(id: str) -> str:
    return normalize_id(id, max_len=40)


def _compat(model: Model, key: str, default: Any) -> Any:
    return (model.compat or {}).get(key, default)


def _image_part(b: ImageContent) -> dict:
    return {"type": "image_url", "image_url": {"url": f"data:{b.mime_type};base64,{b.data}"}}


def _user_content(blocks: list[Any], model: Model) -> str | list[dict]:
    if len(blocks) == 1 and isinstance(blocks[0], TextContent):
        return blocks[0].text
    parts: list[dict] = []
    for b in blocks:
        if isinstance(b, ImageContent):
            if model.images:
                parts.append(_image_part(b))
            else:
                parts.append({"type": "text", "text": "(image omitted: this model does not accept images)"})
        else:
            parts.append({"type": "text", "text": b.text})
    return parts


def _assistant(item: Item, model: Model) -> dict | None:
    text = "".join(b.text for b in item.blocks if isinstance(b, TextContent))
    calls = [
        {
            "id": b.id,
            "type": "function",
            "function": {"name": b.name, "arguments": arguments_json(b)},
        }
        for b in item.blocks
        if isinstance(b, ToolCall)
    ]
    if not text and not calls:
        return None
    msg: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        msg["tool_calls"] = calls
    if item.same_model and _compat(model, "replayReasoning", False):
        thinking = [b for b in item.blocks if isinstance(b, ThinkingContent) and b.thinking]
        if thinking:
            sig = thinking[0].thinking_signature
            field = sig if isinstance(sig, str) and sig in REASONING_FIELDS else "reasoning_content"
            msg[field] = "".join(b.thinking for b in thinking)
    return msg


def convert_messages(context: Context, model: Model) -> list[dict]:
    out: list[dict] = []
    if context.system_prompt:
        out.append({"role": "system", "content": context.system_prompt})
    images: list[dict] = []  # images of the current run of tool results
    for item in prepare(context.messages, model, _id):
        if item.role != "tool" and images:
            out.append({"role": "user", "content": [{"type": "text", "text": "Images from the tool results above:"}, *images]})
            images = []
        if item.role == "system":
            out.append({"role": "system", "content": item.text})
        elif item.role == "user":
            out.append({"role": "user", "content": _user_content(item.blocks, model)})
        elif item.role == "assistant":
            msg = _assistant(item, model)
            if msg:
                out.append(msg)
        else:
            r = item.result
            assert r is not None
            text = "\n".join(b.text for b in r.content if isinstance(b, TextContent))
            imgs = [b for b in r.content if isinstance(b, ImageContent)]
            if imgs and model.images:
                images.extend(_image_part(b) for b in imgs)
                text = text or "(see the image(s) below)"
            out.append({"role": "tool", "tool_call_id": r.tool_call_id, "content": text or "(no output)"})
    if images:
        out.append({"role": "user", "content": [{"type": "text", "text": "Images from the tool results above:"}, *images]})
    return out


def _effort(model: Model, level: str) -> str | None:
    if not model.reasoning or level == "off" or not _compat(model, "reasoningEffort", True):
        return None
    if level == "minimal":
        return "minimal" if model.id.startswith("gpt-5") else "low"
    return {"low": "low", "medium": "medium", "high": "high", "xhigh": "high"}.get(level)


def build_request(model: Model, context: Context, options: StreamOptions, api_key: str | None) -> tuple[str, dict, bytes]:
    messages = convert_messages(context, model)
    tools = [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in context.tools
    ]
    default_field = "max_completion_tokens" if model.provider == "openai" else "max_tokens"
    max_field = _compat(model, "maxTokensField", default_field)
    stream_usage = _compat(model, "streamUsage", True)
    body = encode_body(
        [
            ("model", model.id),
            ("stream", True),
            ("stream_options", {"include_usage": True} if stream_usage else None),
            (max_field, options.max_tokens or model.max_tokens),
            ("reasoning_effort", _effort(model, options.thinking_level)),
            ("prompt_cache_key", options.session_id if model.provider == "openai" else None),
            ("tools", tools or None),
            ("messages", messages),
        ]
    )
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    headers.update(model.headers or {})
    headers.update(options.headers or {})
    return model.base_url.rstrip("/") + "/chat/completions", headers, body


def _usage(builder: MessageBuilder, u: Any) -> None:
    if not isinstance(u, dict):
        return
    prompt = int(u.get("prompt_tokens") or 0)
    details = u.get("prompt_tokens_details") or {}
    cached = int((details.get("cached_tokens") if isinstance(details, dict) else 0) or u.get("prompt_cache_hit_tokens") or 0)
    builder.usage.input = max(0, prompt - cached)
    builder.usage.cache_read = cached
    builder.usage.cache_write = 0
    builder.usage.output = int(u.get("completion_tokens") or 0)


async def run(
    model: Model, context: Context, options: StreamOptions, builder: MessageBuilder, api_key: str | None
) -> AsyncIterator[Event]:
    url, headers, body = build_request(model, context, options, api_key)
    current: int | None = None  # open text or thinking block
    tools: dict[int, int] = {}  # API tool-call index -> our content index
    finish: str | None = None
    done = False

    def close_current() -> Event | None:
        nonlocal current
        if current is None:
            return None
        i, current = current, None
        return builder.end(i)

    async with aclosing(post_sse(url, headers, body, options, builder)) as stream:
        async for _event, data in stream:
            if data.strip() == "[DONE]":
                done = True
                break
            try:
                chunk = json.loads(data)
            except ValueError:
                continue
            if not isinstance(chunk, dict):
                continue
            err = chunk.get("error")
            if err:
                etype = (err.get("type") or err.get("code")) if isinstance(err, dict) else None
                msg = err.get("message") if isinstance(err, dict) else str(err)
                raise error_for_type(str(etype) if etype else None, f"{model.provider}: {msg}", provider=model.provider)
            if chunk.get("usage"):
                _usage(builder, chunk["usage"])
            for choice in chunk.get("choices") or []:
                if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                    continue
                delta = choice.get("delta") or {}
                for field in REASONING_FIELDS:
                    value = delta.get(field)
                    if isinstance(value, str) and value:
                        if current is None or builder.kind(current) != "thinking":
                            ev = close_current()
                            if ev:
                                yield ev
                            current, start = builder.thinking_start()
                            builder.set_signature(current, field)
                            yield start
                        out = builder.delta(current, value)
                        if out:
                            yield out
                        break
                content = delta.get("content")
                if isinstance(content, str) and content:
                    if current is None or builder.kind(current) != "text":
                        ev = close_current()
                        if ev:
                            yield ev
                        current, start = builder.text_start()
                        yield start
                    out = builder.delta(current, content)
                    if out:
                        yield out
                for n, tc in enumerate(delta.get("tool_calls") or []):
                    if not isinstance(tc, dict):
                        continue
                    fn = tc.get("function") or {}
                    key = tc.get("index", n)
                    if key not in tools:
                        ev = close_current()
                        if ev:
                            yield ev
                        call_id = tc.get("id") or f"call_{len(tools)}"
                        tools[key], start = builder.toolcall_start(call_id, fn.get("name") or "")
                        yield start
                    elif fn.get("name"):
                        builder.rename_tool(tools[key], fn["name"])
                    out = builder.delta(tools[key], fn.get("arguments") or "")
                    if out:
                        yield out
                if choice.get("finish_reason"):
                    finish = choice["finish_reason"]
    if not done and finish is None:
        raise ProviderError(
            "network", f"{model.provider}: stream ended before finish_reason", retryable=True, provider=model.provider
        )
    if finish == "content_filter":
        raise ProviderError("provider_error", f"{model.provider}: response blocked by content filter", provider=model.provider)
    if finish == "error":
        raise ProviderError("provider_error", f"{model.provider}: the server reported an error", provider=model.provider)
    stop = STOP_REASONS.get(finish or "stop", "stop")
    if tools and stop == "stop":
        stop = "toolUse"
    for e in builder.finish(stop):
        yield e
