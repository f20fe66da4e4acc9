"""The streamed JSON of ``show --json --context`` is, byte for byte, what ``print_json``
(``json.dumps(indent=2, ensure_ascii=False)``) writes: every float, string and shape."""

from __future__ import annotations

import io
import json
import math

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from ama.cli.json_stream import indented, write_json_stream
from ama.messages import AssistantMessage, Cost, TextContent, ToolCall, ToolResultMessage, Usage, UserMessage

plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=5), kids, max_size=4),
    max_leaves=12,
)


def _reference(obj: object) -> str:
    return json.dumps(msgspec.to_builtins(obj), ensure_ascii=False, indent=2)


@settings(max_examples=400, deadline=None)
@given(value=plain)
def test_plain_values(value: object) -> None:
    assert indented(value) == _reference(value)


@settings(max_examples=300, deadline=None)
@given(x=st.floats(allow_nan=False), args=plain, text=st.text())
def test_messages_with_any_floats_and_text(x: float, args: object, text: str) -> None:
    msgs = [
        AssistantMessage(
            content=[TextContent(text=text), ToolCall(id="c", name="n", arguments={"a": args, "x": x})],
            usage=Usage(input=1, cost=Cost(input=x, total=abs(x) / 3 if math.isfinite(x) else 0.0)),
        ),
        ToolResultMessage(tool_call_id="c", content=[TextContent(text=text)], details={"x": [x, args]}),
        UserMessage(content=text, timestamp=7),
    ]
    for m in msgs:
        assert indented(m) == _reference(m)
        assert indented(m, 2) == _reference(m).replace("\n", "\n    ")


def test_floats_msgspec_writes_otherwise_and_non_finite_ones() -> None:
    for x in (1e-05, 1e16, 2.5e-07, 1e20, -3e-300, 5e-324, 1.7976931348623157e308, float("inf"), float("-inf"), float("nan")):
        assert indented({"x": x}) == json.dumps({"x": x}, indent=2)
        assert indented(Cost(input=x)) == _reference(Cost(input=x))


def test_the_stream_is_print_json_of_the_whole() -> None:
    items = [UserMessage(content="é \u2028 \x00 \"q\"", timestamp=1), AssistantMessage(usage=Usage(cost=Cost(total=1e-7)))]
    items += [AssistantMessage(usage=Usage(cost=Cost(total=float("inf")))), UserMessage(content="x"), ToolResultMessage(tool_call_id="c", details={"n": float("nan")})]
    for head, key, its, tail in (
        ({"id": "a", "leafId": None}, "messages", items, {"entryIds": [["x"], []], "model": None, "thinkingLevel": "off"}),
        ({"id": "a"}, "messages", [], {"entryIds": []}),
        ({}, "messages", items[:1], {}),
        ({"messages": "dropped", "z": 1e16}, "messages", items, {"z": "kept from head", "t": {}}),
    ):
        whole = {k: v for k, v in head.items() if k != key} | {key: msgspec.to_builtins(its)}
        whole |= {k: v for k, v in tail.items() if k not in whole}
        for batch in (1, 50, 64 << 10):  # an item at a time, a few, all at once
            out = io.StringIO()
            write_json_stream(head, key, iter(its), tail, out, batch_bytes=batch)
            assert out.getvalue() == json.dumps(whole, ensure_ascii=False, indent=2) + "\n"
