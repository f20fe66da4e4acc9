"""Unified diffs of text files for tool results (pure)."""

from __future__ import annotations

import difflib

MAX_DIFF_CHARS = 100_000


def unified_diff(old: str, new: str, name: str, *, context: int = 3) -> str:
    """A ``git diff``-style unified diff of two texts (``a/name`` -> ``b/name``), capped in size."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{name}", f"b/{name}", n=context
    )
    out: list[str] = []
    size = 0
    for line in lines:
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        size += len(line)
        if size > MAX_DIFF_CHARS:
            out.append(f"... [diff cut at {MAX_DIFF_CHARS} characters]\n")
            break
        out.append(line)
    return "".join(out)
