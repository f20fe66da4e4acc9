from __future__ import annotations

import json
from typing import Any

from ama.ai import Context, Model, ModelCost, Rebuilder, StreamOptions, ToolSpec, stream
from ama.ai.events import DoneEvent, ErrorEvent, Event

TOOLS = [
    ToolSpec(
        name="read",
        description="Read a file",
        parameters={
            "type": "object",
            "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["path"],
        },
    ),
    ToolSpec(name="ls", description="List a directory", parameters={"type": "object", "properties": {}}),
]


def anthropic_model(url: str, **kw: Any) -> Model:
    base: dict[str, Any] = dict(
        provider="anthropic",
        id="claude-sonnet-4-5",
        api="anthropic-messages",
        base_url=url,
        context_window=200_000,
        max_tokens=64_000,
        cost=ModelCost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75),
        reasoning=True,
        api_key="sk-ant-test",
    )
    base.update(kw)
    return Model(**base)


def openai_model(url: str, **kw: Any) -> Model:
    base: dict[str, Any] = dict(
        provider="openai",
        id="gpt-4.1",
        api="openai-completions",
        base_url=url + "/v1",
        context_window=1_047_576,
        max_tokens=32_768,
        cost=ModelCost(input=2.0, output=8.0, cache_read=0.5),
        api_key="sk-test",
    )
    base.update(kw)
    return Model(**base)


async def collect(model: Model, context: Context, options: StreamOptions | None = None) -> tuple[list[Event], Any]:
    """All events of one stream; asserts the stream's shape and that deltas rebuild the message."""
    events: list[Event] = []
    rebuilt = Rebuilder()
    async for ev in stream(model, context, options or StreamOptions()):
        events.append(ev)
        rebuilt.apply(ev)
    assert events[0].type == "start"
    final = events[-1]
    assert isinstance(final, DoneEvent | ErrorEvent)
    assert sum(isinstance(e, DoneEvent | ErrorEvent) for e in events) == 1
    assert rebuilt.message == final.message
    return events, final


def types(events: list[Event]) -> list[str]:
    return [e.type for e in events]


def body(request: Any) -> dict:
    return json.loads(request.body)
