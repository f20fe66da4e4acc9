"""Small helpers shared by CLI command modules (formatting, durations, JSON output)."""

from __future__ import annotations

import re
import sys
from datetime import datetime

from ama.errors import InvalidArguments

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of a start); mypy knows it
if TYPE_CHECKING:
    from typing import Any

_DURATION = re.compile(r"^(\d+)\s*([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str, *, option: str = "duration") -> float:
    """``30d``, ``12h``, ``45m``, ``90s``, ``2w`` -> seconds."""
    m = _DURATION.match(text.strip().lower())
    if not m:
        raise InvalidArguments(f"{option}: invalid duration {text!r} (use e.g. 30d, 12h, 45m, 2w)")
    return int(m.group(1)) * _UNITS[m.group(2)]


def local_time(iso: str, *, seconds: bool = True) -> str:
    """An ISO timestamp in local time, ``YYYY-MM-DD HH:MM[:SS]``; the input if unparseable."""
    if not iso:
        return "-"
    try:
        s = iso[:-1] + "+00:00" if iso.endswith("Z") else iso
        dt = datetime.fromisoformat(s)
    except ValueError:
        return iso
    if dt.tzinfo is not None:
        dt = dt.astimezone()
    return dt.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def one_line(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def human_size(n: float) -> str:
    """Bytes as ``512 B``, ``1.5 KB``, ``3.2 MB``, ``1.1 GB``."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def print_json(obj: Any) -> None:
    import json

    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2) + "\n")


def add_session_dir(parser: Any) -> None:
    parser.add_argument(
        "--session-dir", metavar="DIR", help="sessions directory (default: $AMA_SESSION_DIR or <data dir>/sessions)"
    )


def sessions_dir(args: Any) -> str:
    from ama.config.paths import sessions_dir_str

    return sessions_dir_str(getattr(args, "session_dir", None))


def list_verb_parser(prog: str, *, description: str, epilog: str, help: str, list_description: str) -> tuple[Any, Any]:
    """``(parser, list parser)`` of a command whose one verb is ``list`` (``ama skills``,
    ``ama templates``, ``ama agents``): the caller adds the list parser's options and func."""
    import argparse

    from ama.index.helpfmt import Formatter

    parser = argparse.ArgumentParser(prog=prog, description=description, epilog=epilog, formatter_class=Formatter)
    sub = parser.add_subparsers(metavar="COMMAND")
    p = sub.add_parser("list", help=help, formatter_class=Formatter, description=list_description)
    return parser, p


class _Skipped:
    """Stands for the parser of a verb that is not about to run: every call is a no-op."""

    def __getattr__(self, _name: str) -> Any:
        return self._ignore

    def _ignore(self, *_args: Any, **_kwargs: Any) -> _Skipped:
        return self


class OnlyVerb:
    """The subparsers of a command group, building only ``only`` (the verb on the command
    line) when it is given: every verb's arguments cost ~0.5 ms to declare, and the group's
    other verbs cannot run anyway.  ``only=None`` builds them all (help, docs, a verb that
    is not one of the group's: argparse's error lists the choices)."""

    def __init__(self, sub: Any, only: str | None) -> None:
        self._sub = sub
        self.only = only

    def wants(self, name: str) -> bool:
        return self.only is None or self.only == name

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        return self._sub.add_parser(name, **kwargs) if self.wants(name) else _Skipped()

