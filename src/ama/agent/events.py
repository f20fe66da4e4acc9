"""Agent events: plain JSON-ready dicts with a ``type`` (the names and fields of docs/rpc.md).

In process and on the wire the events are the same dicts; ``message_update`` carries only
the delta (``assistantMessageEvent``), so a client rebuilds the message from the deltas.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

Event = dict[str, Any]
Listener = Callable[[Event], None]


def plain(obj: Any) -> Any:
    """msgspec structs (messages, entries, stream events) -> JSON-ready builtins."""
    return msgspec.to_builtins(obj)


def event(type_: str, **fields: Any) -> Event:
    return {"type": type_, **{k: v for k, v in fields.items() if v is not None}}


class Emitter:
    """Fans events out to listeners; a failing listener is dropped from that event only."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, fn: Listener) -> Callable[[], None]:
        self._listeners.append(fn)

        def unsubscribe() -> None:
            if fn in self._listeners:
                self._listeners.remove(fn)

        return unsubscribe

    def emit(self, ev: Event) -> None:
        for fn in list(self._listeners):
            try:
                fn(ev)
            except Exception as exc:  # a broken listener must not break the run
                import sys

                print(f"ama: event listener failed on {ev.get('type')}: {exc!r}", file=sys.stderr)
