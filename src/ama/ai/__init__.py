"""The model layer: providers, streaming events, model registry and prices.

``import ama.ai`` is cheap: the HTTP client and the provider modules load on the first
request.  See docs/providers.md for the config format and the scripted provider.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ama.ai.cost import calculate_cost
from ama.ai.errors import ProviderError, backoff_delay
from ama.ai.events import (
    DoneEvent,
    ErrorEvent,
    Event,
    Rebuilder,
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
from ama.ai.registry import ModelRegistry, split_ref
from ama.ai.types import THINKING_LEVELS, Context, Model, ModelCost, StreamOptions, ToolSpec

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from ama.messages import AssistantMessage


def stream(model: Model, context: Context, options: StreamOptions | None = None) -> AsyncIterator[Event]:
    """Stream one request: ``start``, content events, then ``done`` or ``error``.  Never raises
    for provider or HTTP failures (see ``ama.ai.streaming``)."""
    from ama.ai.streaming import stream as _stream

    return _stream(model, context, options)


async def complete(model: Model, context: Context, options: StreamOptions | None = None) -> AssistantMessage:
    """Run a request to its end; the final message (stopReason ``error``/``aborted`` on failure)."""
    from ama.ai.streaming import complete as _complete

    return await _complete(model, context, options)


def reset_scripted(path: str | None = None) -> None:
    """Forget which turns of a script (or of all scripts) this process has served."""
    from ama.ai.scripted import reset

    reset(path)


async def aclose() -> None:
    """Close the running loop's HTTP client (idle connections); safe to call any time."""
    import sys

    http = sys.modules.get("ama.ai.http")
    if http is not None:
        await http.aclose()


__all__ = [
    "aclose",
    "backoff_delay",
    "calculate_cost",
    "complete",
    "Context",
    "DoneEvent",
    "ErrorEvent",
    "Event",
    "Model",
    "ModelCost",
    "ModelRegistry",
    "ProviderError",
    "Rebuilder",
    "reset_scripted",
    "split_ref",
    "StartEvent",
    "stream",
    "StreamOptions",
    "TextDeltaEvent",
    "TextEndEvent",
    "TextStartEvent",
    "THINKING_LEVELS",
    "ThinkingDeltaEvent",
    "ThinkingEndEvent",
    "ThinkingStartEvent",
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
    "ToolSpec",
]
