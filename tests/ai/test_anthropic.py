"""Anthropic Messages adapter against a local HTTP server replaying recorded SSE."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime

import pytest

import ama.ai
from ama.ai import Context, ProviderError, StreamOptions, stream
from ama.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

from .helpers import TOOLS, anthropic_model, body, collect, types
from .server import Reply, fixture, split_events, split_every

pytestmark = pytest.mark.anyio
MARK = b'"cache_control":{"type":"ephemeral"},'


@pytest.fixture(autouse=True)
async def _close_client():
    yield
    await ama.ai.aclose()


def ctx(*messages, system: str = "You are ama.") -> Context:
    return Context(system_prompt=system, messages=list(messages) or [UserMessage(content="hi")], tools=list(TOOLS))


async def test_text_stream_usage_cost_and_request(server):
    server.queue(Reply(chunks=split_every(fixture("anthropic_text.sse"), 7)))
    records: list[dict] = []
    model = anthropic_model(server.url)
    events, final = await collect(model, ctx(), StreamOptions(on_request=records.append, max_tokens=1000))

    assert types(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    msg = final.message
    assert final.reason == "stop" and msg.stop_reason == "stop"
    assert msg.content == [TextContent(text="Hello, wörld! ✓")]
    assert (msg.api, msg.provider, msg.model) == ("anthropic-messages", "anthropic", "claude-sonnet-4-5")
    u = msg.usage
    assert (u.input, u.output, u.cache_read, u.cache_write, u.total_tokens) == (12, 9, 3000, 1500, 4521)
    assert u.cost.input == pytest.approx(12 * 3 / 1e6)
    assert u.cost.output == pytest.approx(9 * 15 / 1e6)
    assert u.cost.cache_read == pytest.approx(3000 * 0.3 / 1e6)
    assert u.cost.cache_write == pytest.approx(1500 * 3.75 / 1e6)
    assert u.cost.total == pytest.approx(u.cost.input + u.cost.output + u.cost.cache_read + u.cost.cache_write)

    (req,) = server.requests
    assert req.path == "/v1/messages"
    assert req.headers["x-api-key"] == "sk-ant-test"
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert req.headers["content-type"] == "application/json"
    assert "anthropic-beta" not in req.headers
    b = body(req)
    assert list(b) == ["model", "max_tokens", "stream", "system", "tools", "messages"]
    assert b["model"] == "claude-sonnet-4-5" and b["max_tokens"] == 1000 and b["stream"] is True
    assert b["system"] == [{"type": "text", "text": "You are ama.", "cache_control": {"type": "ephemeral"}}]
    assert "cache_control" not in b["tools"][0]
    assert b["tools"][1]["cache_control"] == {"type": "ephemeral"}
    assert b["tools"][0]["input_schema"] == TOOLS[0].parameters
    assert b["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}
    ]

    (rec,) = records
    assert rec["provider"] == "anthropic" and rec["model"] == "claude-sonnet-4-5"
    assert rec["channel"] == "anthropic-messages" and rec["httpStatus"] == 200 and rec["stopReason"] == "stop"
    assert isinstance(rec["firstByteMs"], int) and isinstance(rec["durationMs"], int)
    assert rec["durationMs"] >= rec["firstByteMs"] >= 0
    assert datetime.fromisoformat(rec["startedAt"].replace("Z", "+00:00")).tzinfo is not None


async def test_thinking_and_tool_calls_split_across_chunks(server):
    server.queue(Reply(chunks=split_events(fixture("anthropic_thinking_tools.sse"))))
    model = anthropic_model(server.url, channel="messages")
    records: list[dict] = []
    events, final = await collect(model, ctx(), StreamOptions(thinking_level="high", on_request=records.append))

    assert types(events) == [
        "start",
        "thinking_start", "thinking_delta", "thinking_delta", "thinking_end",
        "thinking_start", "thinking_end",
        "text_start", "text_delta", "text_end",
        "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_delta", "toolcall_end",
        "toolcall_start", "toolcall_end",
        "done",
    ]  # fmt: skip
    assert events[10].id == "toolu_01A09q90qw90lq917835lq9" and events[10].name == "read"
    assert [e.delta for e in events[11:14]] == ['{"path": "src/', 'main.py", "limit"', ": 40}"]
    msg = final.message
    assert final.reason == "toolUse" and msg.stop_reason == "toolUse"
    assert msg.content == [
        ThinkingContent(thinking="The user wants the file. I should read it.", thinking_signature="EqQBCgIYAhIM1gbcDa9GJwZA2b3h"),
        ThinkingContent(thinking="", thinking_signature="EmwKAhgBEgy3va3pzix/LafPsn4a", redacted=True),
        TextContent(text="Let me read both files."),
        ToolCall(
            id="toolu_01A09q90qw90lq917835lq9", name="read", arguments={"path": "src/main.py", "limit": 40},
            raw_arguments='{"path": "src/main.py", "limit": 40}',  # the model's own bytes, kept for replay
        ),
        ToolCall(id="toolu_01B", name="ls", arguments={}),
    ]
    assert (msg.usage.input, msg.usage.output, msg.usage.cache_read, msg.usage.cache_write) == (420, 89, 2048, 0)
    (req,) = server.requests
    assert req.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    b = body(req)
    assert b["thinking"] == {"type": "enabled", "budget_tokens": 16384}
    assert records[0]["channel"] == "messages" and records[0]["stopReason"] == "toolUse"


async def test_history_conversion_on_the_wire(server):
    server.queue(Reply(chunks=split_events(fixture("anthropic_text.sse"))))
    model = anthropic_model(server.url)
    history = [
        UserMessage(content=[TextContent(text="look"), ImageContent(data="aGVsbG8=", mime_type="image/png")]),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="hmm", thinking_signature="sig1"),
                ToolCall(id="toolu_1", name="read", arguments={"path": "a"}),
                ToolCall(id="call|with|pipes", name="ls", arguments={}),
            ],
            api="anthropic-messages",
            provider="anthropic",
            model="claude-sonnet-4-5",
            stop_reason="toolUse",
        ),
        ToolResultMessage(tool_call_id="toolu_1", tool_name="read", content=[TextContent(text="A")]),
        ToolResultMessage(tool_call_id="call|with|pipes", tool_name="ls", content=[], is_error=True),
        UserMessage(content="next"),
    ]
    await collect(model, ctx(*history))
    msgs = body(server.requests[0])["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[0]["content"][1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGVsbG8="}}
    assert msgs[1]["content"][0] == {"type": "thinking", "thinking": "hmm", "signature": "sig1"}
    pipes_id = msgs[1]["content"][2]["id"]
    assert pipes_id.startswith("call_with_pipes_") and len(pipes_id) <= 64
    results = msgs[2]["content"]
    assert [r["type"] for r in results] == ["tool_result", "tool_result", "text"]
    assert results[0] == {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "A"}]}
    assert results[1]["tool_use_id"] == pipes_id and results[1]["is_error"] is True
    assert results[2] == {"type": "text", "text": "next", "cache_control": {"type": "ephemeral"}}


@pytest.mark.parametrize(
    ("status", "name", "headers", "code", "retryable", "retry_after"),
    [
        (429, "anthropic_429.json", {"retry-after": "7"}, "rate_limited", True, 7.0),
        (529, "anthropic_529.json", {}, "overloaded", True, None),
        (500, "anthropic_500.json", {"retry-after-ms": "1500"}, "server_error", True, 1.5),
        (401, None, {}, "auth", False, None),
        (400, None, {}, "invalid_request", False, None),
    ],
)
async def test_http_errors_are_classified(server, status, name, headers, code, retryable, retry_after):
    raw = fixture(name) if name else b'{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}'
    server.queue(Reply(status=status, chunks=[raw], headers=headers, content_type="application/json"))
    records: list[dict] = []
    events, final = await collect(anthropic_model(server.url), ctx(), StreamOptions(on_request=records.append))
    assert types(events) == ["start", "error"]
    assert final.reason == "error" and final.message.stop_reason == "error"
    err = final.error
    assert isinstance(err, ProviderError)
    assert (err.code, err.retryable, err.http_status, err.retry_after) == (code, retryable, status, retry_after)
    assert f"HTTP {status}" in final.message.error_message
    assert records[0]["httpStatus"] == status and records[0]["stopReason"] == "error"
    # the event encodes to JSON with the error's fields
    data = json.loads(ama.ai.events.encode(final))
    assert data["error"]["code"] == code and data["error"]["data"]["retryable"] is retryable


async def test_overloaded_error_inside_the_stream_keeps_partial(server):
    server.queue(Reply(chunks=split_events(fixture("anthropic_overloaded_stream.sse"))))
    events, final = await collect(anthropic_model(server.url), ctx())
    assert types(events) == ["start", "text_start", "text_delta", "text_end", "error"]
    assert final.message.content == [TextContent(text="Partial")]
    assert final.error.code == "overloaded" and final.error.retryable
    assert final.message.usage.input == 10


async def test_connection_dropped_mid_stream_is_retryable(server):
    server.queue(Reply(chunks=split_events(fixture("anthropic_text.sse")), drop_after=4))
    events, final = await collect(anthropic_model(server.url), ctx())
    assert final.reason == "error"
    assert final.error.code == "network" and final.error.retryable
    assert final.message.content == [TextContent(text="Hello")]
    assert types(events)[-2:] == ["text_end", "error"]


async def test_stream_ending_without_message_stop_is_retryable(server):
    chunks = split_events(fixture("anthropic_text.sse"))[:-1]
    server.queue(Reply(chunks=chunks))
    _, final = await collect(anthropic_model(server.url), ctx())
    assert final.error.code == "network" and final.error.retryable
    assert "message_stop" in final.message.error_message


async def test_abort_mid_stream_returns_partial(server):
    server.queue(Reply(chunks=split_events(fixture("anthropic_text.sse")), hang_after=4))
    abort = asyncio.Event()
    records: list[dict] = []
    events = []
    async for ev in stream(anthropic_model(server.url), ctx(), StreamOptions(abort=abort, on_request=records.append)):
        events.append(ev)
        if ev.type == "text_delta":
            abort.set()
    final = events[-1]
    assert types(events) == ["start", "text_start", "text_delta", "text_end", "error"]
    assert final.reason == "aborted" and final.error is None
    assert final.message.stop_reason == "aborted" and final.message.content == [TextContent(text="Hello")]
    assert records[0]["stopReason"] == "aborted"


async def test_abort_before_the_request_sends_nothing(server):
    abort = asyncio.Event()
    abort.set()
    records: list[dict] = []
    events, final = await collect(anthropic_model(server.url), ctx(), StreamOptions(abort=abort, on_request=records.append))
    assert types(events) == ["start", "error"] and final.reason == "aborted"
    assert server.requests == [] and records == []


async def test_missing_key_of_a_builtin_provider(server, monkeypatch):
    monkeypatch.delenv("AMA_TEST_NO_KEY", raising=False)
    model = anthropic_model(server.url, api_key=None, api_key_env="AMA_TEST_NO_KEY", requires_key=True)
    _, final = await collect(model, ctx())
    assert final.error.code == "auth" and not final.error.retryable
    assert "AMA_TEST_NO_KEY" in final.message.error_message
    assert server.requests == []


async def test_key_from_environment_and_options(server, monkeypatch):
    monkeypatch.setenv("AMA_TEST_KEY", "from-env")
    model = anthropic_model(server.url, api_key=None, api_key_env="AMA_TEST_KEY", requires_key=True)
    server.queue(Reply(chunks=[fixture("anthropic_text.sse")]), Reply(chunks=[fixture("anthropic_text.sse")]))
    await collect(model, ctx())
    await collect(model, ctx(), StreamOptions(api_key="from-options", headers={"x-extra": "1"}))
    assert server.requests[0].headers["x-api-key"] == "from-env"
    assert server.requests[1].headers["x-api-key"] == "from-options"
    assert server.requests[1].headers["x-extra"] == "1"


def _turns() -> list:
    return [
        UserMessage(content="read a"),
        AssistantMessage(
            content=[TextContent(text="ok"), ToolCall(id="toolu_9", name="read", arguments={"path": "a", "limit": 3})],
            api="anthropic-messages",
            provider="anthropic",
            model="claude-sonnet-4-5",
            usage=Usage(input=5),
            stop_reason="toolUse",
        ),
        ToolResultMessage(tool_call_id="toolu_9", tool_name="read", content=[TextContent(text="content of a")]),
    ]


async def test_request_bytes_are_stable_and_prefix_shared(server):
    for _ in range(3):
        server.queue(Reply(chunks=[fixture("anthropic_text.sse")]))
    model = anthropic_model(server.url)
    first = _turns()
    second = [*first, AssistantMessage(content=[TextContent(text="done")], api="anthropic-messages",
                                       provider="anthropic", model="claude-sonnet-4-5"), UserMessage(content="more")]  # fmt: skip
    await collect(model, ctx(*first))
    await collect(model, ctx(*first))
    await collect(model, ctx(*second))
    b1, b1again, b2 = (r.body for r in server.requests)
    assert b1 == b1again
    # byte-identical up to the moving breakpoint on the last user turn of the first request
    k = b1.rindex(b'"cache_control"')
    assert b2[:k] == b1[:k]
    # and identical through the end of the old messages once the moving marker is ignored
    s1, s2 = b1.replace(MARK, b""), b2.replace(MARK, b"")
    assert s1.endswith(b"]}")
    assert s2.startswith(s1[:-2])
    # breakpoints: system, last tool, last user turn
    assert b2.count(MARK) == 3 and b1.count(MARK) == 3
