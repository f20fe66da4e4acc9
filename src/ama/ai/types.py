"""Plain data of the model layer: models, prices, tool specs, a request's context and options.

Everything here is standard library only, so that ``import ama.ai`` stays cheap.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

    from ama.messages import ContextMessage

#: Wire APIs the layer speaks.  ``scripted`` replays a file and never pretends to be a model.
APIS = ("anthropic-messages", "openai-completions", "scripted")

#: Thinking / reasoning levels, from none to most.
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")


@dataclass(frozen=True)
class ModelCost:
    """Prices in USD per million tokens."""

    input: float
    output: float
    cache_read: float = 0
    cache_write: float = 0


@dataclass(frozen=True)
class Model:
    provider: str
    id: str
    api: str
    base_url: str
    context_window: int
    max_tokens: int
    cost: ModelCost | None
    channel: str | None = None
    reasoning: bool = False
    images: bool = True
    api_key_env: str | None = None
    api_key: str | None = None
    #: extra HTTP headers sent with every request to this provider
    headers: dict[str, str] | None = field(default=None, hash=False)
    #: OpenAI-compatible quirks: ``maxTokensField``, ``streamUsage``, ``reasoningEffort``
    compat: dict[str, Any] | None = field(default=None, hash=False)
    #: a built-in provider needs a key; a user-declared endpoint (e.g. Ollama) may not
    requires_key: bool = False

    @property
    def ref(self) -> str:
        return f"{self.provider}/{self.id}"


def resolve_api_key(model: Model) -> str | None:
    """The key for ``model``: a literal ``apiKey`` from config, else its environment variable."""
    if model.api_key:
        return model.api_key
    if model.api_key_env:
        return os.environ.get(model.api_key_env) or None
    return None


@dataclass
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments object


@dataclass
class Context:
    system_prompt: str
    messages: list[ContextMessage] = field(default_factory=list)
    tools: list[ToolSpec] = field(default_factory=list)


@dataclass
class StreamOptions:
    api_key: str | None = None
    thinking_level: str = "off"  # off|minimal|low|medium|high|xhigh
    max_tokens: int | None = None
    abort: asyncio.Event | None = None
    #: called once per request (also failed ones) with the ``ama.request`` record
    on_request: Callable[[dict], None] | None = None
    session_id: str | None = None
    headers: dict[str, str] | None = None
    timeout: float = 600
