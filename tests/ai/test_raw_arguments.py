"""Tool-call arguments keep the bytes the model sent: stream -> message -> session file ->
projection -> the next request, on both adapters (real local server, real session file)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ama.ai
from ama.ai import Context
from ama.messages import TextContent, ToolCall, ToolResultMessage, UserMessage
from ama.session.store import Session

from .helpers import TOOLS, anthropic_model, collect, openai_model
from .server import Reply, fixture, split_events

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
async def _close_client():
    yield
    await ama.ai.aclose()


async def _round_trip(server, model, sse: str, tmp_path: Path) -> tuple[list[ToolCall], bytes]:
    server.queue(Reply(chunks=split_events(fixture(sse))))
    first = Context(system_prompt="", messages=[UserMessage(content="read it")], tools=list(TOOLS))
    _, final = await collect(model, first)
    s = Session.create("/w", tmp_path)
    s.append_message(UserMessage(content="read it"))
    s.append_message(final.message)
    calls = [b for b in final.message.content if isinstance(b, ToolCall)]
    for c in calls:
        s.append_message(ToolResultMessage(tool_call_id=c.id, tool_name=c.name, content=[TextContent(text="ok")]))
    s.close()
    replay = Session.load(s.path).context()  # from the file
    server.queue(Reply(chunks=split_events(fixture(sse))))
    await collect(model, Context(system_prompt="", messages=replay.messages, tools=list(TOOLS)))
    return calls, server.requests[-1].body


async def test_openai_replays_the_arguments_string_the_model_sent(server, tmp_path: Path):
    calls, body = await _round_trip(server, openai_model(server.url), "openai_tools.sse", tmp_path)
    assert [c.raw_arguments for c in calls] == ['{"path": "a.py"}', '{"command": "ls -la"}']
    assert b'"arguments":"{\\"path\\": \\"a.py\\"}"' in body
    assert b'"arguments":"{\\"command\\": \\"ls -la\\"}"' in body


async def test_anthropic_replays_the_input_in_the_models_key_order(server, tmp_path: Path):
    calls, body = await _round_trip(server, anthropic_model(server.url), "anthropic_thinking_tools.sse", tmp_path)
    assert calls[0].raw_arguments == '{"path": "src/main.py", "limit": 40}'
    assert b'"input":{"path": "src/main.py", "limit": 40}' in body  # not re-sorted to limit, path


async def test_compact_arguments_are_not_stored_twice():
    from ama.ai.builder import compact_json
    from ama.ai.convert import arguments_json

    call = ToolCall(id="c", name="read", arguments={"path": "a", "limit": 2})
    assert compact_json(call.arguments) == '{"path":"a","limit":2}'
    assert arguments_json(call) == '{"path":"a","limit":2}'  # their own order, compact
