"""``ama stats --no-cache``: the stats facts of session files, read from the files.

:func:`scan_files` reads whole files (one ``read`` of the size the caller saw, more only if
the file grew) and walks their lines with :func:`ama.index.facts.scan_facts`, which gives
exactly what the index stores for the same bytes.  It returns plain data so that it can run
in a forked child (:mod:`ama.index.fanout`).

The module is what a cold ``ama stats`` imports to scan, so it stays light: msgspec, the
facts, the session header's shape; not the index's extraction (``extract`` and its
``dataclasses``, the session reader).  Both read the header with
:func:`ama.index.header.first_header` (tests/index/test_stats_scan.py checks that
:func:`header` and :func:`ama.index.extract.start` agree).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ama.index.facts import Facts, StatsState, open_turn, scan_facts
from ama.index.fanout import read_whole
from ama.index.header import first_header
from ama.index.stats import _in_range, agent_label
from ama.index.timeutil import Days
from ama.session.entries import SessionHeader

if TYPE_CHECKING:
    from ama.index.stats import StatsQuery


def header(data: bytes) -> tuple[str | bool | None, int]:
    """``(cwd, pos after the header)``; ``(None, len)`` when the header is damaged (the file
    counts as invalid), ``(False, 0)`` when it is still being written (or the file is
    empty): as :func:`ama.index.extract.start` (both read it with ``header.first_header``)."""
    h, pos = first_header(data)
    return (h.cwd if isinstance(h, SessionHeader) else h), pos


def read_file(path: str, size: int) -> bytes:
    """The whole file: one read of ``size + 1`` bytes, more while it keeps coming (a file
    that grew since its size was taken).  Raises OSError."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        return read_whole(fd, size)
    finally:
        os.close(fd)


def scan_files(paths: list[str], sizes: list[int], q: StatsQuery) -> tuple:
    """The facts of some files as plain rows (it may come back from a forked child), each led
    by the file's path and workspace: ``(req, turns, latency, tools, scanned, invalid,
    external, agents)`` as :class:`ama.index.stats.Gathered` holds them (``tools``: calls
    per name within the query's days)."""
    days = Days()
    req: list[tuple] = []
    turns: list[tuple] = []
    latency: list[tuple] = []
    external: list[tuple] = []
    tools: dict[str, int] = {}
    agents: dict[str, str] = {}
    scanned = invalid = 0
    for path, size in zip(paths, sizes):
        try:
            data = read_file(path, size)
        except OSError:
            continue
        scanned += 1
        cwd, pos = header(data)
        if cwd is None:
            invalid += 1
            continue
        if not isinstance(cwd, str) or (q.project is not None and cwd != q.project):
            continue
        if q.by == "agent":
            agents[path] = agent_label(data[:65536])
        fx = Facts()
        st = StatsState()
        scan_facts(data, pos, len(data), st, fx, days)
        for k, v in fx.req.items():
            req.append((path, cwd, *k, *v))
        for k, v in fx.turns.items():
            turns.append((path, cwd, *k, *v))
        turn = open_turn(st)
        if turn is not None:
            turns.append((path, cwd, *turn[:4], 1, turn[4]))
        for r in fx.latency:
            latency.append((path, cwd, *r))
        for k, v in fx.external.items():
            external.append((path, cwd, *k, *v))
        for (day, name), calls in fx.tools.items():
            if _in_range(q, day):
                tools[name] = tools.get(name, 0) + calls
    return req, turns, latency, tools, scanned, invalid, external, agents
