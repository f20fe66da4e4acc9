"""Who answers a permission "ask": an approval broker.

The agent emits ``permission_request``, awaits the broker's answer (at most ``timeoutMs``,
600,000 by default or ``AMA_APPROVAL_TIMEOUT_MS``; an abort or a timeout is a deny), then
emits ``permission_resolved``.  Asks are serial: one at a time.  Without a broker the
session is unattended and the permission pipeline denies every ask itself.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ama.permissions import Answer

DEFAULT_TIMEOUT_MS = 600_000


def approval_timeout_ms() -> int:
    raw = os.environ.get("AMA_APPROVAL_TIMEOUT_MS", "")
    try:
        value = int(raw)
    except ValueError:
        return DEFAULT_TIMEOUT_MS
    return value if value > 0 else DEFAULT_TIMEOUT_MS


class ApprovalBroker(Protocol):
    async def ask(self, request: dict[str, Any]) -> Answer: ...


class CallbackBroker:
    """Answers through an async callback ``fn(request) -> Answer | str``
    (``"allow"``, ``"allow_session"``, ``"deny"``): the SDK's approval hook."""

    def __init__(self, fn: Callable[[dict[str, Any]], Awaitable[Answer | str]]) -> None:
        self._fn = fn

    async def ask(self, request: dict[str, Any]) -> Answer:
        answer = await self._fn(request)
        return answer if isinstance(answer, Answer) else Answer.parse(answer)
