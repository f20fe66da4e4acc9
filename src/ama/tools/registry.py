"""The built-in tool set and its specs for the model request."""

from __future__ import annotations

import copy
from collections.abc import Iterable

from ama.tools._process import DEFAULT_GRACE
from ama.tools.base import Tool
from ama.tools.bash import DEFAULT_SANDBOX_SUFFIX, make_bash_tool
from ama.tools.edit import make_edit_tool
from ama.tools.find import make_find_tool
from ama.tools.grep import make_grep_tool
from ama.tools.jobs import BackgroundJobs, make_bash_kill_tool, make_bash_output_tool
from ama.tools.ls import make_ls_tool
from ama.tools.read import make_read_tool
from ama.tools.todo import make_todo_tool
from ama.tools.write import make_write_tool


def builtin_tools(
    *,
    sandbox_active: bool = False,
    sandbox_description: str | None = None,
    jobs: BackgroundJobs | None = None,
) -> list[Tool]:
    """read, write, edit, bash, bash_output, bash_kill, ls, find, grep, todo — in this order.

    ``sandbox_active`` adds bash's ``sandbox`` parameter and appends ``sandbox_description``
    (default: the standard sentence) to its description.  Pass ``jobs`` to keep a handle on
    the background jobs (``jobs.kill_all()`` at session end); otherwise one is made.
    """
    registry = jobs if jobs is not None else BackgroundJobs(kill_grace=DEFAULT_GRACE)
    suffix = (sandbox_description or DEFAULT_SANDBOX_SUFFIX) if sandbox_active else None
    return [
        make_read_tool(),
        make_write_tool(),
        make_edit_tool(),
        make_bash_tool(jobs=registry, sandbox_description=suffix, kill_grace=registry.kill_grace),
        make_bash_output_tool(registry),
        make_bash_kill_tool(registry),
        make_ls_tool(),
        make_find_tool(),
        make_grep_tool(),
        make_todo_tool(),
    ]


def tool_specs(tools: Iterable[Tool]) -> list[dict]:
    """``{name, description, parameters}`` per tool, in the given order.  The same tools give
    byte-identical specs on every call (prompt caching); the dicts are copies."""
    return [
        {"name": t.name, "description": t.description, "parameters": copy.deepcopy(t.parameters)}
        for t in tools
    ]
