"""OpenAI Chat Completions adapter against a local HTTP server replaying recorded SSE."""

from __future__ import annotations

import asyncio

import pytest

import ama.ai
from ama.ai import Context, ProviderError, StreamOptions, stream
from ama.messages import (
    AssistantMessage,
    ImageContent,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

from .helpers import TOOLS, body, collect, openai_model, types
from .server import Reply, fixture, split_events, split_every

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
async def _close_client():
    yield
    await ama.ai.aclose()


def ctx(*messages, system: str = "You are ama.") -> Context:
    return Context(system_prompt=system, messages=list(messages) or [UserMessage(content="hi")], tools=list(TOOLS))


async def test_text_stream_with_cached_usage(server):
    server.queue(Reply(chunks=split_every(fixture("openai_text.sse"), 5)))
    records: list[dict] = []
    model = openai_model(server.url)
    events, final = await collect(model, ctx(), StreamOptions(on_request=records.append, session_id="sess-1"))
    assert types(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    msg = final.message
    assert msg.content == [TextContent(text="Hello, wörld! ✓")] and msg.stop_reason == "stop"
    u = msg.usage
    # prompt_tokens includes the cached ones: input excludes them
    assert (u.input, u.output, u.cache_read, u.cache_write, u.total_tokens) == (52, 7, 2048, 0, 2107)
    assert u.cost.input == pytest.approx(52 * 2 / 1e6)
    assert u.cost.cache_read == pytest.approx(2048 * 0.5 / 1e6)
    assert u.cost.output == pytest.approx(7 * 8 / 1e6)

    (req,) = server.requests
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer sk-test"
    b = body(req)
    assert list(b) == ["model", "stream", "stream_options", "max_completion_tokens", "prompt_cache_key", "tools", "messages"]
    assert b["stream_options"] == {"include_usage": True}
    assert b["prompt_cache_key"] == "sess-1"
    assert b["tools"][0] == {
        "type": "function",
        "function": {"name": "read", "description": "Read a file", "parameters": TOOLS[0].parameters},
    }
    assert b["messages"] == [{"role": "system", "content": "You are ama."}, {"role": "user", "content": "hi"}]
    assert records[0]["httpStatus"] == 200 and records[0]["channel"] == "openai-completions"


async def test_tool_calls_with_arguments_split_across_chunks(server):
    server.queue(Reply(chunks=split_events(fixture("openai_tools.sse"))))
    events, final = await collect(openai_model(server.url), ctx())
    assert types(events) == [
        "start",
        "text_start", "text_delta", "text_end",
        "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_delta",
        "toolcall_start", "toolcall_delta", "toolcall_delta",
        "toolcall_end", "toolcall_end",  # parallel calls close together at the end
        "done",
    ]  # fmt: skip
    assert final.reason == "toolUse"
    assert final.message.content == [
        TextContent(text="Let me check."),
        ToolCall(id="call_DdmO9pD3xa9XTPNJ32zg2hcA", name="read", arguments={"path": "a.py"}, raw_arguments='{"path": "a.py"}'),
        ToolCall(id="call_xK2", name="bash", arguments={"command": "ls -la"}, raw_arguments='{"command": "ls -la"}'),
    ]
    assert final.message.usage.input == 300 and final.message.usage.output == 40


async def test_reasoning_content_of_compatible_servers(server):
    server.queue(Reply(chunks=split_events(fixture("openai_reasoning.sse"))))
    model = openai_model(server.url, provider="deepseek", id="deepseek-reasoner", cost=None, reasoning=True)
    events, final = await collect(model, ctx(), StreamOptions(thinking_level="high"))
    assert types(events) == [
        "start", "thinking_start", "thinking_delta", "thinking_delta", "thinking_end",
        "text_start", "text_delta", "text_end", "done",
    ]  # fmt: skip
    assert final.message.content == [
        ThinkingContent(thinking="Two plus two is four.", thinking_signature="reasoning_content"),
        TextContent(text="4"),
    ]
    u = final.message.usage
    assert (u.input, u.cache_read, u.output) == (36, 64, 12)
    assert u.cost is ama.messages.UNSET  # no price, no cost
    b = body(server.requests[0])
    assert "max_tokens" in b and "max_completion_tokens" not in b  # compatible servers
    assert b["reasoning_effort"] == "high" and "prompt_cache_key" not in b


async def test_history_conversion_on_the_wire(server):
    server.queue(Reply(chunks=[fixture("openai_text.sse")]))
    model = openai_model(server.url)
    long_id = "toolu_" + "x" * 60
    history = [
        UserMessage(content=[TextContent(text="see"), ImageContent(data="aGk=", mime_type="image/png")]),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="private", thinking_signature="sig"),
                TextContent(text="Reading."),
                ToolCall(id=long_id, name="read", arguments={"path": "a", "limit": 2}),
            ],
            api="anthropic-messages",
            provider="anthropic",
            model="claude-sonnet-4-5",
            stop_reason="toolUse",
        ),
        ToolResultMessage(
            tool_call_id=long_id,
            tool_name="read",
            content=[TextContent(text="A"), ImageContent(data="aW1n", mime_type="image/jpeg")],
        ),
        SystemMessage(content="Be brief."),
        UserMessage(content="go on"),
    ]
    await collect(model, ctx(*history))
    msgs = body(server.requests[0])["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "user", "system", "user"]
    assert msgs[1]["content"] == [
        {"type": "text", "text": "see"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGk="}},
    ]
    call = msgs[2]["tool_calls"][0]
    assert msgs[2]["content"] == "Reading." and "private" not in str(msgs[2])  # foreign thinking dropped
    assert len(call["id"]) <= 40 and call["id"] == msgs[3]["tool_call_id"]
    assert call["function"] == {"name": "read", "arguments": '{"path":"a","limit":2}'}  # their own order
    assert msgs[3]["content"] == "A"
    assert msgs[4]["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,aW1n"}}
    assert msgs[5] == {"role": "system", "content": "Be brief."}


@pytest.mark.parametrize(
    ("status", "name", "headers", "code", "retryable", "retry_after"),
    [
        (429, "openai_429.json", {"retry-after": "20"}, "rate_limited", True, 20.0),
        (500, "openai_500.json", {}, "server_error", True, None),
        (503, None, {}, "server_error", True, None),
        (404, None, {}, "invalid_request", False, None),
    ],
)
async def test_http_errors_are_classified(server, status, name, headers, code, retryable, retry_after):
    raw = fixture(name) if name else b"upstream says no"
    server.queue(Reply(status=status, chunks=[raw], headers=headers, content_type="application/json"))
    _, final = await collect(openai_model(server.url), ctx())
    err = final.error
    assert isinstance(err, ProviderError)
    assert (err.code, err.retryable, err.http_status, err.retry_after) == (code, retryable, status, retry_after)
    if name is None:
        assert "upstream says no" in final.message.error_message


async def test_error_object_inside_the_stream(server):
    chunks = [b'data: {"error":{"message":"Upstream overloaded","type":"overloaded_error"}}\n\n']
    server.queue(Reply(chunks=chunks))
    _, final = await collect(openai_model(server.url), ctx())
    assert final.error.code == "overloaded" and final.error.retryable
    assert "Upstream overloaded" in final.message.error_message


async def test_connection_dropped_mid_stream(server):
    server.queue(Reply(chunks=split_events(fixture("openai_tools.sse")), drop_after=4))
    events, final = await collect(openai_model(server.url), ctx())
    assert final.error.code == "network" and final.error.retryable
    # the partial tool call is closed with the arguments parsed so far ({} when incomplete)
    assert types(events)[-4:] == ["toolcall_delta", "toolcall_delta", "toolcall_end", "error"]
    assert final.message.content[0] == TextContent(text="Let me check.")
    assert final.message.content[1].arguments == {}


async def test_abort_mid_stream(server):
    server.queue(Reply(chunks=split_events(fixture("openai_text.sse")), hang_after=2))
    abort = asyncio.Event()
    events = []
    async for ev in stream(openai_model(server.url), ctx(), StreamOptions(abort=abort)):
        events.append(ev)
        if ev.type == "text_delta":
            abort.set()
    assert types(events) == ["start", "text_start", "text_delta", "text_end", "error"]
    assert events[-1].reason == "aborted"
    assert events[-1].message.content == [TextContent(text="Hello")]


async def test_local_server_without_key_and_compat(server):
    server.queue(Reply(chunks=[fixture("openai_text.sse")]))
    model = openai_model(
        server.url,
        provider="ollama",
        id="qwen3:8b",
        api_key=None,
        cost=None,
        compat={"maxTokensField": "max_completion_tokens", "streamUsage": False},
    )
    await collect(model, ctx())
    req = server.requests[0]
    assert "authorization" not in req.headers
    b = body(req)
    assert "stream_options" not in b and b["max_completion_tokens"] == 32_768


async def test_request_bytes_are_stable_and_prefix_shared(server):
    for _ in range(3):
        server.queue(Reply(chunks=[fixture("openai_text.sse")]))
    model = openai_model(server.url)
    first = [
        UserMessage(content="read a"),
        AssistantMessage(
            content=[ToolCall(id="call_1", name="read", arguments={"path": "a", "limit": 3})],
            api="openai-completions",
            provider="openai",
            model="gpt-4.1",
            stop_reason="toolUse",
        ),
        ToolResultMessage(tool_call_id="call_1", tool_name="read", content=[TextContent(text="content of a")]),
    ]
    second = [*first, AssistantMessage(content=[TextContent(text="done")], api="openai-completions",
                                       provider="openai", model="gpt-4.1"), UserMessage(content="more")]  # fmt: skip
    opts = StreamOptions(session_id="s1")
    await collect(model, ctx(*first), opts)
    await collect(model, ctx(*first), opts)
    await collect(model, ctx(*second), opts)
    b1, b1again, b2 = (r.body for r in server.requests)
    assert b1 == b1again
    assert b1.endswith(b"]}")
    assert b2.startswith(b1[:-2])
