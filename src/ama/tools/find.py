"""``find``: files whose path matches a glob, under a directory.

Lists files with ``rg --files --hidden`` when ripgrep is installed (respecting ``.gitignore``
and ``.ignore``; hidden files are listed, ``.git`` is not), else a Python walk with the same
rules and order (``_walk.py``), and keeps those matching the pattern.  The pattern only
filters: it never brings back ignored files.  Results are paths relative to the working
directory (absolute outside it), capped at ``limit``.
"""

from __future__ import annotations

import os

from ama.tools._ignore import compile_glob
from ama.tools._walk import Cancel, list_files, run_cancellable
from ama.tools.base import BuiltinTool, Tool, ToolError, ToolResult
from ama.tools.context import ToolContext, display_path, resolve_path

DEFAULT_LIMIT = 1000
MAX_LIMIT = 10_000

DESCRIPTION = f"""Find files by glob pattern, e.g. "*.py", "**/*.test.ts", "src/**/*.{{js,ts}}".
- A pattern without "/" matches file names at any depth; a pattern with "/" is matched against the path relative to the search directory.
- Skips files ignored by .gitignore / .ignore and the .git directory; hidden files (e.g. .github/...) are included.
- Returns file paths (relative to the working directory) sorted by path, at most limit (default {DEFAULT_LIMIT}).
- To search file contents use grep."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "minLength": 1, "description": "Glob pattern for the files to find."},
        "path": {"type": "string", "description": "Directory to search in (default: the working directory)."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "description": f"Maximum number of results (default {DEFAULT_LIMIT}).",
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


def search_root(ctx: ToolContext, path: str | None) -> str:
    root = resolve_path(ctx.cwd, path or ".")
    if not os.path.exists(root):
        raise ToolError(f"Path not found: {root}")
    return root


def pattern_rule(pattern: str, root: str):
    """The pattern as a rule over paths relative to ``root`` (``!`` negates; an absolute
    pattern under ``root`` and a leading ``./`` are made relative)."""
    negate = pattern.startswith("!")
    pattern = pattern[1:] if negate else pattern
    if pattern.startswith(root.rstrip("/") + "/"):
        pattern = pattern[len(root.rstrip("/")) + 1 :]
    pattern = pattern.removeprefix("./")
    return compile_glob(pattern, negate=negate)


def make_find_tool(*, use_rg: bool = True) -> Tool:
    """``use_rg=False`` always takes the Python walk (tests, or hosts without a usable rg)."""

    async def run(call_id: str, args: dict, ctx: ToolContext, on_update: object) -> ToolResult:
        root = search_root(ctx, args.get("path"))
        if not os.path.isdir(root):
            raise ToolError(f"Not a directory: {root} (find searches directories; use read or ls).")
        pattern: str = args["pattern"]
        limit = int(args.get("limit") or DEFAULT_LIMIT)
        rule = pattern_rule(pattern, root)
        if rule is None:
            raise ToolError(f"Not a usable glob pattern: {pattern!r}")

        def search(cancel: Cancel) -> tuple[list[str], bool]:
            found: list[str] = []
            for path in list_files(root, ["!.git"], cancel, use_rg=use_rg, hidden=True):
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                if rule.matches(rel, False) == rule.negate:
                    continue
                if len(found) == limit:
                    return found, True
                found.append(path)
            return found, False

        found, more = await run_cancellable(search, ctx.abort)
        shown = [display_path(p, ctx.cwd) for p in found]
        details = {"path": root, "count": len(found), "truncated": more}
        if not found:
            return ToolResult.text(f"No files matching {pattern!r} under {root}.", details)
        text = "\n".join(shown)
        if more:
            text += f"\n\n[Showing the first {limit} files; narrow the pattern or the path to see more.]"
        return ToolResult.text(text, details)

    return BuiltinTool("find", "Find", DESCRIPTION, PARAMETERS, True, run)
