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
  and no character whose lower case is ASCII (``İ``, ``K``) when it matters.  Such a file
  that lacks a character of the keyword in both cases (one ``memchr`` each) cannot match,
  and is not lowercased at all; :meth:`Pattern.may_match` asks the same of a whole file;
* **search-index terms** (index): each ASCII letter-and-digit run of the keyword must occur
  inside some term of a matching document (see ``search.py``).
"""

from __future__ import annotations

import re

from ama.errors import InvalidArguments

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:
    from typing import Any

_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE, "g": 0, "u": 0}
_REGEX = re.compile(r"^/(.*)/([a-zA-Z]*)$", re.DOTALL)
# escapes that can spell a character of an ASCII keyword: printable ASCII, İ, K, and \/
ASCII_ESCAPE = re.compile(rb"\\u00[2-7][0-9a-fA-F]|\\u0130|\\u212[aA]|\\/")
_ESCAPE = re.compile(rb"\\u(?!00[01][0-9a-fA-F])|\\/")
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
        #: per character of an ASCII keyword, the bytes that spell it in raw JSON outside an
        #: escape (both cases of a letter): a file without any of them has no literal match
        self.forms: list[tuple[str, tuple[bytes, ...]]] = []
        if kw is not None and self.ascii:
            self.forms = [(c, tuple(dict.fromkeys((c.encode(), c.upper().encode())))) for c in dict.fromkeys(kw)]

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

    @property
    def prefilters(self) -> bool:
        """Whether the raw prefilter can rule a file out (else every file is a candidate)."""
        return self.keyword is not None and self.raw

    def _missing(self, data: Any, start: int) -> str:
        """The characters of the keyword that ``data`` (from ``start``) holds in no raw form
        (``memchr`` each: it stops at the first one found)."""
        find = data.find
        return "".join(c for c, forms in self.forms if all(find(b, start) < 0 for b in forms))

    def _hidden(self, data: Any, start: int) -> bool:
        """Whether JSON may hide a match from the raw bytes: an escape that can spell a
        character of the keyword, or a character whose lower case is an ASCII letter."""
        if ASCII_ESCAPE.search(data, start):
            return True
        kw = self.keyword or ""
        return ("i" in kw or "k" in kw) and not data.isascii() and any(s in data for s in _LOWER_TO_ASCII)

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
        if self._hidden(data, start):
            return None
        missing = self._missing(data, start)
        if missing.strip(" "):  # (a tool call's text has a space its raw bytes may not)
            return set()
        out = set()
        if not missing:
            hay = bytes(data).lower() if any("a" <= c <= "z" for c in kw) else data
            out = _lines_with(hay, self.raw_bytes, start)
        if " " in kw:
            out |= _lines_with(data, b'"toolCall"', start)
        return out

    def may_match(self, data: Any, start: int = 0, *, raw_first: bool = False) -> bool:
        """Whether some line of ``data`` from ``start`` may match: False exactly when
        :meth:`candidate_lines` gives no line.  The same tests, in the order that answers
        soonest and without collecting lines: a character of the keyword that the bytes
        do not hold spares lowercasing them.  ``raw_first``: look for the keyword as it is
        first (cheap when it is common)."""
        kw = self.keyword
        if kw is None or not self.raw:
            return True
        if not self.ascii:
            if _ESCAPE.search(data, start):
                return True
            return kw in bytes(data[start:]).decode("utf-8", "replace").lower()
        if raw_first and data.find(self.raw_bytes, start) >= 0:
            return True
        missing = self._missing(data, start)
        if not missing:
            hay = data.lower() if any("a" <= c <= "z" for c in kw) else data
            if hay.find(self.raw_bytes, start) >= 0:
                return True
        if not missing.strip(" ") and " " in kw and data.find(b'"toolCall"', start) >= 0:
            return True
        return self._hidden(data, start)


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
