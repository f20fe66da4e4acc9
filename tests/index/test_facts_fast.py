"""The fast ways through stats facts give exactly what the definition gives.

The definition (docs/stats.md): a line counts when :data:`facts.RELEVANT` keeps it, for what
the lenient shape reads in it (:func:`facts.handle_lenient`).  The index calls
:func:`facts.handle` (strict shapes first) per line; a cold scan calls
:func:`facts.scan_facts` over a whole file (routing by the role's offset, sums per file).
Both are compared here with the definition on random lines: valid entries of every kind in
ama's compact layout, Python's spacing and other key orders, with odd values, repeated keys
and escapes, and damaged lines of any bytes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ama.index import facts as F
from ama.index.fact_shapes import LAYOUT
from ama.index.timeutil import Days

HEADER = b'{"type":"session","version":3,"id":"s1","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/p"}\n'


# --- random lines -------------------------------------------------------------------------

TIMESTAMPS = [
    "2026-03-01T10:00:00.000Z",
    "2026-03-01T10:00:07.250Z",
    "2026-03-01T10:01:59.999Z",
    "2026-03-01T23:59:30.000Z",
    "2026-03-02T00:00:05.000Z",
    "2026-03-01T10:00:75.000Z",  # seconds out of range
    "2026-03-01T10:00:07.250+02:00",
    "2026-03-01T10:00:07Z",
    "2026-03-01",
    "garbage",
    "",
]
ODD = st.sampled_from([None, True, False, 0, -1, 1.5, 10**20, 10**400 // 10**380, "x", [], {}, [1], {"a": 1}])
TEXT = st.sampled_from(["", "a", 'q"uote', "back\\slash", "nl\nline", "é", "\u2028", "toolResult", "system"])
NUM = st.one_of(
    st.integers(min_value=-5, max_value=10**6),
    st.sampled_from([0, 10**17, 10**18, 2**63, 2**64, -(10**18)]),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.sampled_from([1e308, -1e308, 1e-300, 0.5, 99999999.9, 100000000.0]),
    ODD,
)


def _maybe(strategy: Any) -> Any:
    return st.one_of(strategy, ODD)


def _cost() -> Any:
    return st.one_of(st.fixed_dictionaries({}, optional={"total": NUM, "input": NUM}), ODD)


def _usage() -> Any:
    return st.one_of(
        st.fixed_dictionaries(
            {},
            optional={
                "input": NUM,
                "output": NUM,
                "cacheRead": NUM,
                "cacheWrite": NUM,
                "totalTokens": NUM,
                "cost": _cost(),
            },
        ),
        ODD,
    )


def _block() -> Any:
    return st.one_of(
        st.fixed_dictionaries(
            {},
            optional={
                "type": _maybe(st.sampled_from(["text", "toolCall", "thinking", "image"])),
                "name": _maybe(st.sampled_from(["read", "bash", "edit"])),
                "text": TEXT,
                "arguments": st.sampled_from([{}, {"path": "a"}, {"role": "assistant"}]),
            },
        ),
        ODD,
    )


def _message() -> Any:
    return st.fixed_dictionaries(
        {},
        optional={
            "role": _maybe(
                st.sampled_from(["assistant", "user", "toolResult", "bashExecution", "system", "custom"])
            ),
            "content": st.one_of(st.lists(_block(), max_size=3), TEXT, ODD),
            "provider": _maybe(st.sampled_from(["anthropic", "openai"])),
            "model": _maybe(st.sampled_from(["claude", "gpt"])),
            "usage": _usage(),
            "stopReason": _maybe(st.sampled_from(["stop", "toolUse", "error"])),
            "origin": _maybe(st.sampled_from(["steer", "followUp"])),
            "timestamp": NUM,
        },
    )


def _data() -> Any:
    return st.one_of(
        st.fixed_dictionaries(
            {},
            optional={
                "purpose": _maybe(st.just("conversation")),
                "provider": _maybe(st.just("anthropic")),
                "model": _maybe(st.just("claude")),
                "channel": _maybe(st.just("main")),
                "firstByteMs": NUM,
                "durationMs": NUM,
                "httpStatus": NUM,
                "attempt": NUM,
                "agent": _maybe(st.just("claude")),
                "unit": st.sampled_from(["usd", "tokens", "requests", "x"]),
                "amount": NUM,
                "tokens": st.one_of(st.fixed_dictionaries({}, optional={"input": NUM, "output": NUM}), ODD),
                "sessionId": _maybe(st.just("ext-1")),
            },
        ),
        ODD,
    )


@st.composite
def entries(draw: Any) -> list[tuple[str, Any]]:
    """An entry as an ordered list of top-level pairs (ama's key order first)."""
    typ = draw(
        _maybe(
            st.sampled_from(
                [
                    "message",
                    "message",
                    "message",
                    "usage",
                    "compaction",
                    "branch_summary",
                    "context_edit",
                    "model_change",
                    "custom",
                    "label",
                    "leaf",
                    "thinking_level_change",
                    "session_info",
                    "weird",
                ]
            )
        )
    )
    pairs: list[tuple[str, Any]] = [
        ("type", typ),
        ("id", draw(st.one_of(st.sampled_from(["0000000a", "ab12cd34"]), TEXT))),
        ("parentId", draw(st.sampled_from([None, "0000000a", 'a"b', "a\\b"]))),
        ("timestamp", draw(st.one_of(st.sampled_from(TIMESTAMPS), ODD))),
    ]
    if typ == "message" or draw(st.booleans()):
        pairs.append(("message", draw(st.one_of(_message(), ODD))))
    extra = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "kind": _maybe(st.sampled_from(["cache_warm", "permission_classify"])),
                "provider": _maybe(st.sampled_from(["anthropic", "openai"])),
                "model": _maybe(st.sampled_from(["claude", "gpt"])),
                "modelId": _maybe(st.sampled_from(["claude", "gpt"])),
                "channel": _maybe(st.just("main")),
                "usage": _usage(),
                "reason": _maybe(st.just("retry")),
                "customType": _maybe(st.sampled_from(["ama.request", "ama.agent-usage", "ama.todo"])),
                "data": _data(),
            },
        )
    )
    pairs += list(extra.items())
    return pairs


def _dump(value: Any, sep: tuple[str, str], order: str) -> str:
    if isinstance(value, dict):
        return _pairs(list(value.items()), sep, order)
    if isinstance(value, list):
        return "[" + sep[0].join(_dump(v, sep, order) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _pairs(pairs: list[tuple[str, Any]], sep: tuple[str, str], order: str) -> str:
    if order == "reversed":
        pairs = pairs[::-1]
    return "{" + sep[0].join(json.dumps(k) + sep[1] + _dump(v, sep, order) for k, v in pairs) + "}"


SEPS = {"compact": (",", ":"), "spaced": (", ", ": ")}


@st.composite
def lines(draw: Any) -> bytes:
    """One line: an entry in some layout, maybe with a repeated key, maybe damaged."""
    pairs = draw(entries())
    kind = draw(
        st.sampled_from(["compact", "spaced", "compact", "spaced", "reversed", "dup", "damaged", "bytes"])
    )
    if kind == "bytes":
        return draw(st.binary(max_size=60)).replace(b"\n", b"")
    if kind == "dup":  # a repeated decisive key, before or after the first one
        key, value = draw(
            st.sampled_from(
                [
                    ("type", "label"),
                    ("type", "message"),
                    ("type", "usage"),
                    ("message", {"role": "toolResult"}),
                    ("message", {"role": "assistant", "usage": {"input": 5}}),
                    ("customType", "ama.todo"),
                ]
            )
        )
        at = draw(st.integers(min_value=0, max_value=len(pairs)))
        pairs = pairs[:at] + [(key, value)] + pairs[at:]
    sep = SEPS["spaced" if kind == "spaced" else "compact"]
    text = _pairs(pairs, sep, "reversed" if kind == "reversed" else "ama").encode()
    if kind == "damaged":
        cut = draw(st.integers(min_value=0, max_value=len(text)))
        text = text[:cut] + draw(st.binary(max_size=4)).replace(b"\n", b"")
    return text


# --- the definition and the fast ways ---------------------------------------------------------


def by_definition(body: bytes) -> tuple:
    s, f = F.StatsState(), F.Facts()
    days = Days()
    for line in body.split(b"\n"):
        if F.RELEVANT.match(b"\n" + line):
            F.handle_lenient(line, s, f, days)
    return _result(s, f)


def by_handle(body: bytes) -> tuple:
    s, f = F.StatsState(), F.Facts()
    days = Days()
    for line in body.split(b"\n"):
        if F.RELEVANT.match(b"\n" + line):
            F.handle(line, s, f, days)
    return _result(s, f)


def by_scan(body: bytes) -> tuple:
    s, f = F.StatsState(), F.Facts()
    data = HEADER + body
    F.scan_facts(data, len(HEADER), len(data), s, f, Days())
    return _result(s, f)


def _result(s: F.StatsState, f: F.Facts) -> tuple:
    return (f.req, f.turns, f.tools, f.latency, f.external, s.mc, s.ep, s.turn, F.open_turn(s))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lines(), max_size=12))
def test_the_fast_ways_count_random_lines_as_the_definition_does(body_lines: list[bytes]) -> None:
    body = b"\n".join(body_lines)
    want = by_definition(body)
    assert by_handle(body) == want
    assert by_scan(body) == want


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(entries(), min_size=1, max_size=8))
def test_layout_does_not_change_the_facts(pairs_list: list[list[tuple[str, Any]]]) -> None:
    """Without repeated keys, ama's layout, Python's spacing and reversed keys all count the
    same, by the definition and by the scan."""
    bodies = [
        b"\n".join(_pairs(pairs, SEPS[sep], order).encode() for pairs in pairs_list)
        for sep, order in (
            ("compact", "ama"),
            ("spaced", "ama"),
            ("spaced", "reversed"),
            ("compact", "reversed"),
        )
    ]
    want = by_definition(bodies[0])
    for body in bodies:
        assert by_definition(body) == want
        assert by_scan(body) == want


# --- chosen lines -----------------------------------------------------------------------------

A = (
    b'{"type":"message","id":"0000000b","parentId":"0000000a","timestamp":"2026-03-01T10:00:05.000Z",'
    b'"message":{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"toolCall","id":"c",'
    b'"name":"read","arguments":{}}],"provider":"anthropic","model":"claude","usage":{"input":10,"output":2,'
    b'"cacheRead":3,"cacheWrite":4,"totalTokens":19,"cost":{"total":0.5}},"stopReason":"toolUse"}}'
)
U = (
    b'{"type":"message","id":"0000000a","parentId":null,"timestamp":"2026-03-01T10:00:00.000Z",'
    b'"message":{"role":"user","content":"hi"}}'
)
T = (
    b'{"type":"message","id":"0000000c","parentId":"0000000b","timestamp":"2026-03-01T10:00:06.000Z",'
    b'"message":{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":"r"}]}}'
)


def spaced(line: bytes) -> bytes:
    return json.dumps(json.loads(line)).encode()


def reversed_keys(line: bytes) -> bytes:
    return _pairs(list(json.loads(line).items()), SEPS["spaced"], "reversed").encode()


def escaped(line: bytes) -> bytes:
    """The same JSON with every string's ASCII letters as \\u escapes where allowed."""
    return json.dumps(json.loads(line), ensure_ascii=True).replace("toolResult", "tool\\u0052esult").encode()


def test_lines_that_differ_only_in_layout_count_the_same() -> None:
    body = b"\n".join([U, A, T, A])
    want = by_definition(body)
    assert want[0] and want[2]  # a request and a tool call counted
    for style in (spaced, reversed_keys, escaped):
        other = b"\n".join(style(x) for x in (U, A, T, A))
        assert other != body
        assert by_definition(other) == want
        assert by_scan(other) == want
        assert by_handle(other) == want


@pytest.mark.parametrize(
    "odd",
    [
        A.replace(b'"input":10', b'"input":10.0'),  # a float count: only the lenient shape reads it
        A.replace(b'"input":10', b'"input":true'),
        A.replace(b'"input":10', b'"input":100000000000000000000'),  # beyond 64 bits: counts as 0
        A.replace(b'"total":0.5', b'"total":1e300'),  # no price, no overflow
        A.replace(b'"total":0.5', b'"total":"0.5"'),
        A.replace(b'{"type":"text","text":"x"}', b'{"type":null,"name":"x"}'),
        A.replace(b'"name":"read",', b""),  # a tool call without a name
        A.replace(b'"timestamp":"2026-03-01T10:00:05.000Z"', b'"timestamp":5'),
        A.replace(b'"provider":"anthropic"', b'"provider":null'),
        A.replace(b'"role":"assistant",', b"").replace(
            b'{"type":"message",', b'{"type":"message","role":"assistant",'
        ),
        A.replace(b'"stopReason"', b'"usage":[1],"stopReason"', 1).replace(
            b'"message":{', b'"usage":7,"message":{'
        ),
        A[:-1] + b',"type":"label"}',  # a repeated type: the last one decides
        A.replace(b'"type":"message",', b'"type":"label","type":"message",', 1),  # the first one: skipped
        A.replace(b'"message":{', b'"message":{"role":"toolResult"},"message":{', 1),
        U.replace(b'"content":"hi"', b'"content":[1]'),  # the lenient shape rejects the line
        U.replace(b'"content":"hi"', b'"content":"hi","origin":"steer"'),
        U.replace(b'"content":"hi"', b'"content":"hi","origin":5'),
        T.replace(b'"role":"toolResult"', b'"role":"toolResult","role":"user"'),
        T.replace(b'"0000000c"', b'"0000\\"000c"'),  # an escape before the role: parsed
        T[:-1] + b',"type":"usage","usage":{"input":9}}',
        A[: len(A) // 2],  # cut in the middle
        A[: A.index(b'"role":') + 7],  # cut right after the role's key
        A[: A.index(b'"role":') + 8],
        spaced(A)[: spaced(A).index(b'"role":') + 8],
    ],
)
def test_a_line_the_fast_way_cannot_take_counts_as_the_definition_says(odd: bytes) -> None:
    for body in (
        b"\n".join([U, odd, A]),
        b"\n".join([U, A, odd]),
        odd,
        spaced(odd) if _json(odd) else odd,
        reversed_keys(odd) if _json(odd) else odd,
    ):
        want = by_definition(body)
        assert by_scan(body) == want
        assert by_handle(body) == want


def _json(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def test_the_layout_pattern_skips_only_what_the_prefilter_skips() -> None:
    """Every line that LAYOUT lets the scan skip is one RELEVANT skips."""
    ids = [b"0000000a", b"a b", b"", b"x\\y", b'a"b', b"\xc3\xa9", b"a\tb"]
    roles = [b"toolResult", b"bashExecution", b"system", b"custom", b"assistant", b"user", b"other"]
    checked = 0
    for sep, colon in ((b",", b":"), (b", ", b": ")):
        for i in ids:
            for parent in (b"null", b'"' + i + b'"'):
                for role in roles:
                    line = (
                        b'{"type"' + colon + b'"message"' + sep + b'"id"' + colon + b'"' + i + b'"' + sep
                        + b'"parentId"' + colon + parent + sep + b'"timestamp"' + colon + b'"t"' + sep
                        + b'"message"' + colon + b'{"role"' + colon + b'"' + role + b'","content":[]}}'
                    )  # fmt: skip
                    m = LAYOUT.match(line)
                    if m is not None and m.lastindex == 3:
                        checked += 1
                        assert F.RELEVANT.match(b"\n" + line) is None, line
    assert checked >= 2 * 5 * 2 * 4  # the plain ids, in both spacings, for the four roles


def test_the_role_offset_learned_from_one_line_never_misleads_the_next() -> None:
    """Lines whose role sits at another offset (a longer id, another layout, a line that is
    not an entry at all) still count as the definition says."""
    longer = A.replace(b'"0000000b"', b'"0000000b0000000b"')
    body = b"\n".join([U, A, T, longer, spaced(T), spaced(A), b"a" * 200, T, A, U])
    assert by_scan(body) == by_definition(body)
