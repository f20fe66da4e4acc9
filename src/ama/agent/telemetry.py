"""Rate telemetry of the conversation's model requests (docs/guards.md, "Rate telemetry").

Only requests of ``purpose: "turn"`` count (compaction summaries, probes and classifiers
do not).  For each request the meter records when it was sent (``requestAt``), its first
token (``firstTokenAt``, ``ttftMs``), when it ended (``doneAt``) and its output tokens;
``tps`` is ``outputTokens / (doneAt - firstTokenAt)``, left out when the request generated
for less than 250 ms.  While a reply streams, ``live`` estimates the rate over the last
2 s from the characters received (about 4 per token).  ``avgTps`` is the sum of output
tokens over the sum of generation times of the requests that have a ``tps``.

While streaming, a ``telemetry_tick`` event (no payload: read ``get_session_stats``) goes
out on a delta at most every 500 ms, the first one 500 ms after the first token, so an
instant reply has none; with ``ui.animation: false`` there are none at all.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

TICK_MS = 500  # at most 2 Hz
WINDOW_MS = 2000  # live tps window
MIN_GENERATION_MS = 250  # shorter generations are left out of tps and avgTps
CHARS_PER_TOKEN = 4


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class _Request:
    request_at: int
    first_token_at: int | None = None
    done_at: int | None = None
    output_tokens: int | None = None
    chars: int = 0
    last_tick: int = 0
    samples: deque[tuple[int, int]] = field(default_factory=deque)  # (ms, chars so far)

    def tps(self) -> float | None:
        if self.first_token_at is None or self.done_at is None or not self.output_tokens:
            return None
        gen = self.done_at - self.first_token_at
        if gen < MIN_GENERATION_MS:
            return None
        return self.output_tokens * 1000 / gen

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"requestAt": self.request_at}
        if self.first_token_at is not None:
            out["firstTokenAt"] = self.first_token_at
            out["ttftMs"] = self.first_token_at - self.request_at
        if self.done_at is not None:
            out["doneAt"] = self.done_at
            if self.output_tokens is not None:
                out["outputTokens"] = self.output_tokens
            tps = self.tps()
            if tps is not None:
                out["tps"] = round(tps, 2)
        return out


class Telemetry:
    """The telemetry of one session: ``start()`` a request, feed it ``delta()`` and
    ``done()``; ``snapshot()`` is ``SessionStats.telemetry``."""

    def __init__(
        self, emit: Callable[[dict], None] | None = None, *, ticks: bool = True, clock: Callable[[], int] = now_ms
    ) -> None:
        self._emit = emit
        self.ticks = ticks and emit is not None
        self._clock = clock
        self.session_started_at = clock()
        self._current: _Request | None = None  # streaming now
        self._last: _Request | None = None  # the latest request with a first token
        self._sum_tokens = 0
        self._sum_gen_ms = 0

    def start(self, purpose: str = "turn") -> None:
        """A request is being sent; other purposes than ``turn`` are not measured."""
        self._current = _Request(self._clock()) if purpose == "turn" else None

    def delta(self, text: str) -> None:
        """Output arrived (text, thinking or tool-call arguments)."""
        req = self._current
        if req is None:
            return
        t = self._clock()
        if req.first_token_at is None:
            req.first_token_at = t
            req.last_tick = t
            self._last = req  # a request in progress is ``last`` once it has a first token
        req.chars += len(text)
        req.samples.append((t, req.chars))
        while len(req.samples) > 1 and req.samples[0][0] < t - WINDOW_MS:
            req.samples.popleft()
        if self.ticks and t - req.last_tick >= TICK_MS:
            req.last_tick = t
            assert self._emit is not None
            self._emit({"type": "telemetry_tick"})

    def done(self, output_tokens: int | None) -> None:
        """The request ended (a reply, an error or an abort)."""
        req = self._current
        self._current = None
        if req is None or req.first_token_at is None:
            return
        req.done_at = self._clock()
        req.output_tokens = output_tokens if output_tokens else max(1, req.chars // CHARS_PER_TOKEN)
        if req.tps() is not None:
            self._sum_tokens += req.output_tokens
            self._sum_gen_ms += req.done_at - req.first_token_at

    def _live(self) -> dict[str, Any] | None:
        req = self._current
        if req is None or req.first_token_at is None:
            return None
        t = self._clock()
        out: dict[str, Any] = {
            "outputTokens": req.chars // CHARS_PER_TOKEN,
            "elapsedMs": t - req.first_token_at,
        }
        (t0, c0), (t1, c1) = req.samples[0], req.samples[-1]
        if len(req.samples) > 1 and t1 > t0:
            out["tps"] = round((c1 - c0) / CHARS_PER_TOKEN * 1000 / (t1 - t0), 2)
        return out

    def snapshot(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sessionStartedAt": self.session_started_at}
        if self._last is not None:
            out["last"] = self._last.to_json()
        live = self._live()
        if live is not None:
            out["live"] = live
        if self._sum_gen_ms > 0:
            out["avgTps"] = round(self._sum_tokens * 1000 / self._sum_gen_ms, 2)
        return out


def format_footer(telemetry: dict[str, Any]) -> str:
    """A short footer text for ``SessionStats.telemetry``: the live rate while a reply
    streams, else the last request's TTFT and rate, and the session's average
    (``"TTFT 0.42s · 48 tok/s · avg 51 tok/s"``); empty before the first token."""
    parts: list[str] = []
    live = telemetry.get("live")
    last = telemetry.get("last") or {}
    if isinstance(last.get("ttftMs"), int | float):
        parts.append(f"TTFT {last['ttftMs'] / 1000:.2f}s")
    if live:
        if isinstance(live.get("tps"), int | float):
            parts.append(f"{live['tps']:.0f} tok/s")
        parts.append(f"{live.get('outputTokens', 0)} tok")
    elif isinstance(last.get("tps"), int | float):
        parts.append(f"{last['tps']:.0f} tok/s")
    if isinstance(telemetry.get("avgTps"), int | float):
        parts.append(f"avg {telemetry['avgTps']:.0f} tok/s")
    return " · ".join(parts)


__all__ = ["Telemetry", "format_footer"]
