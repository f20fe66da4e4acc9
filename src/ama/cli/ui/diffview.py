"""Unified diffs for the terminal: coloured in full (approval prompts) or compact (after an
applied edit: the changed lines only, cut after a few)."""

from __future__ import annotations

from collections.abc import Callable

from ama.cli.ui.glyphs import G

Style = Callable[[str, str], str]

COMPACT_LINES = 12


def _colour(line: str, style: Style) -> str:
    if line.startswith(("+++", "---")):
        return style(line, "1")
    if line.startswith("+"):
        return style(line, "32")
    if line.startswith("-"):
        return style(line, "31")
    if line.startswith("@@"):
        return style(line, "36")
    return style(line, "2")


def full_diff(diff: str, style: Style, *, max_lines: int = 80, indent: str = "  ") -> list[str]:
    lines = diff.splitlines()
    out = [indent + _colour(line, style) for line in lines[:max_lines]]
    if len(lines) > max_lines:
        out.append(indent + style(f"… {len(lines) - max_lines} more diff lines", "2"))
    return out


def stat(diff: str) -> tuple[int, int]:
    """(insertions, deletions) of a unified diff."""
    ins = dels = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            ins += 1
        elif line.startswith("-") and not line.startswith("---"):
            dels += 1
    return ins, dels


def compact_diff(diff: str, style: Style, *, max_lines: int = COMPACT_LINES, indent: str = "    ") -> list[str]:
    """``+x −y`` and the first changed lines (no headers, no context)."""
    changed = [
        line for line in diff.splitlines()
        if (line.startswith(("+", "-")) and not line.startswith(("+++", "---")))
    ]  # fmt: skip
    if not changed:
        return []
    ins, dels = stat(diff)
    out = [indent + style(f"+{ins} {G.minus}{dels}", "2")]
    out += [indent + _colour(line, style) for line in changed[:max_lines]]
    if len(changed) > max_lines:
        out.append(indent + style(f"… {len(changed) - max_lines} more changed lines", "2"))
    return out
