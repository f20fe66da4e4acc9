"""Where session files live, pi's layout:

    <sessions dir>/--<cwd with / as ->--/<ISO time with : and . as ->_<id>.jsonl

Names are for people; readers find sessions by scanning and reading headers, never by
trusting a directory or file name.  ``<sessions dir>/.trash/`` holds deleted sessions
(same relative paths); other dot-directories are skipped.
"""

from __future__ import annotations

import os
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


def iter_session_files(sessions_dir: str, *, trash: bool = False, max_depth: int = 3) -> Iterator[str]:
    """Paths of ``*.jsonl`` files under the sessions dir (``trash``: only those in the trash)."""
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
            try:
                if e.is_dir(follow_symlinks=False):
                    if depth < max_depth:
                        yield from walk(e.path, depth + 1)
                elif e.name.endswith(".jsonl") and e.is_file():
                    yield e.path
            except OSError:
                continue

    yield from walk(root, 0)
