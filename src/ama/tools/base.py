"""What a tool is: its result, its expected-failure error, and the protocol the agent calls.

A tool has a ``name`` the model calls it by, a ``label`` for humans, a ``description`` that
tells the model the rules, a JSON-schema ``parameters`` object and a ``read_only`` flag
(plan mode allows only read-only tools).  ``validate`` is pure: types, required fields and
enums, checked before any permission prompt.  ``execute`` does the work; an expected
failure (file not found, string not unique, ...) is raised as ``ToolError`` and shown to the
model as an error result.

Built-in tools are ``BuiltinTool`` instances made by one factory per module
(``make_read_tool()``, ``make_bash_tool()``, ...); the factory closes over the tool's I/O.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ama.errors import AmaError
from ama.messages import ImageContent, TextContent
from ama.tools._schema import validate_args

if TYPE_CHECKING:
    from ama.tools.context import ToolContext


@dataclass
class ToolResult:
    content: list[TextContent | ImageContent]
    details: dict | None = None
    is_error: bool = False

    @classmethod
    def text(cls, text: str, details: dict | None = None, *, is_error: bool = False) -> ToolResult:
        return cls([TextContent(text=text)], details, is_error)


class ToolError(AmaError):
    """An expected failure of a tool call; the agent shows ``message`` to the model as an error."""

    def __init__(self, message: str, **kw: Any) -> None:
        super().__init__("tool_error", message, **kw)


UpdateFn = Callable[[ToolResult], None]


@runtime_checkable
class Tool(Protocol):
    name: str
    label: str
    description: str
    parameters: dict
    read_only: bool

    def validate(self, args: dict) -> str | None: ...

    async def execute(
        self, call_id: str, args: dict, ctx: ToolContext, on_update: UpdateFn | None = None
    ) -> ToolResult: ...


RunFn = Callable[[str, dict, "ToolContext", "UpdateFn | None"], Awaitable[ToolResult]]


@dataclass
class BuiltinTool:
    """A tool made of a schema, an optional extra check and an async ``run`` function.

    ``check(args)`` runs after the schema check for rules a schema cannot say (e.g. "one of
    these two"); it is pure too.  ``execute`` validates again (the agent may not have) and maps
    ``OSError`` to ``ToolError`` so file-system errors never escape as exceptions of the OS.
    """

    name: str
    label: str
    description: str
    parameters: dict
    read_only: bool
    run: RunFn = field(repr=False)
    check: Callable[[dict], str | None] | None = field(default=None, repr=False)

    def validate(self, args: dict) -> str | None:
        err = validate_args(self.parameters, args)
        if err is None and self.check is not None:
            err = self.check(args)
        return None if err is None else f"Invalid arguments for {self.name}: {err}"

    async def execute(
        self, call_id: str, args: dict, ctx: ToolContext, on_update: UpdateFn | None = None
    ) -> ToolResult:
        err = self.validate(args)
        if err is not None:
            raise ToolError(err)
        try:
            return await self.run(call_id, args, ctx, on_update)
        except OSError as e:
            raise ToolError(os_error_text(e)) from e


def os_error_text(e: OSError) -> str:
    what = e.strerror or type(e).__name__
    return f"{what}: {e.filename}" if e.filename else what
