"""The tools the model calls: read, write, edit, bash (+ bash_output, bash_kill), ls, find, grep, todo.

See ``docs/tools.md``.  The agent builds the set with ``builtin_tools()``, sends
``tool_specs(tools)`` to the model, and for each call runs ``tool.validate(args)`` and then
``await tool.execute(call_id, args, ctx)`` with a ``ToolContext``; a ``ToolError`` becomes an
error result with its message.
"""

from ama.tools.base import BuiltinTool, Tool, ToolError, ToolResult
from ama.tools.context import (
    BashSandboxLike,
    ReadFiles,
    SessionHandle,
    ToolContext,
    WrappedCommandLike,
    display_path,
    resolve_path,
)
from ama.tools.fileops import FileOps, LocalFileOps
from ama.tools.jobs import BackgroundJobs, Job
from ama.tools.registry import builtin_tools, tool_specs

__all__ = [
    "BackgroundJobs",
    "BashSandboxLike",
    "BuiltinTool",
    "FileOps",
    "Job",
    "LocalFileOps",
    "ReadFiles",
    "SessionHandle",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "WrappedCommandLike",
    "builtin_tools",
    "display_path",
    "resolve_path",
    "tool_specs",
]
