"""argparse help formatters that do not import ``shutil`` (argparse's default asks
``shutil.get_terminal_size``, which pulls in ``bz2`` and ``lzma``: ~3 ms per command).

argparse builds a formatter for every ``add_argument`` (to check the metavar), so a
command's parser and every parser under it need one of these for the saving to hold.
The width is the one ``shutil.get_terminal_size`` gives (``$COLUMNS`` when it is a positive
number, else the terminal's width on standard output, else 80), less 2 as argparse takes it.
"""

from __future__ import annotations

import argparse
import os
import sys


def _width() -> int:
    try:
        cols = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        cols = 0
    if cols <= 0:
        try:
            cols = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            cols = 0
        cols = cols or 80
    return cols - 2


class Wrapping(argparse.HelpFormatter):
    """argparse's default ``HelpFormatter`` (descriptions re-wrapped to the width)."""

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ):
        super().__init__(prog, indent_increment, max_help_position, width if width is not None else _width())


class Formatter(Wrapping, argparse.RawDescriptionHelpFormatter):
    """argparse's ``RawDescriptionHelpFormatter`` (descriptions printed as written)."""
