"""LLM message shapes, shared by every layer (declared once, used by reader and writer).

These are the shapes of pi's session format v3 (``message`` entries) and of the model
context: content blocks, the four conversation roles plus pi's ``bashExecution``, and the
context-only roles the projection produces (``custom``, ``compactionSummary``,
``branchSummary``).  JSON keys are camelCase; ``role`` / ``type`` tags come first.
Timestamps inside messages are epoch milliseconds.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec

# Fields with a plain default are always written; optional fields default to UNSET and are
# written only when set.  Decoding is lenient: a missing field takes its default.
_opts: dict[str, Any] = {"rename": "camel", "kw_only": True}
UNSET = msgspec.UNSET
Unset: TypeAlias = msgspec.UnsetType


# --- content blocks -------------------------------------------------------------------


class TextContent(msgspec.Struct, tag_field="type", tag="text", **_opts):
    text: str
    text_signature: str | Unset = UNSET


class ImageContent(msgspec.Struct, tag_field="type", tag="image", **_opts):
    data: str  # base64
    mime_type: str


class ThinkingContent(msgspec.Struct, tag_field="type", tag="thinking", **_opts):
    thinking: str
    thinking_signature: str | Unset = UNSET
    redacted: bool | Unset = UNSET


class ToolCall(msgspec.Struct, tag_field="type", tag="toolCall", **_opts):
    id: str
    name: str
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)
    thought_signature: str | Unset = UNSET
    #: the arguments' JSON text exactly as the model sent it, when it is not the compact
    #: encoding of ``arguments`` (in their order); replayed to the provider byte for byte
    raw_arguments: str | Unset = UNSET


UserContent: TypeAlias = TextContent | ImageContent
AssistantContent: TypeAlias = TextContent | ThinkingContent | ToolCall
ContentBlock: TypeAlias = TextContent | ImageContent | ThinkingContent | ToolCall


# --- usage ----------------------------------------------------------------------------


class Cost(msgspec.Struct, **_opts):
    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    total: float = 0.0


class Usage(msgspec.Struct, **_opts):
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0
    cost: Cost | None | Unset = UNSET


StopReason: TypeAlias = Literal["stop", "length", "toolUse", "error", "aborted"]
UserOrigin: TypeAlias = Literal["steer", "followUp", "plan", "task", "host"]


# --- messages -------------------------------------------------------------------------


class SystemMessage(msgspec.Struct, tag_field="role", tag="system", **_opts):
    content: str | list[TextContent]
    timestamp: int = 0


class UserMessage(msgspec.Struct, tag_field="role", tag="user", **_opts):
    content: str | list[UserContent]
    timestamp: int = 0
    origin: str | Unset = UNSET


class AssistantMessage(msgspec.Struct, tag_field="role", tag="assistant", **_opts):
    content: list[AssistantContent] = msgspec.field(default_factory=list)
    api: str = ""
    provider: str = ""
    model: str = ""
    usage: Usage = msgspec.field(default_factory=Usage)
    stop_reason: str = "stop"
    error_message: str | Unset = UNSET
    timestamp: int = 0


class ToolResultMessage(msgspec.Struct, tag_field="role", tag="toolResult", **_opts):
    tool_call_id: str
    tool_name: str = ""
    content: list[UserContent] = msgspec.field(default_factory=list)
    details: Any | Unset = UNSET
    is_error: bool = False
    timestamp: int = 0


class BashExecutionMessage(msgspec.Struct, tag_field="role", tag="bashExecution", **_opts):
    """A user-run shell command (``!cmd``): pi's record, which ama writes for its own ``!cmd`` too."""

    command: str = ""
    output: str = ""
    exit_code: int | None = None
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None | Unset = UNSET
    exclude_from_context: bool | Unset = UNSET
    timestamp: int = 0


class CustomMessage(msgspec.Struct, tag_field="role", tag="custom", **_opts):
    """Context form of a ``custom_message`` entry (also pi v2's ``hookMessage``)."""

    custom_type: str = ""
    content: str | list[UserContent] = ""
    display: bool = False
    details: Any | Unset = UNSET
    timestamp: int = 0


class CompactionSummaryMessage(msgspec.Struct, tag_field="role", tag="compactionSummary", **_opts):
    summary: str
    tokens_before: int = 0
    timestamp: int = 0


class BranchSummaryMessage(msgspec.Struct, tag_field="role", tag="branchSummary", **_opts):
    summary: str
    from_id: str = ""
    timestamp: int = 0


#: Roles that may be stored in a ``message`` entry.
StoredMessage: TypeAlias = (
    SystemMessage | UserMessage | AssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage
)
#: Roles that may appear in a projected model context.
ContextMessage: TypeAlias = (
    SystemMessage
    | UserMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | CustomMessage
    | CompactionSummaryMessage
    | BranchSummaryMessage
)


def text_of(content: str | list[Any] | None) -> str:
    """The concatenated text of a string or a list of content blocks (text blocks only)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(b.text for b in content if isinstance(b, TextContent))


def image_count(content: str | list[Any] | None) -> int:
    if not content or isinstance(content, str):
        return 0
    return sum(1 for b in content if isinstance(b, ImageContent))
