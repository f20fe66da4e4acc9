"""The raw prefilter of ``ama sessions search`` (index/pattern.py): it may let through lines
that do not match, never one that does, whatever the JSON spelling of the text; and the
whole-file test of the scan agrees with the line test."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ama.errors import InvalidArguments
from ama.index.pattern import Pattern

# characters that lowercase oddly (İ, the Kelvin sign), need escapes, or are not ASCII
ALPHABET = "aAbBiIkKpPrRsSeExXyYzZqQ /.-_{}:,0189\u0130\u212aéÜünï\"\\\n\t\x1b"
HEADER = b'{"type":"session","version":3,"id":"s1","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/p"}\n'


def _spell(ch: str, how: int) -> str:
    """``ch`` inside a JSON string: as itself when JSON allows it, or escaped."""
    short = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\n": "\\n", "\t": "\\t"}
    if how == 0 and ch not in '"\\' and ch >= " ":
        return ch
    if how == 1 and ch in short:
        return short[ch]
    code = f"{ord(ch):04x}"
    return "\\u" + (code.upper() if how == 2 else code)


@st.composite
def spelled(draw: st.DrawFn) -> tuple[str, bytes]:
    """A text and one JSON string literal of it (any mix of escapes)."""
    text = draw(st.text(alphabet=ALPHABET, min_size=1, max_size=30))
    hows = draw(st.lists(st.integers(0, 3), min_size=len(text), max_size=len(text)))
    return text, ('"' + "".join(_spell(c, h) for c, h in zip(text, hows, strict=True)) + '"').encode()


def _user_line(literal: bytes) -> bytes:
    return (
        b'{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T10:00:01.000Z",'
        b'"message":{"role":"user","content":' + literal + b',"timestamp":0}}\n'
    )


@settings(max_examples=400, deadline=None)
@given(spelled(), st.data())
def test_a_match_is_never_filtered_out(sp: tuple[str, bytes], data: st.DataObject) -> None:
    text, literal = sp
    assert json.loads(literal) == text
    a = data.draw(st.integers(0, len(text) - 1))
    b = data.draw(st.integers(a + 1, len(text)))
    flips = data.draw(st.lists(st.booleans(), min_size=b - a, max_size=b - a))
    kw = "".join(c.swapcase() if f else c for c, f in zip(text[a:b], flips, strict=True))
    if not kw.strip(" ") or re.fullmatch(r"/.*/[a-zA-Z]*", kw, re.DOTALL):
        return  # (no keyword, or /.../ that reads as a regular expression: "//" is refused)
    p = Pattern(kw)
    if p.find(text) is None:  # (swapcase is not always undone by lower: ß, İ)
        return
    noise = data.draw(st.sampled_from([b"", b"\xff\xfe not json\n", b'{"type":"leaf","targetId":null}\n']))
    file = HEADER + noise + _user_line(literal)
    start = len(HEADER)
    cand = p.candidate_lines(file, start)
    assert cand is None or len(HEADER) + len(noise) in cand
    assert p.may_match(file, start) and p.may_match(file, start, raw_first=True)


LINES = st.one_of(
    spelled().map(lambda sp: _user_line(sp[1])),
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b" ") + b"\n"),
    st.just(b'{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","name":"x"}]}}\n'),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(LINES, max_size=6), st.text(alphabet=ALPHABET, min_size=1, max_size=6))
def test_the_file_test_agrees_with_the_line_test(lines: list[bytes], kw: str) -> None:
    """``may_match`` is False exactly when ``candidate_lines`` finds no line."""
    try:
        p = Pattern(kw)
    except InvalidArguments:  # "//": a regex that matches the empty string
        return
    file = HEADER + b"".join(lines)
    for start in (0, len(HEADER)):
        want = p.candidate_lines(file, start) != set()
        assert p.may_match(file, start) is want
        assert p.may_match(file, start, raw_first=True) is want


def test_examples_of_hidden_matches() -> None:
    """Spellings a plain ``find`` would miss: each is let through."""
    cases = [
        ("parser", b'"PA\\u0052SER"'),  # an escaped letter
        ("parser", b'"PA\\u0072SER"'),
        ("src/lexer.py", b'"src\\/lexer.py"'),  # JSON's escaped slash
        ("qi", '"QİQ"'.encode()),  # İ lowers to i + a combining dot
        ("qi", b'"Q\\u0130Q"'),
        ("qkq", '"Q\u212aQ"'.encode()),  # the Kelvin sign lowers to k
        ("qkq", b'"Q\\u212AQ"'),
        ("ünïcode", b'"\\u00dcn\\u00efcode"'),
        ("crash fix", b'"crash fix"'),
    ]
    for kw, literal in cases:
        file = HEADER + _user_line(literal)
        p = Pattern(kw)
        assert p.find(json.loads(literal)) is not None, kw
        assert p.may_match(file, len(HEADER)), kw
    # and what cannot match is not: other escapes, İ for a keyword without i or k
    assert not Pattern("parser").may_match(HEADER + _user_line(b'"PARSE R \\u00e9"'), len(HEADER))
    assert not Pattern("xyzzy").may_match(HEADER + _user_line('"XYZZ Y \u0130"'.encode()), len(HEADER))
