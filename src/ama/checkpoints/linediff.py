"""Inserted / deleted line counts between two versions of a file (pure).

The same line matching as the unified diff that ``edit`` shows (``difflib`` over
``splitlines(keepends=True)``).  Very large inputs, where the matcher's worst case would
take seconds, are counted as multisets of lines instead (an upper bound of the true diff).
"""

from __future__ import annotations

import difflib
from collections import Counter

#: above this many lines on both sides, count by multiset difference
EXACT_LIMIT = 20_000


def split_lines(data: bytes) -> list[str]:
    return data.decode("utf-8", "replace").splitlines(keepends=True)


def count_changes(old: bytes, new: bytes) -> tuple[int, int]:
    """``(insertions, deletions)`` turning ``old`` into ``new``."""
    if old == new:
        return 0, 0
    a, b = split_lines(old), split_lines(new)
    if not a or not b:
        return len(b), len(a)
    if len(a) > EXACT_LIMIT and len(b) > EXACT_LIMIT:
        ca, cb = Counter(a), Counter(b)
        return sum((cb - ca).values()), sum((ca - cb).values())
    ins = dels = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if tag in ("replace", "delete"):
            dels += i2 - i1
        if tag in ("replace", "insert"):
            ins += j2 - j1
    return ins, dels


def count_lines(data: bytes) -> int:
    return len(split_lines(data))
