"""File I/O behind a small protocol, so tests and other backends swap the I/O, not the tools.

``read``, ``write``, ``edit`` and ``ls`` take ``ops: FileOps | None``; None means the local
file system (``LocalFileOps``).
"""

from __future__ import annotations

import os
from typing import BinaryIO, Protocol


class FileOps(Protocol):
    def stat(self, path: str) -> os.stat_result:
        """``os.stat`` (follows symlinks); raises ``FileNotFoundError`` when missing."""
        ...

    def open_read(self, path: str) -> BinaryIO: ...

    def write_bytes(self, path: str, data: bytes) -> None:
        """Write ``data`` in place, creating parent directories; an existing file keeps its mode."""
        ...

    def list_dir(self, path: str) -> list[tuple[str, bool]]:
        """``(name, is_dir)`` for each entry (symlinks to directories count as directories)."""
        ...


class LocalFileOps:
    def stat(self, path: str) -> os.stat_result:
        return os.stat(path)

    def open_read(self, path: str) -> BinaryIO:
        return open(path, "rb")

    def write_bytes(self, path: str, data: bytes) -> None:
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        # In place (not write-and-rename): mode, owner, hard links and symlinks stay as they are.
        with open(path, "wb") as f:
            f.write(data)

    def list_dir(self, path: str) -> list[tuple[str, bool]]:
        out = []
        with os.scandir(path) as it:
            for entry in it:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                out.append((entry.name, is_dir))
        return out


LOCAL = LocalFileOps()


def not_found_text(path: str, ops: FileOps) -> str:
    """ "File not found" with up to three similar names from the same directory."""
    import difflib

    msg = f"File not found: {path}"
    parent, name = os.path.split(path)
    try:
        names = [n for n, _ in ops.list_dir(parent)]
    except OSError:
        return msg
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if close:
        msg += ". Did you mean: " + ", ".join(os.path.join(parent, n) for n in close) + "?"
    return msg
