"""An argparse help formatter that does not import ``shutil`` (argparse's default asks
``shutil.get_terminal_size``, which pulls in ``bz2`` and ``lzma``: ~3 ms per command)."""

from __future__ import annotations

import argparse
import os
import sys


def _width() -> int:
    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit():
        return int(cols) - 2
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns - 2
    except (OSError, ValueError):
        return 78


class Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ):
        super().__init__(prog, indent_increment, max_help_position, width if width is not None else _width())
