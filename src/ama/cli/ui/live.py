"""The live region: the few rows at the bottom of the terminal that are redrawn in place.

Finished output is written above it once and scrolls into the terminal's scrollback like
any printed text; only the live rows (the unfinished Markdown block, the spinner and the
footer) are erased and rewritten, in one write per frame, so nothing flickers and nothing
already printed is lost.  The region never grows taller than the screen (minus two rows):
the cursor cannot move back up into the scrollback, so a taller region could not be erased.
"""

from __future__ import annotations

import re
import shutil
from typing import TextIO

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def visible_len(text: str) -> int:
    from rich.cells import cell_len

    return cell_len(ANSI.sub("", text))


def crop(text: str, width: int) -> str:
    """``text`` (which may hold SGR codes) cut to ``width`` visible cells."""
    if visible_len(text) <= width:
        return text
    out: list[str] = []
    n = 0
    pos = 0
    for m in ANSI.finditer(text):
        chunk = text[pos : m.start()]
        for ch in chunk:
            if n >= width - 1:
                break
            out.append(ch)
            n += 1
        out.append(m.group())
        pos = m.end()
    for ch in text[pos:]:
        if n >= width - 1:
            break
        out.append(ch)
        n += 1
    return "".join(out) + "…\x1b[0m"


class LiveRegion:
    """Rows redrawn in place below the printed output (a colour terminal only)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.rows = 0  # rows drawn now; the cursor is at the end of the last one

    def size(self) -> tuple[int, int]:
        s = shutil.get_terminal_size((100, 40))
        return max(20, s.columns), max(5, s.lines)

    def _erase(self) -> str:
        if self.rows == 0:
            return ""
        up = f"\x1b[{self.rows - 1}A" if self.rows > 1 else ""
        return "\r" + up + "\x1b[J"

    def _frame(self, lines: list[str]) -> str:
        cols, height = self.size()
        lines = [crop(line, cols - 1) for line in lines]
        lines = lines[-(height - 2) :] if lines else []
        self.rows = len(lines)
        return "\n".join(lines)

    def draw(self, lines: list[str], above: str = "") -> None:
        """Erase the region, print ``above`` (finished output, kept), draw ``lines``."""
        text = self._erase()
        if above:
            text += above if above.endswith("\n") else above + "\n"
        self.rows = 0
        text += self._frame(lines)
        self.out.write(text)
        self.out.flush()

    def clear(self) -> None:
        if self.rows:
            self.out.write(self._erase())
            self.out.flush()
            self.rows = 0
