"""``grep``: search file contents with a regular expression.

Uses ripgrep when installed (``rg --json`` for content, ``-l`` / ``-c`` for the other modes),
else a Python search over the same files (``_walk.py``) with the same output.  A single file
given as ``path`` is always searched in Python.  Output modes: ``content`` (``path:line:text``
for matches, ``path-line-text`` for context lines, ``--`` between groups),
``files_with_matches`` (paths), ``count`` (``path:N`` matching lines).  Capped at ``limit``
matches (content) or files (other modes), lines cut at ``MAX_LINE_CHARS``.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field

import msgspec

from ama.tools._walk import Cancel, find_rg, rg_lines, rg_relative, run_cancellable, walk_files
from ama.tools.base import BuiltinTool, Tool, ToolError, ToolResult
from ama.tools.context import ToolContext, display_path
from ama.tools.find import search_root

DEFAULT_LIMIT = 200
MAX_LIMIT = 5000
MAX_CONTEXT = 20
MAX_LINE_CHARS = 500
MAX_OUTPUT_CHARS = 30_000
MODES = ["content", "files_with_matches", "count"]

DESCRIPTION = f"""Search file contents with a regular expression (ripgrep syntax, e.g. "def \\w+_test", "TODO|FIXME").
- path: a directory (default: the working directory) or a single file. glob filters files, e.g. "*.py" or "src/**/*.ts".
- Skips hidden, binary and .gitignore'd files.
- output_mode: "files_with_matches" (default) lists matching files; "content" shows matching lines as path:line:text (context lines as path-line-text, "--" between groups); "count" shows path:number of matching lines.
- context: lines of context around each match (content mode). ignore_case: case-insensitive search.
- At most limit matches (content) or files (other modes), default {DEFAULT_LIMIT}; lines longer than {MAX_LINE_CHARS} characters are cut."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "minLength": 1, "description": "Regular expression to search for."},
        "path": {
            "type": "string",
            "description": "Directory or file to search (default: the working directory).",
        },
        "glob": {
            "type": "string",
            "description": 'Only search files matching this glob (e.g. "*.py"); "!glob" excludes.',
        },
        "ignore_case": {"type": "boolean", "description": "Case-insensitive search (default false)."},
        "context": {
            "type": "integer",
            "minimum": 0,
            "maximum": MAX_CONTEXT,
            "description": "Lines of context before and after each match (content mode).",
        },
        "output_mode": {
            "type": "string",
            "enum": MODES,
            "description": "content, files_with_matches (default) or count.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "description": f"Maximum matches or files to return (default {DEFAULT_LIMIT}).",
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


@dataclass
class FileHits:
    path: str  # absolute
    count: int = 0  # matching lines
    lines: list[tuple[int, str, bool]] = field(default_factory=list)  # (number, text, is_match)


@dataclass
class Query:
    pattern: str
    root: str
    globs: list[str]
    ignore_case: bool
    context: int
    mode: str
    limit: int


# --- producers: ripgrep and Python, yielding the same FileHits ------------------------------


class _RgText(msgspec.Struct):
    text: str | None = None
    data: str | None = msgspec.field(default=None, name="bytes")

    def raw(self) -> bytes:
        return self.text.encode() if self.text is not None else base64.b64decode(self.data or "")

    def decode(self) -> str:
        return self.text if self.text is not None else self.raw().decode("utf-8", "replace")


class _RgData(msgspec.Struct):
    path: _RgText | None = None
    lines: _RgText | None = None
    line_number: int | None = None


class _RgEvent(msgspec.Struct):
    type: str
    data: _RgData | None = None


_decode_event = msgspec.json.Decoder(_RgEvent).decode


def _strip_eol(text: str) -> str:
    return text.removesuffix("\n").removesuffix("\r")


def rg_hits(rg: str, q: Query, cancel: Cancel) -> Generator[FileHits, None, None]:
    args = ["-e", q.pattern]
    if q.ignore_case:
        args.append("-i")
    for g in q.globs:
        args += ["-g", g]
    if q.mode == "files_with_matches":
        for rec in rg_lines(rg, ["-l", "--null", *args, "."], q.root, cancel, sep=b"\0"):
            yield FileHits(os.path.join(q.root, rg_relative(rec)), 1)
        return
    if q.mode == "count":
        for rec in rg_lines(rg, ["-c", "--null", *args, "."], q.root, cancel):
            path, _, n = rec.rpartition(b"\0")
            yield FileHits(os.path.join(q.root, rg_relative(path)), int(n))
        return
    if q.context:
        args += ["-C", str(q.context)]
    current: FileHits | None = None
    for rec in rg_lines(rg, ["--json", *args, "."], q.root, cancel):
        ev = _decode_event(rec)
        d = ev.data
        if d is None:
            continue
        if ev.type == "begin" and d.path is not None:
            current = FileHits(os.path.join(q.root, rg_relative(d.path.raw())))
        elif ev.type in ("match", "context") and current is not None and d.lines is not None:
            is_match = ev.type == "match"
            current.count += is_match
            current.lines.append((d.line_number or 0, _strip_eol(d.lines.decode()), is_match))
            if current.count > q.limit:  # enough from this file: the rest would not be shown
                yield current
                return
        elif ev.type == "end" and current is not None:
            yield current
            current = None


def compile_pattern(q: Query) -> re.Pattern[str]:
    try:
        return re.compile(q.pattern, re.IGNORECASE if q.ignore_case else 0)
    except re.error as e:
        raise ToolError(f"Invalid regular expression {q.pattern!r}: {e}") from None


def search_file(path: str, regex: re.Pattern[str], q: Query) -> FileHits | None:
    """One file's hits (None: binary, unreadable or no match)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"\x00" in data:
        return None
    lines = data.decode("utf-8", "replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    matched = [i for i, line in enumerate(lines) if regex.search(line)]
    if not matched:
        return None
    if q.mode == "content":
        matched = matched[: q.limit + 1]  # as rg_hits: no more than can be shown, plus one
    if q.mode == "files_with_matches":
        return FileHits(path, 1)
    hits = FileHits(path, len(matched))
    if q.mode == "content":
        show: set[int] = set()
        for i in matched:
            show.update(range(max(0, i - q.context), min(len(lines), i + q.context + 1)))
        is_match = set(matched)
        hits.lines = [(i + 1, lines[i].removesuffix("\r"), i in is_match) for i in sorted(show)]
    return hits


def python_hits(q: Query, cancel: Cancel) -> Generator[FileHits, None, None]:
    regex = compile_pattern(q)
    for path in walk_files(q.root, q.globs, cancel):
        hits = search_file(path, regex, q)
        if hits is not None:
            yield hits


def collect(hits: Iterator[FileHits], q: Query) -> tuple[list[FileHits], bool]:
    """Take hits until the limit is passed (whole files, so context after the last match is there)."""
    out: list[FileHits] = []
    total = 0
    for h in hits:
        out.append(h)
        total += h.count if q.mode == "content" else 1
        if total > q.limit:
            return out, True
    return out, False


# --- output ---------------------------------------------------------------------------------


def _cut(text: str) -> str:
    return text if len(text) <= MAX_LINE_CHARS else f"{text[:MAX_LINE_CHARS]}… [line cut]"


def format_hits(found: list[FileHits], q: Query, cwd: str) -> tuple[list[str], int, int]:
    """Output lines, how many matches (content) or files they show, and from how many files."""
    out: list[str] = []
    shown = files = 0
    for h in found:
        name = display_path(h.path, cwd)
        if q.mode != "content":
            if shown == q.limit:
                break
            out.append(name if q.mode == "files_with_matches" else f"{name}:{h.count}")
            shown += 1
            files += 1
            continue
        if shown == q.limit:
            break
        files += 1
        if q.context and out:
            out.append("--")
        prev = None
        last_match = 0
        for number, text, is_match in h.lines:
            if shown == q.limit and (is_match or number > last_match + q.context):
                break
            if prev is not None and number != prev + 1 and q.context:
                out.append("--")
            out.append(f"{name}{':' if is_match else '-'}{number}{':' if is_match else '-'}{_cut(text)}")
            prev = number
            if is_match:
                shown += 1
                last_match = number
    return out, shown, files


def make_grep_tool(*, use_rg: bool = True) -> Tool:
    """``use_rg=False`` always takes the Python search (tests, or hosts without a usable rg)."""

    async def run(call_id: str, args: dict, ctx: ToolContext, on_update: object) -> ToolResult:
        root = search_root(ctx, args.get("path"))
        q = Query(
            pattern=args["pattern"],
            root=root,
            globs=[args["glob"]] if args.get("glob") else [],
            ignore_case=bool(args.get("ignore_case")),
            context=int(args.get("context") or 0),
            mode=args.get("output_mode") or "files_with_matches",
            limit=int(args.get("limit") or DEFAULT_LIMIT),
        )

        def search(cancel: Cancel) -> tuple[list[FileHits], bool]:
            if os.path.isfile(root):
                hits = search_file(root, compile_pattern(q), q)
                return ([hits] if hits else []), False
            rg = find_rg() if use_rg else None
            producer = rg_hits(rg, q, cancel) if rg else python_hits(q, cancel)
            try:
                return collect(producer, q)
            finally:
                producer.close()

        found, more = await run_cancellable(search, ctx.abort)
        lines, shown, files = format_hits(found, q, ctx.cwd)
        details = {"mode": q.mode, "files": files, "shown": shown, "truncated": more}
        if not lines:
            return ToolResult.text(f"No matches for {q.pattern!r} in {root}.", details)
        text, size = [], 0
        for line in lines:
            size += len(line) + 1
            if size > MAX_OUTPUT_CHARS:
                text.append(f"\n[Output cut at {MAX_OUTPUT_CHARS} characters; narrow the search.]")
                details["truncated"] = True
                break
            text.append(line)
        else:
            if more:
                unit = "matches" if q.mode == "content" else "files"
                text.append(f"\n[Showing the first {q.limit} {unit}; narrow the search or raise limit.]")
        return ToolResult.text("\n".join(text), details)

    return BuiltinTool("grep", "Grep", DESCRIPTION, PARAMETERS, True, run)
