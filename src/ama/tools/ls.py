"""``ls``: the entries of one directory, sorted, directories marked with ``/``, capped."""

from __future__ import annotations

import fnmatch
import stat as stat_mod

from ama.tools.base import BuiltinTool, Tool, ToolError, ToolResult
from ama.tools.context import ToolContext, resolve_path
from ama.tools.fileops import LOCAL, FileOps

MAX_ENTRIES = 500

DESCRIPTION = f"""List the entries of a directory (not recursive), sorted by name; directories end with "/". Hidden entries are included.
- path: the directory (default: the working directory). ignore: glob patterns of names to leave out, e.g. ["node_modules", "*.pyc"].
- At most {MAX_ENTRIES} entries. To find files by pattern across directories use find."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Directory to list (default: the working directory)."},
        "ignore": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Glob patterns of entry names to leave out.",
        },
    },
    "additionalProperties": False,
}


def make_ls_tool(*, ops: FileOps | None = None) -> Tool:
    fs = ops or LOCAL

    async def run(call_id: str, args: dict, ctx: ToolContext, on_update: object) -> ToolResult:
        path = resolve_path(ctx.cwd, args.get("path") or ".")
        ignore: list[str] = args.get("ignore") or []
        try:
            st = fs.stat(path)
        except FileNotFoundError:
            raise ToolError(f"Directory not found: {path}") from None
        if not stat_mod.S_ISDIR(st.st_mode):
            raise ToolError(f"Not a directory: {path} (use read for files).")
        listed = [
            (name, is_dir)
            for name, is_dir in fs.list_dir(path)
            if not any(fnmatch.fnmatchcase(name, pat) for pat in ignore)
        ]
        listed.sort(key=lambda e: (e[0].casefold(), e[0]))
        entries = [name + "/" if is_dir else name for name, is_dir in listed]
        details = {"path": path, "count": len(entries), "truncated": len(entries) > MAX_ENTRIES}
        if not entries:
            return ToolResult.text(f"{path} is empty.", details)
        text = "\n".join(entries[:MAX_ENTRIES])
        if len(entries) > MAX_ENTRIES:
            text += f"\n\n[Showing {MAX_ENTRIES} of {len(entries)} entries; use find or a narrower path.]"
        return ToolResult.text(text, details)

    return BuiltinTool("ls", "List", DESCRIPTION, PARAMETERS, True, run)
