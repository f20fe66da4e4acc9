"""``get_messages`` encodes its messages straight from their structs (``messages_json``)
and the writer splices that text into the line (``jsonl.RawJSON``, ``dump_parts``): the
line is byte for byte what ``json`` writes of the builtins, ``{"entryId": id,
**plain(message)}`` (floats msgspec spells otherwise take ``json``'s way)."""

from __future__ import annotations

import json
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from ama.agent.events import plain
from ama.messages import AssistantMessage, Cost, TextContent, ToolCall, ToolResultMessage, Usage, UserMessage
from ama.rpc.commands import messages_json
from ama.rpc.jsonl import RawJSON, dump_parts, dumps

TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)  # (no lone surrogates: not UTF-8)
NUMBER = st.integers(-(2**70), 2**70) | st.floats() | st.sampled_from([1e-05, 9.93e-05, 1e16, 1.5e300, 0.0001, -0.0])
JSONISH = st.recursive(
    st.none() | st.booleans() | NUMBER | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=12,
)
USER = st.builds(UserMessage, content=TEXT | st.lists(st.builds(TextContent, text=TEXT), max_size=2), timestamp=st.integers(0, 2**53))
ASSISTANT = st.builds(
    AssistantMessage,
    content=st.lists(st.builds(TextContent, text=TEXT) | st.builds(ToolCall, id=TEXT, name=TEXT, arguments=st.dictionaries(TEXT, JSONISH, max_size=3)), max_size=3),
    model=TEXT,
    usage=st.builds(Usage, input=st.integers(0, 2**40), cost=st.builds(Cost, total=st.floats(0, 1e6), cache_read=st.floats(0, 1e-3))),
    timestamp=st.integers(0, 2**53),
)
RESULT = st.builds(ToolResultMessage, tool_call_id=TEXT, content=st.lists(st.builds(TextContent, text=TEXT), max_size=2), details=JSONISH, is_error=st.booleans())
ENTRIES = st.lists(st.builds(SimpleNamespace, id=TEXT, message=USER | ASSISTANT | RESULT), max_size=6)


def _builtins(entries: list) -> list:
    return [{"entryId": e.id, **plain(e.message)} for e in entries]


@settings(max_examples=300, deadline=None)
@given(ENTRIES, st.integers(0, 2))
def test_the_line_is_jsons_byte_for_byte(entries: list, rid: int) -> None:
    old = dumps({"type": "response", "id": rid, "data": {"messages": _builtins(entries)}, "n": 1.5})
    assert dumps({"type": "response", "id": rid, "data": {"messages": messages_json(entries)}, "n": 1.5}) == old


def test_a_message_msgspec_cannot_encode_goes_the_builtins_way() -> None:
    """A ``True`` dict key (msgspec refuses it; ``json`` writes "true")."""
    e = SimpleNamespace(id="e1", message=ToolResultMessage(tool_call_id="c", details={True: 1, "x": [1.5]}))
    assert b"".join(messages_json([e]).parts) == (
        b'[{"entryId":"e1","role":"toolResult","toolCallId":"c","toolName":"","content":[],'
        b'"details":{"true":1,"x":[1.5]},"isError":false,"timestamp":0}]'
    )


def test_no_messages_is_an_empty_list() -> None:
    assert b"".join(messages_json([]).parts) == b"[]"


def test_raw_parts_are_spliced_where_the_value_stands() -> None:
    obj = {"a": RawJSON([b"[1,", b"2]"]), "b": ["\x00raw-x\x00", "\\u0000"], "c": RawJSON([b"{}"])}
    parts = dump_parts(obj)
    assert b"[1," in parts and b"2]" in parts  # (not joined)
    assert json.loads(b"".join(parts)) == {"a": [1, 2], "b": ["\x00raw-x\x00", "\\u0000"], "c": {}}
    assert dumps({"plain": 1}) == b'{"plain":1}\n'
