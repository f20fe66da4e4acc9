"""``write``: create or overwrite a file with the given content.

Parent directories are created; an existing file is written in place, so it keeps its mode.
Overwriting an existing file requires that it was read (or written) in this session and is
unchanged since (``ReadFiles.check``).
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_mod

from ama.tools.base import BuiltinTool, Tool, ToolError, ToolResult
from ama.tools.context import ToolContext, display_path, resolve_path
from ama.tools.diff import unified_diff
from ama.tools.fileops import LOCAL, FileOps

DESCRIPTION = """Write a file: creates it, or overwrites it completely.
- path: absolute, or relative to the working directory. Missing parent directories are created.
- An existing file must have been read in this session (with read) and be unchanged since; otherwise the write is refused and you must read it first.
- Prefer edit for changing part of an existing file; use write for new files or complete rewrites."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "minLength": 1,
            "description": "File to write (absolute or relative to the working directory).",
        },
        "content": {"type": "string", "description": "The complete new content of the file."},
    },
    "required": ["path", "content"],
    "additionalProperties": False,
}


def commit_write(fs: FileOps, ctx: ToolContext, path: str, data: bytes) -> str:
    """Write ``data`` to ``path`` with the checkpoint hooks around it, then record it as read.
    Returns the sha256 of what was written (``details.sha256``: a later process's rewind
    knows from it that the file on disk is ama's work, not somebody else's change)."""
    if ctx.before_write is not None:
        ctx.before_write(path)
    fs.write_bytes(path, data)
    if ctx.after_write is not None:
        ctx.after_write(path, data)
    sha = hashlib.sha256(data).hexdigest()
    ctx.read_files.record(path, sha256=sha)
    return sha


def refuse_special(path: str, st: os.stat_result) -> None:
    """A FIFO, socket or device is neither read nor written: either could block for ever."""
    if stat_mod.S_ISDIR(st.st_mode):
        raise ToolError(f"{path} is a directory.")
    if not stat_mod.S_ISREG(st.st_mode):
        raise ToolError(f"{path} is not a regular file (a pipe, socket or device).")


def make_write_tool(*, ops: FileOps | None = None) -> Tool:
    fs = ops or LOCAL

    async def run(call_id: str, args: dict, ctx: ToolContext, on_update: object) -> ToolResult:
        path = resolve_path(ctx.cwd, args["path"])
        content: str = args["content"]
        try:
            st = fs.stat(path)
        except FileNotFoundError:
            st = None
        old: str | None = None
        if st is not None:
            refuse_special(path, st)
            problem = ctx.read_files.check(path)
            if problem:
                raise ToolError(problem)
            with fs.open_read(path) as f:
                old = f.read().decode("utf-8", "replace")
        data = content.encode("utf-8")
        sha = commit_write(fs, ctx, path, data)
        lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        verb = "Created" if old is None else "Overwrote"
        details: dict = {"path": path, "created": old is None, "bytes": len(data), "lines": lines, "sha256": sha}
        if old is not None:
            details["diff"] = unified_diff(old, content, display_path(path, ctx.cwd))
        plural = "" if lines == 1 else "s"
        return ToolResult.text(f"{verb} {path} ({lines} line{plural}, {len(data)} bytes).", details)

    return BuiltinTool("write", "Write", DESCRIPTION, PARAMETERS, False, run)
