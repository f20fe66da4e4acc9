"""Where session files live, pi's layout:

    <sessions dir>/--<cwd with / as ->--/<ISO time with : and . as ->_<id>.jsonl

Names are for people; readers find sessions by scanning and reading headers, never by
trusting a directory or file name.  ``<sessions dir>/.trash/`` holds deleted sessions
(same relative paths); other dot-directories are skipped.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

TRASH = ".trash"


def encode_cwd(cwd: str) -> str:
    body = cwd.lstrip("/\\")
    for ch in "/\\:":
        body = body.replace(ch, "-")
    return f"--{body}--"


def session_filename(timestamp: str, session_id: str) -> str:
    return f"{timestamp.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"


def new_session_path(sessions_dir: str, cwd: str, session_id: str, timestamp: str) -> str:
    return os.path.join(sessions_dir, encode_cwd(cwd), session_filename(timestamp, session_id))


def name_id(path: str) -> str:
    """The session id in a file name of this layout (``<time>_<id>.jsonl``), or ``""``.
    Only a hint for a file whose header cannot be read: identity is the header's."""
    base = os.path.basename(path)
    stem = base[: -len(".jsonl")] if base.endswith(".jsonl") else base
    return stem.rpartition("_")[2] if "_" in stem else ""


def iter_session_files(
    sessions_dir: str, *, trash: bool = False, max_depth: int = 3, links: set[str] | None = None
) -> Iterator[str]:
    """Paths named ``*.jsonl`` under the sessions dir (``trash``: only those in the trash).
    Every such name is yielded, readable or not: readers report what they cannot read.
    ``links``: the yielded paths that are symbolic links are added to it (from the
    directory entries: no system call)."""
    root = os.path.join(sessions_dir, TRASH) if trash else sessions_dir

    def walk(d: str, depth: int) -> Iterator[str]:
        try:
            it = os.scandir(d)
        except OSError:
            return
        with it:
            items = sorted(it, key=lambda e: e.name)
        for e in items:
            if e.name.startswith("."):
                continue
            if e.name.endswith(".jsonl"):
                # whatever it is (a file, a dangling or looping link, a directory): a
                # session the catalog must show, as unreadable if it cannot be read --
                # except a FIFO, socket or device, which no session is and which a
                # reader opening it could wait on for ever
                if not _special(e):
                    if links is not None and e.is_symlink():
                        links.add(e.path)
                    yield e.path
                continue
            try:
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir and depth < max_depth:
                yield from walk(e.path, depth + 1)

    yield from walk(root, 0)


def _special(e: os.DirEntry[str]) -> bool:
    """A FIFO, socket or device (through links); False when it is something else or
    cannot be told (a dangling or looping link, listed and then reported unreadable)."""
    try:
        if e.is_file(follow_symlinks=False):  # from the directory entry: no system call
            return False
        mode = e.stat().st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
