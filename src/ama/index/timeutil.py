"""Timestamps and local calendar days, fast and the same everywhere in the index.

* :func:`ts_ms` turns an entry's ISO timestamp into epoch milliseconds
  (``datetime.fromisoformat``, in C).
* :class:`Days` maps epoch milliseconds to the **local** date ``YYYY-MM-DD``.  Every time
  zone offset in use is a multiple of 15 minutes, so the date is cached per 15-minute
  block of UTC; the date of a timestamp in ama's form is cached per minute.
  :func:`tz_key` names the local zone: the index throws away its day buckets when it
  changes.
* :func:`parse_day` reads ``--since`` / ``--until`` values: ``today``, ``yesterday``,
  ``Nd`` / ``Nw`` (the first day of the last N days / weeks, today included), or a local
  date ``YYYY-MM-DD``.
"""

from __future__ import annotations

import os
import re
import time
from datetime import UTC, date, datetime, timedelta

from ama.errors import InvalidArguments

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MS = timedelta(milliseconds=1)
_fromiso = datetime.fromisoformat


def ts_ms(ts: object) -> int:
    """Epoch milliseconds of an ISO 8601 timestamp (UTC when it names no zone); 0 when it
    is not one (also for an hour, minute or second out of range)."""
    if not isinstance(ts, str) or not ts:
        return 0
    try:
        dt = _fromiso(ts)  # (C; accepts the "Z" of ama's timestamps since Python 3.11)
    except ValueError:
        return 0
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - EPOCH) // MS


def iso_of_ms(ms: int) -> str:
    """UTC ISO 8601 with milliseconds, the session files' own form."""
    dt = datetime.fromtimestamp(ms // 1000, UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def tz_key() -> str:
    """A name for the local time zone rules (TZ, /etc/localtime, offsets)."""
    try:
        zone = os.path.realpath("/etc/localtime")
    except OSError:
        zone = ""
    return f"{os.environ.get('TZ', '')}|{zone}|{time.timezone}|{time.altzone}|{'/'.join(time.tzname)}"


class Days:
    """Local dates of epoch milliseconds, cached per 15-minute block."""

    def __init__(self) -> None:
        self._cache: dict[int, str] = {}
        self.minutes: dict[str, str] = {}  # "YYYY-MM-DDTHH:MM" (UTC) -> local date

    def of_ts(self, ts: object) -> str:
        """The local date of an ISO timestamp ('' when it is not one).  A timestamp of
        ama's form (24 characters, ``Z``) counts for the date of its minute, whatever its
        seconds say: the date depends on ``ts[:16]`` alone, so caching it per minute cannot
        make it depend on which timestamps came first."""
        if isinstance(ts, str) and len(ts) == 24 and ts[-1] == "Z":
            minute = ts[:16]
            d = self.minutes.get(minute)
            if d is None:
                ms = ts_ms(minute + ":00.000Z")
                d = self.minutes[minute] = self(ms) if ms else ""
            return d
        ms = ts_ms(ts)
        return self(ms) if ms else ""

    def __call__(self, ms: int) -> str:
        block = ms // 900_000
        d = self._cache.get(block)
        if d is None:
            try:
                tm = time.localtime(block * 900)
            except (OverflowError, OSError, ValueError):
                tm = None
            # zero-padded (strftime's %Y is not, below year 1000); '' beyond what a date holds
            ok = tm is not None and 1 <= tm.tm_year <= 9999
            d = f"{tm.tm_year:04d}-{tm.tm_mon:02d}-{tm.tm_mday:02d}" if tm is not None and ok else ""
            self._cache[block] = d
        return d


def today() -> date:
    return datetime.now().date()


_REL = re.compile(r"^(\d+)([dw])$")


def parse_day(text: str, *, option: str, now: date | None = None) -> date:
    """One end of a ``--since`` / ``--until`` range, as a local date."""
    now = now or today()
    t = text.strip().lower()
    if t == "today":
        return now
    if t == "yesterday":
        return now - timedelta(days=1)
    m = _REL.match(t)
    if m:
        n = int(m.group(1)) * (7 if m.group(2) == "w" else 1)
        if n < 1:
            raise InvalidArguments(f"{option}: {text!r} must count at least one day")
        return now - timedelta(days=n - 1)
    try:
        return date.fromisoformat(t)
    except ValueError:
        raise InvalidArguments(
            f"{option}: invalid value {text!r} (use today, yesterday, 7d, 4w or a date like 2026-11-30)"
        ) from None


def week_of(day: str) -> str:
    """ISO week of a ``YYYY-MM-DD`` date: ``2026-W48``."""
    y, w, _ = date.fromisoformat(day).isocalendar()
    return f"{y}-W{w:02d}"


def month_of(day: str) -> str:
    return day[:7]
