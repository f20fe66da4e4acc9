"""``stream()`` and ``complete()``: run one request on the provider of the model's API.

The provider runs in its own task and hands events through a queue; an abort (the
``options.abort`` event) cancels that task at once, wherever it is waiting, and the
stream ends with ``error{reason: "aborted"}`` carrying the partial message.  Provider and
HTTP failures end the stream with ``error{reason: "error"}``; nothing is raised.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator
from typing import Any

from ama.ai.builder import MessageBuilder
from ama.ai.errors import ProviderError
from ama.ai.events import DoneEvent, ErrorEvent, Event
from ama.ai.types import Context, Model, StreamOptions, resolve_api_key
from ama.messages import AssistantMessage

#: api -> module with ``async def run(model, context, options, builder, api_key)``
PROVIDERS: dict[str, str] = {
    "anthropic-messages": "ama.ai.anthropic",
    "openai-completions": "ama.ai.openai_completions",
    "scripted": "ama.ai.scripted",
}

_END = object()


def register_api(api: str, module: str) -> None:
    """Make ``module`` (with a ``run`` coroutine generator) serve models of ``api``."""
    PROVIDERS[api] = module


async def stream(model: Model, context: Context, options: StreamOptions | None = None) -> AsyncIterator[Event]:
    options = options or StreamOptions()
    builder = MessageBuilder(model)
    yield builder.start()
    abort = options.abort
    if abort is not None and abort.is_set():
        for ev in builder.fail(None, aborted=True):
            yield ev
        return
    api_key = options.api_key or resolve_api_key(model)
    queue: asyncio.Queue[Any] = asyncio.Queue()
    aborted = False

    async def produce() -> None:
        try:
            module = PROVIDERS.get(model.api)
            if module is None:
                raise ProviderError("invalid_request", f"no provider for api {model.api!r} (model {model.ref})")
            if model.requires_key and not api_key:
                env = f": set {model.api_key_env}" if model.api_key_env else ""
                raise ProviderError("auth", f"no API key for provider {model.provider!r}{env}", provider=model.provider)
            run = importlib.import_module(module).run
            async for ev in run(model, context, options, builder, api_key):
                queue.put_nowait(ev)
            queue.put_nowait(_END)
        except asyncio.CancelledError:
            queue.put_nowait(_END)
            raise
        except ProviderError as e:
            queue.put_nowait(e)
        except Exception as e:  # a bug or an unmapped failure: still an error event, never a raise
            err = ProviderError("provider_error", f"{model.ref}: {type(e).__name__}: {e}", provider=model.provider)
            err.__cause__ = e
            queue.put_nowait(err)

    task = asyncio.ensure_future(produce())

    async def watch() -> None:
        nonlocal aborted
        assert abort is not None
        await abort.wait()
        if not task.done():
            aborted = True
            task.cancel()

    watcher = asyncio.ensure_future(watch()) if abort is not None else None
    finished = False
    try:
        while True:
            item = await queue.get()
            if item is _END:
                break
            if isinstance(item, ProviderError):
                if not (abort is not None and abort.is_set()):
                    for ev in builder.fail(item):
                        yield ev
                    finished = True
                    break
                aborted = True
                break
            yield item
            if isinstance(item, DoneEvent | ErrorEvent):
                finished = True
        if not finished:
            if aborted or (abort is not None and abort.is_set()):
                for ev in builder.fail(None, aborted=True):
                    yield ev
            else:
                err = ProviderError("provider_error", f"{model.ref}: stream ended without a result", provider=model.provider)
                for ev in builder.fail(err):
                    yield ev
        if builder.requested and options.on_request is not None:
            options.on_request(builder.record())
    finally:
        if watcher is not None:
            watcher.cancel()
        if not task.done():
            task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass


async def complete(model: Model, context: Context, options: StreamOptions | None = None) -> AssistantMessage:
    """Run the request to its end and return the final (or partial, on error) message."""
    message: AssistantMessage | None = None
    async for ev in stream(model, context, options):
        if isinstance(ev, DoneEvent | ErrorEvent):
            message = ev.message
    assert message is not None
    return message
