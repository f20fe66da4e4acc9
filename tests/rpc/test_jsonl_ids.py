"""Request ids recovered from lines that do not parse (invalid UTF-8, too large, broken)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ama.rpc.jsonl import IdScanner, sniff_id


@pytest.mark.parametrize(
    ("line", "rid"),
    [
        (b'{"type": "get_state", "id": "a1"', "a1"),  # cut short
        (b'{"type":"prompt","message":"caf\xff","id":"u1"}', "u1"),  # invalid UTF-8 before the id
        (b'{"a":{"id":1},"m":"\\"id\\":3","id":-4}', -4),  # nested and quoted ids are not it
        (b'{"id" : 12345 , "type":1}', 12345),
        (b'{"id":"r\\u00e9"}', "r\u00e9"),
        (b'{"id":"\xff"}', None),  # the id itself is not UTF-8
        (b'[{"id":1}]', None),  # not an object
        (b'{"id":true}', None),
        (b'{"id":1.5}', None),
        (b'{"id":"' + b"x" * 201 + b'"}', None),  # longer than 200 bytes
        (b'{"type":"x"}', None),
        (b'{"type":"x"} {"id":"after"}', None),  # after the object ended
    ],
)
def test_sniff_id(line: bytes, rid: object) -> None:
    assert sniff_id(line) == rid


def _big_line() -> bytes:
    message = 'a\\"b\\\\' * 200_000 + "\u00e9"
    obj = {"type": "prompt", "message": message, "images": [{"id": 9, "data": "{[\"id\":"}], "id": "late"}
    return json.dumps(obj, ensure_ascii=False).encode()


BIG = _big_line()


@settings(deadline=None, max_examples=25)
@given(st.lists(st.integers(min_value=1, max_value=len(BIG) - 1), max_size=40))
def test_the_id_is_found_however_the_line_is_split(cuts: list[int]) -> None:
    bounds = [0, *sorted(set(cuts)), len(BIG)]
    scan = IdScanner()
    for a, b in zip(bounds, bounds[1:]):
        scan.feed(BIG[a:b])
    scan.feed(b"")
    assert scan.result == "late"


@settings(deadline=None)
@given(st.integers(min_value=-(10**17), max_value=10**17), st.integers(min_value=1, max_value=30))
def test_integer_ids_split_anywhere(rid: int, cut: int) -> None:
    line = json.dumps({"type": "get_state", "id": rid}).encode()
    cut = min(cut, len(line) - 1)
    scan = IdScanner()
    scan.feed(line[:cut])
    scan.feed(line[cut:])
    scan.feed(b"")
    assert scan.result == rid


@pytest.mark.parametrize(
    ("line", "command"),
    [
        (b'{"id":1,"type":"steer","message":"\xff"}', "steer"),
        (b'{"message":"\xff","type":"follow_up"', "follow_up"),  # cut short after the type
        (b'{"id":{"x":1},"type":"prompt","m":"\xff"}', "prompt"),  # an object id is walked past
        (b'{"type":7,"id":"a"}', None),
        (b'{"x":{"type":"nested"}}', None),
    ],
)
def test_the_command_is_recovered_too(line: bytes, command: str | None) -> None:
    from ama.rpc.jsonl import scan_line

    assert scan_line(line).command == command


def test_the_big_line_shows_its_command() -> None:
    from ama.rpc.jsonl import scan_line

    scan = scan_line(BIG)
    assert (scan.result, scan.command) == ("late", "prompt")
