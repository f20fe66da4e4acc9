"""What ``ama sessions search`` looks for: a keyword or a ``/regex/flags``, the exact
matcher, and the cheap filters that may only ever *widen* what it sees.

* A **keyword** matches case-insensitively: ``keyword.lower()`` in ``text.lower()``.
* ``/pattern/flags`` is a Python regular expression (``re``).  Flags: ``i`` ignore case,
  ``m`` multi-line anchors, ``s`` dot matches newline, ``x`` verbose; ``g`` and ``u`` are
  accepted and ignored (every match is found; patterns are Unicode already).

Two filters narrow the candidates before the matcher decides:

* the **raw prefilter** (scans): the lowercased keyword is looked for in the lowercased raw
  line bytes.  It is used only when that cannot miss: the keyword has no quote, backslash
  or control character (which JSON escapes), and per file, when the file holds no escape
  that could spell one of its characters (``\\uXXXX`` beyond control characters, ``\\/``),
  and no character whose lower case is ASCII (``İ``, ``K``) when it matters;
* **search-index terms** (index): each ASCII letter-and-digit run of the keyword must occur
  inside some term of a matching document (see ``search.py``).
"""

from __future__ import annotations

import re
from typing import Any

from ama.errors import InvalidArguments

_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE, "g": 0, "u": 0}
_REGEX = re.compile(r"^/(.*)/([a-zA-Z]*)$", re.DOTALL)
# escapes that can spell a character of an ASCII keyword: printable ASCII, İ, K, and \/
_ASCII_ESCAPE = re.compile(rb"\\u00[2-7][0-9a-fA-F]|\\u0130|\\u212[aA]|\\/")
_ESCAPE = re.compile(rb"\\u(?!00[01][0-9a-fA-F])|\\/")
#: letters that are rare in text and code and, in both cases, absent from the JSON structure
#: of session lines (keys, ``false``, timestamps' ``T``/``Z``): when a keyword has one, a file
#: holding neither case of it cannot match (never i or k: İ and K lower to them)
_RARITY = "qjxvb"
_TOKENS = re.compile(r"[a-z0-9]+")
_LOWER_TO_ASCII = (b"\xc4\xb0", b"\xe2\x84\xaa")  # İ -> i̇, K (Kelvin) -> k


class Pattern:
    def __init__(self, source: str) -> None:
        self.source = source
        self.regex: re.Pattern[str] | None = None
        self.keyword: str | None = None
        m = _REGEX.match(source)
        if m and len(source) >= 2:
            flags = 0
            for ch in m.group(2):
                if ch not in _FLAGS:
                    raise InvalidArguments(
                        f"unknown regex flag {ch!r} in {source!r} (use i, m, s, x; g and u are ignored)"
                    )
                flags |= _FLAGS[ch]
            try:
                self.regex = re.compile(m.group(1), flags)
            except re.error as e:
                raise InvalidArguments(f"invalid regular expression {source!r}: {e}") from None
            if self.regex.search("") is not None:
                raise InvalidArguments(
                    f"regular expression {source!r} matches the empty string: it would match everything"
                )
        else:
            if not source:
                raise InvalidArguments("the search keyword is empty")
            self.keyword = source.lower()
        kw = self.keyword
        self.ascii = kw is not None and kw.isascii()
        #: the raw prefilter can be used (per file, see :meth:`raw_ok`)
        self.raw = (
            kw is not None and not any(c in kw for c in '"\\') and all(c >= " " and c != "\x7f" for c in kw)
        )
        self.raw_bytes = kw.encode() if kw is not None else b""
        self.tokens = _TOKENS.findall(kw) if kw is not None and self.ascii else []
        #: both cases of the keyword's rarest letter or digit (a file without either cannot match)
        self.rare = b""
        if kw is not None and self.ascii:
            ranked = [c for c in _RARITY if c in kw]
            if ranked:
                self.rare = (ranked[0] + ranked[0].upper()).encode()

    def find(self, text: str) -> tuple[int, int] | None:
        """The first match in ``text``: ``(start, end)`` positions, or None."""
        if self.regex is not None:
            m = self.regex.search(text)
            return None if m is None else (m.start(), m.end())
        assert self.keyword is not None
        low = text.lower()
        i = low.find(self.keyword)
        if i < 0:
            return None
        if len(low) == len(text):
            return i, i + len(self.keyword)
        # lower() changed the length (e.g. İ): map back by lowering char by char
        pos = 0
        start = end = len(text)
        for j, ch in enumerate(text):
            if pos <= i < pos + len(ch.lower()) and start == len(text):
                start = j
            pos += len(ch.lower())
            if pos >= i + len(self.keyword):
                end = j + 1
                break
        return start, end

    # --- the raw prefilter -------------------------------------------------------------------

    def candidate_lines(self, data: Any, start: int) -> set[int] | None:
        """Offsets of the lines (from ``start``) that may match, or None for "every line"."""
        kw = self.keyword
        if kw is None or not self.raw:
            return None
        if not self.ascii:
            if _ESCAPE.search(data, start):
                return None
            text = bytes(data[start:]).decode("utf-8", "replace").lower()
            return None if kw in text else set()
        if _ASCII_ESCAPE.search(data, start):
            return None
        if self.rare and all(bytes([c]) not in data for c in self.rare):
            return set()
        if ("i" in kw or "k" in kw) and not data.isascii() and any(s in data for s in _LOWER_TO_ASCII):
            return None
        hay = bytes(data).lower() if any("a" <= c <= "z" for c in kw) else data
        out = _lines_with(hay, self.raw_bytes, start)
        if " " in kw:
            out |= _lines_with(data, b'"toolCall"', start)
        return out


def _lines_with(hay: Any, needle: bytes, start: int) -> set[int]:
    out: set[int] = set()
    find, rfind = hay.find, hay.rfind
    i = find(needle, start)
    while i >= 0:
        s = rfind(b"\n", 0, i) + 1
        out.add(s)
        e = find(b"\n", i)
        if e < 0:
            break
        i = find(needle, e)
    return out


def parse(source: str) -> Pattern:
    return Pattern(source)
