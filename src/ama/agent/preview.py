"""``permission_request.preview``: what an asked-about call would do, for the one who answers.

- ``edit`` / ``write``: ``{kind: "diff", path, diff, created?}`` — the unified diff the call
  would make (the same text the tool's result carries in ``details.diff``), computed from the
  file on disk without writing anything; ``created: true`` for a write of a new file.
- ``bash``: ``{kind: "command", command, background, sandboxed, sandbox, network?}`` — whether
  this call runs in the OS sandbox, the sandbox kind detected for the session (``bwrap``,
  ``sandbox-exec``, ``none``…), and the network policy when sandboxed.

No preview (None) when there is nothing to show: another tool, an edit whose ``old_string``
does not match (the call will fail and say why), a file too large or not readable.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ama.tools.context import display_path, resolve_path
from ama.tools.diff import unified_diff

if TYPE_CHECKING:
    from ama.agent.parts import BashSandbox

MAX_PREVIEW_FILE = 4 * 1024 * 1024


def _read_text(path: str) -> str | None:
    """The file's text, "" when it does not exist, None when it cannot be shown."""
    try:
        if os.path.getsize(path) > MAX_PREVIEW_FILE or not os.path.isfile(path):
            return None
        with open(path, "rb") as f:
            data = f.read(MAX_PREVIEW_FILE + 1)
    except FileNotFoundError:
        return ""
    except OSError:
        return None
    return data.decode("utf-8", "replace")


def _edited(content: str, args: dict[str, Any]) -> str | None:
    old, new = args.get("old_string"), args.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str) or not old:
        return None
    if old not in content and "\r\n" in content and "\r\n" not in old:  # as the edit tool does
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    count = content.count(old)
    if count == 0 or count > 1 and not args.get("replace_all"):
        return None
    return content.replace(old, new) if args.get("replace_all") else content.replace(old, new, 1)


def file_preview(name: str, args: dict[str, Any], cwd: str) -> dict[str, Any] | None:
    raw = args.get("path")
    if not isinstance(raw, str) or not raw:
        return None
    path = resolve_path(cwd, raw)
    exists = os.path.lexists(path)
    before = _read_text(path) if exists else ""
    if before is None:
        return None
    if name == "edit":
        if not exists:
            return None
        after = _edited(before, args)
    else:
        content = args.get("content")
        after = content if isinstance(content, str) else None
    if after is None:
        return None
    out: dict[str, Any] = {"kind": "diff", "path": path, "diff": unified_diff(before, after, display_path(path, cwd))}
    if name == "write":
        out["created"] = not exists
    return out


def bash_preview(args: dict[str, Any], sandboxed: bool, sandbox: BashSandbox | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kind": "command",
        "command": str(args.get("command", "")),
        "background": bool(args.get("background")),
        "sandboxed": sandboxed,
        "sandbox": sandbox.status.kind if sandbox is not None else "none",
    }
    if sandboxed and sandbox is not None:
        out["network"] = sandbox.network
    return out


def permission_preview(
    name: str, args: dict[str, Any], cwd: str, *, sandboxed: bool, sandbox: BashSandbox | None
) -> dict[str, Any] | None:
    if name in ("edit", "write"):
        return file_preview(name, args, cwd)
    if name == "bash":
        return bash_preview(args, sandboxed, sandbox)
    return None
