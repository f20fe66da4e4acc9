"""Helpers for the tool tests: a call helper, an in-memory session, process checks."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from ama.messages import TextContent
from ama.tools import Tool, ToolContext, ToolError, ToolResult


class MemorySession:
    """A test double of the session's ``SessionHandle`` (the Protocol boundary of the tools)."""

    def __init__(self) -> None:
        self.customs: list[tuple[str, Any]] = []

    def append_custom(self, custom_type: str, data: Any) -> str:
        self.customs.append((custom_type, data))
        return f"e{len(self.customs)}"

    def latest_custom(self, custom_type: str) -> Any | None:
        for kind, data in reversed(self.customs):
            if kind == custom_type:
                return data
        return None


async def call(tool: Tool, ctx: ToolContext, call_id: str = "call1", **args: Any) -> ToolResult:
    """Validate and execute like the agent does: an invalid call raises ToolError."""
    err = tool.validate(args)
    if err is not None:
        raise ToolError(err)
    return await tool.execute(call_id, args, ctx)


async def fails(tool: Tool, ctx: ToolContext, **args: Any) -> str:
    """The message of the ToolError the call raises."""
    with pytest.raises(ToolError) as info:
        await call(tool, ctx, **args)
    return info.value.message


def text(result: ToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


def pid_running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is not: this container's init does not reap)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in (b"Z", b"X")


def wait_gone(pid: int, seconds: float = 5.0) -> bool:
    """Poll until ``pid`` is gone (no timing assertion: a generous bound for a slow machine)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not pid_running(pid):
            return True
        time.sleep(0.02)
    return not pid_running(pid)


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)
    return path
