"""Command output: cleaning, collecting with spill to a file, and cutting the middle out.

The model sees at most ``MAX_CHARS`` characters / ``MAX_LINES`` lines of a command's output:
the start and the end, with a note in between that names the file holding all of it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

MAX_CHARS = 30_000
MAX_LINES = 2000
HEAD_SHARE = 0.4  # of the budget for the start; the rest shows the end, where errors usually are
SPILL_AT = 1 << 21  # bytes kept in memory before the output goes to a file
KEEP = 1 << 18  # bytes of start and end kept in memory once spilled

_ANSI = re.compile(r"\x1b\[[0-9;?<=>]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def clean(text: str) -> str:
    """Drop terminal escape sequences; of a line rewritten with ``\\r`` keep what was left on screen."""
    text = _ANSI.sub("", text)
    if "\r" not in text:
        return text
    lines = []
    for line in text.split("\n"):
        line = line.removesuffix("\r")
        if "\r" in line:
            line = line.rsplit("\r", 1)[1]
        lines.append(line)
    return "\n".join(lines)


def count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def clip_middle(
    head: str, tail: str, total_lines: int, note: Callable[[int], str], *, max_chars: int, max_lines: int
) -> str:
    """The start of ``head`` and the end of ``tail`` within the budgets, ``note(lines left out)``
    between them.  ``head`` and ``tail`` are the same text when all of it is in memory; for a
    spilled output they are its first and last bytes."""
    head_lines_max = max(1, int(max_lines * HEAD_SHARE))
    head_chars_max = int(max_chars * HEAD_SHARE)
    shown_head: list[str] = []
    size = 0
    for line in head.split("\n")[:head_lines_max]:
        if size + len(line) + 1 > head_chars_max:
            if not shown_head:
                shown_head.append(line[:head_chars_max] + "…")
                size = head_chars_max + 1
            break
        shown_head.append(line)
        size += len(line) + 1
    tail_lines_max = max(1, max_lines - len(shown_head))
    tail_chars_max = max_chars - size
    tail_parts = tail.removesuffix("\n").split("\n")
    shown_tail: list[str] = []
    size = 0
    for line in reversed(tail_parts[-tail_lines_max:]):
        if size + len(line) + 1 > tail_chars_max:
            if not shown_tail:
                shown_tail.append("…" + line[-tail_chars_max:])
            break
        shown_tail.append(line)
        size += len(line) + 1
    shown_tail.reverse()
    omitted = max(0, total_lines - len(shown_head) - len(shown_tail))
    return "\n".join([*shown_head, note(omitted), *shown_tail])


def new_output_path(output_dir: str, call_id: str, suffix: str) -> str:
    """A fresh file name under ``output_dir`` for a call's output (created empty, exclusively)."""
    os.makedirs(output_dir, exist_ok=True)
    base = re.sub(r"[^A-Za-z0-9_.-]", "_", call_id)[:64] or "call"
    for n in range(1000):
        path = os.path.join(output_dir, f"bash-{base}{f'-{n}' if n else ''}.{suffix}")
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free output file name for {call_id} in {output_dir}")


@dataclass
class Rendered:
    text: str
    truncated: bool
    saved_to: str | None
    total_bytes: int


class OutputCollector:
    """Collects raw output bytes.  Past ``SPILL_AT`` bytes they go to a file (from ``spill()``)
    and only the first and last ``KEEP`` bytes stay in memory.  ``saved_to`` says the output is
    already in that file (background jobs), so nothing is written."""

    def __init__(self, *, spill: Callable[[], str] | None = None, saved_to: str | None = None) -> None:
        self._spill = spill
        self.saved_to = saved_to
        self._buf = bytearray()
        self._head = b""
        self._file: BinaryIO | None = None
        self.total = 0
        self.newlines = 0
        self.last_byte = b""

    def feed(self, data: bytes) -> None:
        if not data:
            return
        self.total += len(data)
        self.newlines += data.count(b"\n")
        self.last_byte = data[-1:]
        self._buf += data
        if self._head:
            if self._file is not None:
                self._file.write(data)
            if len(self._buf) > 2 * KEEP:
                del self._buf[:-KEEP]
        elif len(self._buf) > SPILL_AT:
            if self.saved_to is None and self._spill is not None:
                self.saved_to = self._spill()
                self._file = f = open(self.saved_to, "wb")  # noqa: SIM115 - closed in render()
                f.write(self._buf)
            self._head = bytes(self._buf[:KEEP])
            del self._buf[:-KEEP]

    def preview(self, max_chars: int = 4000) -> str:
        """The end of the output so far (for progress updates)."""
        return clean(bytes(self._buf[-max_chars * 2 :]).decode("utf-8", "replace"))[-max_chars:]

    def render(self, *, max_chars: int = MAX_CHARS, max_lines: int = MAX_LINES) -> Rendered:
        """What the model sees; writes the full output to a file (``spill()``) when it is cut."""
        if self._file is not None:
            self._file.close()
            self._file = None
        total_lines = self.newlines + (1 if self.total and self.last_byte != b"\n" else 0)
        if not self._head:
            text = clean(self._buf.decode("utf-8", "replace"))
            if len(text) <= max_chars and count_lines(text) <= max_lines:
                return Rendered(text, False, self.saved_to, self.total)
            if self.saved_to is None and self._spill is not None:
                self.saved_to = self._spill()
                with open(self.saved_to, "wb") as f:
                    f.write(self._buf)
            head = tail = text
        else:
            head = clean(self._head.decode("utf-8", "replace"))
            tail = clean(bytes(self._buf).decode("utf-8", "replace"))
        where = f"; full output ({self.total} bytes) in {self.saved_to}" if self.saved_to else ""

        def note(omitted: int) -> str:
            what = f"{omitted} lines omitted" if omitted else "the middle of a long line omitted"
            return f"... [{what}{where}] ..."

        return Rendered(
            clip_middle(head, tail, total_lines, note, max_chars=max_chars, max_lines=max_lines),
            True,
            self.saved_to,
            self.total,
        )
