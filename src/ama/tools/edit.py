"""``edit``: exact string replacement in a file that was read in this session.

``old_string`` must occur exactly once unless ``replace_all``; errors say why not (not found,
with a hint when only whitespace or pasted line numbers differ; found N times, with the
line numbers).  Files with CRLF line endings accept ``old_string`` / ``new_string`` written
with LF.  The result carries a unified diff in ``details.diff``.
"""

from __future__ import annotations

import re

from ama.tools.base import BuiltinTool, Tool, ToolError, ToolResult
from ama.tools.context import ToolContext, display_path, resolve_path
from ama.tools.diff import unified_diff
from ama.tools.fileops import LOCAL, FileOps, not_found_text
from ama.tools.write import commit_write, refuse_special

DESCRIPTION = """Edit a file by exact string replacement: replaces old_string with new_string.
- The file must have been read in this session (with read) and be unchanged since; otherwise read it first.
- old_string must match the file exactly, including whitespace and indentation, and must not include the line-number prefix that read shows.
- old_string must occur exactly once: include enough surrounding lines to make it unique, or set replace_all to replace every occurrence (e.g. to rename a variable).
- To create a new file use write."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "minLength": 1,
            "description": "File to edit (absolute or relative to the working directory).",
        },
        "old_string": {"type": "string", "description": "The exact text to replace."},
        "new_string": {
            "type": "string",
            "description": "The text to put in its place (must differ from old_string).",
        },
        "replace_all": {
            "type": "boolean",
            "description": "Replace every occurrence of old_string (default false).",
        },
    },
    "required": ["path", "old_string", "new_string"],
    "additionalProperties": False,
}

MAX_LISTED_LINES = 20
_LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+\t", re.MULTILINE)


def _check(args: dict) -> str | None:
    if args["old_string"] == "":
        return "old_string must not be empty (to create a file use write)"
    if args["old_string"] == args["new_string"]:
        return "old_string and new_string are identical; there is nothing to change"
    return None


def line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def occurrences(text: str, needle: str) -> list[int]:
    out = []
    i = text.find(needle)
    while i != -1:
        out.append(i)
        i = text.find(needle, i + len(needle))
    return out


def _not_found_hint(content: str, old: str) -> str:
    if _LINE_NUMBER_PREFIX.search(old) and all(
        _LINE_NUMBER_PREFIX.match(line) for line in old.split("\n") if line.strip()
    ):
        return " old_string seems to include the line numbers that read shows; leave them out."
    want = [line.strip() for line in old.strip("\n").split("\n")]
    have = [line.strip() for line in content.split("\n")]
    for i in range(len(have) - len(want) + 1):
        if have[i] == want[0] and have[i : i + len(want)] == want:
            return (
                f" A match that differs only in whitespace or indentation starts at line {i + 1};"
                " copy the text exactly as the file has it."
            )
    return " Read the file again to see its current content."


def _printable(text: str) -> str:
    """Undo surrogateescape for display (JSON cannot carry lone surrogates)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def make_edit_tool(*, ops: FileOps | None = None) -> Tool:
    fs = ops or LOCAL

    async def run(call_id: str, args: dict, ctx: ToolContext, on_update: object) -> ToolResult:
        path = resolve_path(ctx.cwd, args["path"])
        old, new = args["old_string"], args["new_string"]
        replace_all = bool(args.get("replace_all"))
        try:
            st = fs.stat(path)
        except FileNotFoundError:
            raise ToolError(not_found_text(path, fs)) from None
        refuse_special(path, st)
        problem = ctx.read_files.check(path)
        if problem:
            raise ToolError(problem)
        with fs.open_read(path) as f:
            # surrogateescape: bytes that are not UTF-8 survive the round trip unchanged
            content = f.read().decode("utf-8", "surrogateescape")
        found = occurrences(content, old)
        if not found and "\r\n" in content and "\n" in old and "\r\n" not in old:
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
            found = occurrences(content, old)
        if not found:
            raise ToolError(f"old_string was not found in {path}.{_not_found_hint(content, old)}")
        if len(found) > 1 and not replace_all:
            lines = [str(line_of(content, i)) for i in found[:MAX_LISTED_LINES]]
            more = ", ..." if len(found) > MAX_LISTED_LINES else ""
            raise ToolError(
                f"old_string was found {len(found)} times in {path} (lines {', '.join(lines)}{more}). "
                "Include more surrounding context to make it unique, or set replace_all to true to replace every occurrence."
            )
        updated = content.replace(old, new) if replace_all else content.replace(old, new, 1)
        sha = commit_write(fs, ctx, path, updated.encode("utf-8", "surrogateescape"))
        first = line_of(content, found[0])
        count = len(found) if replace_all else 1
        what = f"{count} occurrences" if count > 1 else f"1 occurrence at line {first}"
        diff = unified_diff(_printable(content), _printable(updated), display_path(path, ctx.cwd))
        details = {"path": path, "diff": diff, "replacements": count, "firstChangedLine": first, "sha256": sha}
        return ToolResult.text(f"Edited {path}: replaced {what}.", details)

    return BuiltinTool("edit", "Edit", DESCRIPTION, PARAMETERS, False, run, _check)
