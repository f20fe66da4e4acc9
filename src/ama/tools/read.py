"""``read``: a file with line numbers (``cat -n`` style), an image as an image block.

Text: lines from ``offset`` (1-based), at most ``limit`` (default 2000) lines and
``MAX_OUTPUT_CHARS`` characters; a line longer than ``MAX_LINE_CHARS`` is cut with a note;
the note at the end says how to read on.  Images (PNG, JPEG, GIF, WebP by magic bytes) come
back as image blocks.  Other binary files are refused.  A successful read records the file in
the session's read-files set (``edit`` / ``write`` require it).
"""

from __future__ import annotations

import base64
import hashlib
import stat as stat_mod
from collections.abc import Iterator
from typing import BinaryIO

from ama.messages import ImageContent, TextContent
from ama.tools.base import BuiltinTool, Tool, ToolError, ToolResult
from ama.tools.context import ToolContext, resolve_path
from ama.tools.fileops import LOCAL, FileOps, not_found_text

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 100_000
#: 3.75 MiB raw is 5 MiB in base64, the image limit of the model APIs.
MAX_IMAGE_BYTES = 5 * 1024 * 1024 * 3 // 4
SNIFF_BYTES = 8192
CHUNK = 1 << 16

DESCRIPTION = f"""Read a file from the local file system. Returns the lines with line numbers (cat -n style: number, tab, line).
- path: absolute, or relative to the working directory.
- By default reads up to {DEFAULT_LIMIT} lines from the start; for long files pass offset (1-based line number to start at) and limit.
- Lines longer than {MAX_LINE_CHARS} characters are cut; a note at the end says how to read on when the output stops early.
- Images (PNG, JPEG, GIF, WebP) are returned as images. Other binary files are refused.
- Read a file before you edit or overwrite it: edit and write refuse files that were not read in this session or changed since."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "minLength": 1,
            "description": "File to read (absolute or relative to the working directory).",
        },
        "offset": {
            "type": "integer",
            "minimum": 0,
            "description": "Line number to start at (1-based; 0 or 1 is the first line).",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": f"Maximum number of lines to return (default {DEFAULT_LIMIT}).",
        },
    },
    "required": ["path"],
    "additionalProperties": False,
}

_IMAGE_MAGIC = [
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
]
_BINARY_KINDS = [
    (b"%PDF", "PDF document"),
    (b"PK\x03\x04", "zip archive"),
    (b"\x1f\x8b", "gzip data"),
    (b"\x7fELF", "ELF executable"),
    (b"SQLite format 3\x00", "SQLite database"),
]  # other executables and archives have a NUL byte early on


def image_mime(head: bytes) -> str | None:
    """The MIME type of a PNG / JPEG / GIF / WebP file from its first bytes, else None."""
    for magic, mime in _IMAGE_MAGIC:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def binary_kind(head: bytes) -> str | None:
    """A short description when ``head`` looks like a binary file, else None."""
    for magic, kind in _BINARY_KINDS:
        if head.startswith(magic):
            return kind
    return "binary data" if b"\x00" in head else None


def make_read_tool(*, ops: FileOps | None = None) -> Tool:
    fs = ops or LOCAL

    async def run(call_id: str, args: dict, ctx: ToolContext, on_update: object) -> ToolResult:
        path = resolve_path(ctx.cwd, args["path"])
        offset = max(int(args.get("offset") or 1), 1)
        limit = int(args.get("limit") or DEFAULT_LIMIT)
        try:
            st = fs.stat(path)
        except FileNotFoundError:
            raise ToolError(not_found_text(path, fs)) from None
        if stat_mod.S_ISDIR(st.st_mode):
            raise ToolError(f"{path} is a directory; use ls to list it.")
        if not stat_mod.S_ISREG(st.st_mode):
            # a FIFO or device: reading could wait for ever or never end
            raise ToolError(f"{path} is not a regular file (a pipe, socket or device); it cannot be read.")
        with fs.open_read(path) as f:
            head = f.read(SNIFF_BYTES)
            mime = image_mime(head)
            if mime is not None:
                return _read_image(path, head, f, mime, st, ctx)
            kind = binary_kind(head)
            if kind is not None:
                raise ToolError(
                    f"Cannot read {path}: it is a binary file ({kind}, {st.st_size} bytes). "
                    "Use bash with a suitable tool (file, xxd, unzip -l, pdftotext, ...) to inspect it."
                )
            hasher = hashlib.sha256()
            text, details = _number_lines(_lines(f, head, hasher), path, offset, limit)
        ctx.read_files.record(path, sha256=hasher.hexdigest(), stat=st)
        return ToolResult([TextContent(text=text)], details)

    return BuiltinTool("read", "Read", DESCRIPTION, PARAMETERS, True, run)


def _read_image(path: str, head: bytes, f: BinaryIO, mime: str, st, ctx: ToolContext) -> ToolResult:
    if st.st_size > MAX_IMAGE_BYTES:
        raise ToolError(
            f"Image {path} is too large to send ({st.st_size / 1048576:.1f} MiB; the limit is "
            f"{MAX_IMAGE_BYTES / 1048576:.2f} MiB). Make a smaller copy with bash and read that."
        )
    data = head + f.read()
    ctx.read_files.record(path, sha256=hashlib.sha256(data).hexdigest(), stat=st)
    return ToolResult(
        [
            TextContent(text=f"Image {path} ({mime}, {len(data)} bytes)"),
            ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime),
        ],
        {"path": path, "mimeType": mime, "bytes": len(data)},
    )


def _lines(f: BinaryIO, first: bytes, hasher) -> Iterator[bytes]:
    """The file's lines without line endings, hashing every byte on the way."""
    pending: list[bytes] = []  # pieces of a line not yet ended (joined once: long lines stay linear)
    chunk = first
    while chunk:
        hasher.update(chunk)
        if b"\n" in chunk:
            parts = chunk.split(b"\n")
            parts[0] = b"".join(pending) + parts[0]
            pending = [parts.pop()]
            yield from parts
        else:
            pending.append(chunk)
        chunk = f.read(CHUNK)
    last = b"".join(pending)
    if last:
        yield last


def _number_lines(lines: Iterator[bytes], path: str, offset: int, limit: int) -> tuple[str, dict]:
    out: list[str] = []
    size = 0
    total = 0
    cut_lines = 0
    stopped_by_size = False
    for total, raw in enumerate(lines, 1):
        if total < offset or len(out) >= limit or stopped_by_size:
            continue
        line = raw.decode("utf-8", "replace").removesuffix("\r")
        if len(line) > MAX_LINE_CHARS:
            line = f"{line[:MAX_LINE_CHARS]}… [line cut: {len(line)} characters]"
            cut_lines += 1
        entry = f"{total:>6}\t{line}"
        if out and size + len(entry) + 1 > MAX_OUTPUT_CHARS:
            stopped_by_size = True
            continue
        out.append(entry)
        size += len(entry) + 1
    details = {"path": path, "totalLines": total}
    if total == 0:
        return "(the file is empty)", details
    if offset > total:
        raise ToolError(f"offset {offset} is past the end of {path}, which has {total} lines.")
    end = offset + len(out) - 1
    details.update(startLine=offset, endLine=end, truncated=end < total)
    notes = []
    if end < total:
        why = f"output limit of {MAX_OUTPUT_CHARS} characters reached; " if stopped_by_size else ""
        notes.append(f"[Showing lines {offset}-{end} of {total}; {why}use offset={end + 1} to read more.]")
    if cut_lines:
        notes.append(f"[{cut_lines} line(s) longer than {MAX_LINE_CHARS} characters were cut.]")
    text = "\n".join(out)
    if notes:
        text += "\n\n" + "\n".join(notes)
    return text, details
