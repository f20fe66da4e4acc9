"""Streaming events of one model request.

A stream is ``start``, then for each content block ``*_start``, ``*_delta``…, ``*_end``
(blocks never interleave except OpenAI's parallel tool calls), then exactly one ``done``
or ``error``.  Events carry deltas only; :class:`Rebuilder` turns them back into the
message, and the message of ``done`` / ``error`` equals the rebuilt one (usage, stop
reason and error text come with the final event).

JSON keys are camelCase, ``type`` first (``to_builtins`` / ``encode``).
"""

from __future__ import annotations

from typing import Any, TypeAlias

import msgspec

from ama.ai.errors import ProviderError
from ama.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall

_opts: dict[str, Any] = {"rename": "camel", "kw_only": True, "tag_field": "type"}
UNSET = msgspec.UNSET


class _Event(msgspec.Struct, **_opts):
    @property
    def type(self) -> str:
        """The event's tag (``start``, ``text_delta``, …)."""
        return str(self.__struct_config__.tag)


class StartEvent(_Event, tag="start"):
    partial: AssistantMessage


class TextStartEvent(_Event, tag="text_start"):
    content_index: int


class TextDeltaEvent(_Event, tag="text_delta"):
    content_index: int
    delta: str


class TextEndEvent(_Event, tag="text_end"):
    content_index: int
    content: str
    signature: str | msgspec.UnsetType = UNSET


class ThinkingStartEvent(_Event, tag="thinking_start"):
    content_index: int


class ThinkingDeltaEvent(_Event, tag="thinking_delta"):
    content_index: int
    delta: str


class ThinkingEndEvent(_Event, tag="thinking_end"):
    content_index: int
    content: str
    signature: str | msgspec.UnsetType = UNSET
    redacted: bool | msgspec.UnsetType = UNSET


class ToolCallStartEvent(_Event, tag="toolcall_start"):
    content_index: int
    id: str
    name: str


class ToolCallDeltaEvent(_Event, tag="toolcall_delta"):
    content_index: int
    delta: str  # raw JSON text of the arguments


class ToolCallEndEvent(_Event, tag="toolcall_end"):
    content_index: int
    tool_call: ToolCall


class DoneEvent(_Event, tag="done"):
    reason: str  # stop | length | toolUse
    message: AssistantMessage


class ErrorEvent(_Event, tag="error"):
    reason: str  # error | aborted
    message: AssistantMessage
    error: Any = None  # ProviderError | None (encoded through its to_json())


Event: TypeAlias = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
)


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, ProviderError):
        return obj.to_json()
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")


def to_builtins(event: Event) -> dict:
    """The event as JSON-ready builtins (dicts, lists, str, numbers)."""
    return msgspec.to_builtins(event, enc_hook=_enc_hook)


def encode(event: Event) -> bytes:
    return msgspec.json.encode(event, enc_hook=_enc_hook)


class Rebuilder:
    """Rebuild an assistant message from events exactly as a client would."""

    def __init__(self) -> None:
        self.message: AssistantMessage | None = None
        self._buf: dict[int, list[str]] = {}

    def apply(self, ev: Event) -> AssistantMessage | None:
        if isinstance(ev, StartEvent):
            self.message = msgspec.structs.replace(ev.partial, content=list(ev.partial.content))
            return self.message
        msg = self.message
        assert msg is not None, "start event missing"
        if isinstance(ev, TextStartEvent):
            self._place(msg, ev.content_index, TextContent(text=""))
        elif isinstance(ev, ThinkingStartEvent):
            self._place(msg, ev.content_index, ThinkingContent(thinking=""))
        elif isinstance(ev, ToolCallStartEvent):
            self._place(msg, ev.content_index, ToolCall(id=ev.id, name=ev.name))
        elif isinstance(ev, TextDeltaEvent | ThinkingDeltaEvent | ToolCallDeltaEvent):
            self._buf[ev.content_index].append(ev.delta)
        elif isinstance(ev, TextEndEvent):
            text = "".join(self._buf.pop(ev.content_index))
            block = TextContent(text=text)
            if ev.signature is not UNSET:
                block.text_signature = ev.signature
            msg.content[ev.content_index] = block
        elif isinstance(ev, ThinkingEndEvent):
            text = "".join(self._buf.pop(ev.content_index))
            tblock = ThinkingContent(thinking=text)
            if ev.signature is not UNSET:
                tblock.thinking_signature = ev.signature
            if ev.redacted is not UNSET:
                tblock.redacted = ev.redacted
            msg.content[ev.content_index] = tblock
        elif isinstance(ev, ToolCallEndEvent):
            self._buf.pop(ev.content_index, None)
            msg.content[ev.content_index] = ev.tool_call
        elif isinstance(ev, DoneEvent | ErrorEvent):
            msg.usage = ev.message.usage
            msg.stop_reason = ev.message.stop_reason
            msg.error_message = ev.message.error_message
        return msg

    def _place(self, msg: AssistantMessage, index: int, block: Any) -> None:
        while len(msg.content) <= index:
            msg.content.append(TextContent(text=""))
        msg.content[index] = block
        self._buf[index] = []
