"""A small task host for the external runners: it keeps what the runner reports and answers
approvals from a list, as the sub-agents side would through the approval broker."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any


class FakeHost:
    def __init__(self, answers: list[str] | None = None) -> None:
        self.updates: list[dict[str, Any]] = []
        self.asks: list[dict[str, Any]] = []
        self.records: list[tuple[str, dict[str, Any]]] = []
        self.answers = list(answers or [])
        self.on_ask: Callable[[dict[str, Any]], Awaitable[None]] | None = None
        self.hold = False  # never answer (a user who walked away)

    def update(self, payload: dict[str, Any]) -> None:
        self.updates.append(payload)

    async def ask_permission(self, request: dict[str, Any]) -> str:
        self.asks.append(request)
        if self.on_ask is not None:
            await self.on_ask(request)
        if self.hold:
            await asyncio.Event().wait()
        return self.answers.pop(0) if self.answers else ""

    def record(self, custom_type: str, data: dict[str, Any]) -> None:
        self.records.append((custom_type, data))

    def kinds(self) -> list[str]:
        return [u["kind"] for u in self.updates]

    def text(self) -> str:
        return "".join(u["text"] for u in self.updates if u["kind"] == "text")

    def of(self, custom_type: str) -> list[dict[str, Any]]:
        return [d for t, d in self.records if t == custom_type]
