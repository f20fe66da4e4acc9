"""The symbols the terminal UI draws, with an ASCII set for terminals whose output encoding
cannot show them (``LANG=C``, a Latin-1 console): chosen once from ``sys.stdout.encoding``."""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Glyphs:
    bar: str  # the left bar of panels
    pointer: str  # the highlighted row of a picker
    call: str  # a tool call
    result: str  # its result
    thinking: str
    spinner: str
    ok: str
    no: str
    minus: str  # in "+x −y"
    ellipsis: str


UNICODE = Glyphs("│ ", "❯ ", "● ", "⎿ ", "✻ ", "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏", "✓", "✗", "−", "…")
ASCII = Glyphs("| ", "> ", "* ", "`- ", "~ ", "|/-\\", "ok", "x", "-", "...")


def pick(encoding: str | None) -> Glyphs:
    enc = (encoding or "").lower().replace("-", "").replace("_", "")
    return UNICODE if enc.startswith("utf") else ASCII


G = pick(getattr(sys.stdout, "encoding", None))
