"""The read-files set of a resumed session, rebuilt from the session file.

``edit`` and ``write`` refuse a file the session has not read (``ReadFiles``).  That set
lived only in the process that read the file, so ``ama -p -c`` forgot it.  The session
file knows which files successful ``read`` / ``write`` / ``edit`` calls on the current
branch touched and when their results were recorded; a file whose modification time is
not later than that is the content the model saw, and is remembered again.  A file
changed since (by the user, a formatter, a restore) is left out: the model must read it
again, as it must within one process.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from ama.messages import AssistantMessage, ToolCall, ToolResultMessage
from ama.session.entries import MessageEntry, iso_to_ms
from ama.tools.context import ReadFiles

READ_TOOLS = ("read", "write", "edit")


def touched_files(branch: Iterable[Any], cwd: str) -> dict[str, int]:
    """``path -> ms`` of the latest successful read/write/edit result of each file on the
    branch (paths resolved against ``cwd`` as the tools resolve them).  Entries that are not
    messages -- an unknown one included, even of type ``message`` -- are passed over."""
    from ama.tools import resolve_path

    calls: dict[str, str] = {}
    resolved: dict[str, str] = {}  # the path as the model gave it -> resolved
    stamps: dict[str, str] = {}  # path -> the timestamp of its latest result
    for e in branch:
        if not isinstance(e, MessageEntry):
            continue
        m = e.message
        if isinstance(m, AssistantMessage):
            for b in m.content:
                if isinstance(b, ToolCall) and b.name in READ_TOOLS:
                    given = b.arguments.get("path")
                    if isinstance(given, str):
                        path = resolved.get(given)
                        if path is None:
                            path = resolved[given] = resolve_path(cwd, given)
                        calls[b.id] = path
        elif isinstance(m, ToolResultMessage) and not m.is_error and m.tool_call_id in calls:
            path = calls[m.tool_call_id]
            stamps.pop(path, None)  # keep the order of the latest use
            stamps[path] = e.timestamp
    return {path: iso_to_ms(ts) for path, ts in stamps.items()}


def rebuild_read_files(read_files: ReadFiles, branch: Iterable[Any], cwd: str) -> list[str]:
    """Record each touched file unchanged since its result; returns the paths recorded."""
    done = []
    for path, at_ms in touched_files(branch, cwd).items():
        try:
            st = os.stat(path)
        except OSError:
            continue
        if not at_ms or st.st_mtime_ns // 1_000_000 > at_ms:
            continue  # changed after the model saw it (or no time to compare with)
        try:
            read_files.record(path, stat=st)
        except OSError:
            continue
        done.append(path)
    return done
