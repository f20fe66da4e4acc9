"""Assemble an assistant message while emitting its stream events (shared by every provider).

A provider calls ``text_start`` / ``delta`` / ``end`` … and yields the events these return;
the stream wrapper calls ``finish`` or ``fail``.  The builder also keeps the request's
timing and HTTP status for the ``ama.request`` record.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

import msgspec

from ama.ai.cost import calculate_cost
from ama.ai.errors import ProviderError
from ama.ai.events import (
    DoneEvent,
    ErrorEvent,
    Event,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from ama.ai.types import Model
from ama.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall, Usage

UNSET = msgspec.UNSET


class _Open:
    __slots__ = ("kind", "parts", "signature", "redacted")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.parts: list[str] = []
        self.signature: str | None = None
        self.redacted = False


_compact = msgspec.json.Encoder()


def compact_json(value: Any) -> str:
    """``value`` as compact JSON text, keys in their own order."""
    return _compact.encode(value).decode("utf-8")


def parse_arguments(text: str) -> dict[str, Any]:
    """Tool-call arguments from their JSON text; ``{}`` when empty or not an object."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class MessageBuilder:
    def __init__(self, model: Model) -> None:
        self.model = model
        self.message = AssistantMessage(
            api=model.api, provider=model.provider, model=model.id, timestamp=int(time.time() * 1000)
        )
        self.usage = Usage()
        self._open: dict[int, _Open] = {}
        # request record
        self.started_at = datetime.now(UTC)
        self._t0 = time.monotonic()
        self.first_byte_ms: int | None = None
        self.http_status: int | None = None
        self.requested = False

    # --- timing -----------------------------------------------------------------------

    def mark_first_byte(self) -> None:
        if self.first_byte_ms is None:
            self.first_byte_ms = int((time.monotonic() - self._t0) * 1000)

    def record(self) -> dict[str, Any]:
        return {
            "provider": self.model.provider,
            "model": self.model.id,
            "channel": self.model.channel or self.model.api,
            "startedAt": self.started_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "firstByteMs": self.first_byte_ms,
            "durationMs": int((time.monotonic() - self._t0) * 1000),
            "httpStatus": self.http_status,
            "stopReason": self.message.stop_reason,
        }

    # --- blocks -----------------------------------------------------------------------

    def start(self) -> StartEvent:
        return StartEvent(partial=msgspec.structs.replace(self.message, content=[], usage=Usage()))

    def open_indices(self) -> list[int]:
        return sorted(self._open)

    def kind(self, index: int) -> str | None:
        o = self._open.get(index)
        return o.kind if o else None

    def _new(self, kind: str, block: Any) -> int:
        index = len(self.message.content)
        self.message.content.append(block)
        self._open[index] = _Open(kind)
        return index

    def text_start(self) -> tuple[int, Event]:
        i = self._new("text", TextContent(text=""))
        return i, TextStartEvent(content_index=i)

    def thinking_start(self) -> tuple[int, Event]:
        i = self._new("thinking", ThinkingContent(thinking=""))
        return i, ThinkingStartEvent(content_index=i)

    def toolcall_start(self, id: str, name: str) -> tuple[int, Event]:
        i = self._new("toolCall", ToolCall(id=id, name=name))
        return i, ToolCallStartEvent(content_index=i, id=id, name=name)

    def delta(self, index: int, text: str) -> Event | None:
        o = self._open[index]
        if not text:
            return None
        o.parts.append(text)
        if o.kind == "text":
            return TextDeltaEvent(content_index=index, delta=text)
        if o.kind == "thinking":
            return ThinkingDeltaEvent(content_index=index, delta=text)
        return ToolCallDeltaEvent(content_index=index, delta=text)

    def rename_tool(self, index: int, name: str) -> None:
        """A tool name that arrives after the call started (some OpenAI-compatible servers)."""
        old = self.message.content[index]
        assert isinstance(old, ToolCall)
        old.name = name

    def set_signature(self, index: int, signature: str, *, append: bool = False) -> None:
        o = self._open[index]
        o.signature = (o.signature or "") + signature if append else signature

    def set_redacted(self, index: int) -> None:
        self._open[index].redacted = True

    def end(self, index: int) -> Event:
        o = self._open.pop(index)
        text = "".join(o.parts)
        if o.kind == "text":
            block = TextContent(text=text)
            ev = TextEndEvent(content_index=index, content=text)
            if o.signature is not None:
                block.text_signature = ev.signature = o.signature
            self.message.content[index] = block
            return ev
        if o.kind == "thinking":
            tblock = ThinkingContent(thinking=text)
            tev = ThinkingEndEvent(content_index=index, content=text)
            if o.signature is not None:
                tblock.thinking_signature = tev.signature = o.signature
            if o.redacted:
                tblock.redacted = tev.redacted = True
            self.message.content[index] = tblock
            return tev
        old = self.message.content[index]
        assert isinstance(old, ToolCall)
        args = parse_arguments(text)
        call = ToolCall(id=old.id, name=old.name, arguments=args)
        if args and text != compact_json(args):
            call.raw_arguments = text  # kept so the replay sends the model's own bytes
        self.message.content[index] = call
        return ToolCallEndEvent(content_index=index, tool_call=call)

    def end_all(self) -> list[Event]:
        return [self.end(i) for i in sorted(self._open)]

    # --- the end ----------------------------------------------------------------------

    def _final_usage(self) -> Usage:
        u = self.usage
        usage = Usage(
            input=u.input,
            output=u.output,
            cache_read=u.cache_read,
            cache_write=u.cache_write,
            total_tokens=u.input + u.output + u.cache_read + u.cache_write,
        )
        cost = calculate_cost(self.model, usage)
        if cost is not None:
            usage.cost = cost
        return usage

    def finish(self, stop_reason: str) -> list[Event]:
        events = self.end_all()
        self.message.usage = self._final_usage()
        self.message.stop_reason = stop_reason
        final = msgspec.structs.replace(self.message, content=list(self.message.content))
        events.append(DoneEvent(reason=stop_reason, message=final))
        return events

    def fail(self, error: ProviderError | None, *, aborted: bool = False) -> list[Event]:
        events = self.end_all()
        reason = "aborted" if aborted else "error"
        self.message.usage = self._final_usage()
        self.message.stop_reason = reason
        self.message.error_message = "Request was aborted" if aborted else (error.message if error else "error")
        final = msgspec.structs.replace(self.message, content=list(self.message.content))
        events.append(ErrorEvent(reason=reason, message=final, error=error))
        return events
