"""``ama stats``: gather per-file facts (from the index or by scanning) and aggregate them.

Both paths produce the same :class:`FileFacts` rows (the index stores exactly what the
scan computes, per file and local day) and :func:`aggregate` turns them into the report;
only the ``files`` counts (read / answered from the index / invalid) differ between them.
Definitions are in docs/stats.md.
"""

from __future__ import annotations

import os
from collections import Counter

from ama.index.rows import (
    COST_SCALE,
    R_CACHE_READ,
    R_CACHE_WRITE,
    R_COST,
    R_ERRORS,
    R_INPUT,
    R_OUTPUT,
    R_PRICED,
    R_REQUESTS,
    R_RETRIES,
)
from ama.index.timeutil import month_of, week_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:  # (a cold scan does not load sqlite3)
    import sqlite3
    from typing import Any

GROUPS = ("day", "week", "month", "provider", "channel", "model", "project", "agent")
_TIME_GROUPS = ("day", "week", "month")


class StatsQuery:
    def __init__(
        self,
        since: str | None = None,
        until: str | None = None,
        by: str | None = None,
        project: str | None = None,
        top: int = 5,
    ) -> None:
        self.since = since  # local day YYYY-MM-DD, inclusive
        self.until = until
        self.by = by
        self.project = project  # a cwd; None = every project
        self.top = top


class Gathered:
    """Flat fact rows of the files in scope, each led by a file key (its path in a scan,
    its row id in the index: only distinctness matters) and the file's workspace:

    * ``req``: ``(file, cwd, day, kind, provider, model, channel, 9 sums)``
    * ``turns``: ``(file, cwd, day, provider, model, channel, turns, duration_ms)``
    * ``latency``: ``(file, cwd, day, provider, model, channel, purpose, ttfb, duration,
      status, attempt)``
    * ``tools``: calls per tool name within the range, summed over the files (every tool
      call sits in a request of the same file and day, so it adds nothing per file)
    * ``external``: ``(file, cwd, day, agent, session id, 7 sums)`` of ``ama.agent-usage``
      records (``session.external_usage.COLUMNS``)."""

    def __init__(self) -> None:
        self.req: list[tuple] = []
        self.turns: list[tuple] = []
        self.latency: list[tuple] = []
        self.external: list[tuple] = []
        self.tools: Counter[str] = Counter()
        self.counts = FileCounts()
        #: file key -> "task:<agent>" for task sub-agent sessions (``--by agent``; others "main")
        self.agents: dict[Any, str] = {}
        #: the number of sessions with requests or turns in range, when ``req`` and
        #: ``turns`` were summed over the files already (their file key is then None)
        self.sessions: int | None = None


def agent_label(head: bytes) -> str:
    """``task:<agent>`` when a session's first entry is a sub-agent's ``ama.task`` header
    entry (no ``status``; docs/agents.md), else ``main``."""
    import json

    lines = head.split(b"\n", 2)
    if len(lines) < 2 or b'"ama.task"' not in lines[1]:
        return "main"
    try:
        entry = json.loads(lines[1])
    except ValueError:
        return "main"
    data = entry.get("data") if isinstance(entry, dict) and entry.get("customType") == "ama.task" else None
    if not isinstance(data, dict) or "status" in data:
        return "main"
    return f"task:{data.get('agent') or '?'}"


def _head(path: str, limit: int = 64 * 1024) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except OSError:
        return b""


class FileCounts:
    def __init__(self, scanned: int = 0, cached: int = 0, invalid: int = 0) -> None:
        self.scanned = scanned
        self.cached = cached
        self.invalid = invalid

    def to_json(self) -> dict:
        return {"scanned": self.scanned, "cached": self.cached, "invalid": self.invalid}


# --- gathering --------------------------------------------------------------------------


def _in_range(q: StatsQuery, day: str) -> bool:
    return (q.since is None or day >= q.since) and (q.until is None or day <= q.until)


def scan(root: str, q: StatsQuery) -> Gathered:
    """Facts by reading every session file (``--no-cache`` or no usable index), on as many
    cores as the amount of data makes worth it (``index/stats_scan.py``)."""
    from ama.index import fanout
    from ama.session.layout import iter_session_files

    paths = list(iter_session_files(os.path.abspath(root)))
    sizes = fanout.file_sizes(paths)
    g = Gathered()
    if not paths:
        return g
    from ama.index import msgspec_light  # noqa: F401  (first: see its docstring)
    from ama.index.stats_scan import scan_files  # (before the fork: the children inherit it)

    workers = fanout.workers_for(sum(sizes))
    groups = fanout.split(paths, sizes, workers * fanout.GROUPS_PER_WORKER if workers > 1 else 1)
    for req, turns, latency, tools, scanned, invalid, external, agents in fanout.run_shared(
        lambda idx: scan_files([paths[i] for i in idx], [sizes[i] for i in idx], q), groups, workers
    ):
        g.req += req
        g.turns += turns
        g.latency += latency
        g.external += external
        for name, calls in tools.items():
            g.tools[name] += calls
        g.counts.scanned += scanned
        g.counts.invalid += invalid
        g.agents.update(agents)
    return g


_REQ_COLS = (
    "s.day, s.kind, s.provider, s.model, s.channel, s.requests, s.input, s.output, s.cache_read,"
    " s.cache_write, s.cost_units, s.priced, s.errors, s.retries"
)
_TURN_COLS = "s.day, s.provider, s.model, s.channel, s.turns, s.duration_ms"
_EXT_COLS = (
    "s.day, s.agent, s.session_id, s.turns, s.cost_units, s.input, s.output, s.cache_read, s.cache_write,"
    " s.requests"
)
_LAT_COLS = (
    "s.day, s.provider, s.model, s.channel, s.purpose, s.ttfb_ms, s.duration_ms, s.http_status, s.attempt"
)


#: the request and turn columns summed over the files (a report without ``--by``)
_REQ_SUMS = (
    "NULL, NULL, s.day, s.kind, s.provider, s.model, s.channel, sum(s.requests), sum(s.input), sum(s.output),"
    " sum(s.cache_read), sum(s.cache_write), sum(s.cost_units), sum(s.priced), sum(s.errors), sum(s.retries)"
)
_REQ_KEY = "s.day, s.kind, s.provider, s.model, s.channel"
_TURN_SUMS = "NULL, NULL, s.day, s.provider, s.model, s.channel, sum(s.turns), sum(s.duration_ms)"
_TURN_KEY = "s.day, s.provider, s.model, s.channel"


def _days(q: StatsQuery, column: str) -> tuple[str, list[str]]:
    """The SQL condition (`` AND ...``) and its arguments that keep ``column`` in range."""
    where, args = "", []
    for op, v in ((">=", q.since), ("<=", q.until)):
        if v:
            where += f" AND {column} {op} ?"
            args.append(v)
    return where, args


def from_index(db: sqlite3.Connection, root_id: int, q: StatsQuery, *, summed: bool | None = None) -> Gathered:
    """Facts from the index rows of one root (already refreshed).  ``summed`` (default:
    without ``--by``): the request and turn rows summed over the files by SQLite, with the
    number of sessions counted there -- the same report from a few hundred rows instead of
    one per file and key (integer sums; :func:`aggregate` adds them the same way)."""
    if summed is None:
        summed = q.by is None
    where = "f.root_id = ? AND f.valid = 1"
    args: list[Any] = [root_id]
    if q.project is not None:
        where += " AND f.cwd = ?"
        args.append(q.project)
    day_where, day_args = _days(q, "s.day")
    a = args + day_args
    g = Gathered()
    join = f"JOIN files f ON f.id = s.file_id WHERE {where}{day_where}"
    ot_where = f"{where} AND f.ot_day IS NOT NULL"
    if summed:
        ot_day_where, _ = _days(q, "f.ot_day")
        g.req = db.execute(f"SELECT {_REQ_SUMS} FROM stat_requests s {join} GROUP BY {_REQ_KEY}", a).fetchall()
        g.turns = db.execute(f"SELECT {_TURN_SUMS} FROM stat_turns s {join} GROUP BY {_TURN_KEY}", a).fetchall()
        g.turns += db.execute(
            "SELECT NULL, NULL, f.ot_day, f.ot_provider, f.ot_model, f.ot_channel, count(*), sum(f.ot_ms)"
            f" FROM files f WHERE {ot_where}{ot_day_where}"
            " GROUP BY f.ot_day, f.ot_provider, f.ot_model, f.ot_channel",
            args + day_args,
        ).fetchall()
        (g.sessions,) = db.execute(
            f"SELECT count(*) FROM (SELECT s.file_id FROM stat_requests s {join}"
            f" UNION SELECT s.file_id FROM stat_turns s {join}"
            f" UNION SELECT f.id FROM files f WHERE {ot_where}{ot_day_where})",
            a + a + args + day_args,
        ).fetchone()
    else:
        g.req = db.execute(f"SELECT s.file_id, f.cwd, {_REQ_COLS} FROM stat_requests s {join}", a).fetchall()
        g.turns = db.execute(f"SELECT s.file_id, f.cwd, {_TURN_COLS} FROM stat_turns s {join}", a).fetchall()
        g.turns += db.execute(
            "SELECT f.id, f.cwd, f.ot_day, f.ot_provider, f.ot_model, f.ot_channel, 1, f.ot_ms FROM files f"
            f" WHERE {ot_where}",
            args,
        ).fetchall()
    g.latency = db.execute(f"SELECT s.file_id, f.cwd, {_LAT_COLS} FROM stat_latency s {join}", a).fetchall()
    g.external = db.execute(f"SELECT s.file_id, f.cwd, {_EXT_COLS} FROM stat_external s {join}", a).fetchall()
    for name, calls in db.execute(f"SELECT s.name, sum(s.calls) FROM stat_tools s {join} GROUP BY s.name", a):
        g.tools[name] = calls
    (g.counts.invalid,) = db.execute(
        "SELECT count(*) FROM files WHERE root_id = ? AND valid = 0", (root_id,)
    ).fetchone()
    if q.by == "agent":  # the first entry says it; the index does not keep it
        for fid, fpath in db.execute(f"SELECT f.id, f.path FROM files f WHERE {where}", args):
            g.agents[fid] = agent_label(_head(fpath))
    return g


# --- aggregating --------------------------------------------------------------------------


class _Acc:
    __slots__ = ("req", "kinds", "turns", "turn_ms", "files", "ep_rows")

    def __init__(self) -> None:
        self.req = [0] * 9
        self.kinds: Counter[str] = Counter()
        self.turns = 0
        self.turn_ms = 0
        self.files: set[str] = set()
        self.ep_rows: dict[tuple, list[int]] = {}  # endpoint -> [input, cache_read, cache_write]


def _endpoint(p: str, m: str, c: str) -> str:
    base = f"{p}/{m}" if p or m else "(unknown)"
    return f"{base}@{c}" if c else base


def _group_key(by: str, day: str, p: str, m: str, c: str, cwd: str, agent: str = "main") -> str:
    if by == "agent":
        return agent
    if by == "day":
        return day or "(no date)"
    if by == "week":
        return week_of(day) if day else "(no date)"
    if by == "month":
        return month_of(day) if day else "(no date)"
    if by == "provider":
        return p or "(unknown)"
    if by == "channel":
        return f"{p or '(unknown)'}@{c}" if c else (p or "(unknown)")
    if by == "model":
        return _endpoint(p, m, c)
    return cwd


def percentiles(values: list[float]) -> dict | None:
    """Nearest-rank p50 / p90 / p99 (and count, min, max) of some milliseconds."""
    if not values:
        return None
    v = sorted(values)
    n = len(v)

    def rank(p: int) -> float:
        return round(v[max(0, -(-p * n // 100) - 1)], 1)

    return {"count": n, "p50": rank(50), "p90": rank(90), "p99": rank(99), "max": round(v[-1], 1)}


def _hit_rate(ep_rows: dict[tuple, list[int]], reporting: set[tuple]) -> float | None:
    num = den = 0
    for ep, (inp, cr, cw) in ep_rows.items():
        if ep in reporting:
            num += cr
            den += inp + cr + cw
    return None if den == 0 else num / den


def _acc_json(a: _Acc, reporting: set[tuple]) -> dict:
    r = a.req
    return {
        "sessions": len(a.files),
        "requests": r[R_REQUESTS],
        "requestsByKind": dict(sorted(a.kinds.items(), key=lambda kv: (-kv[1], kv[0]))),
        "turns": a.turns,
        "turnDurationMs": a.turn_ms,
        "averageTurnMs": None if not a.turns else round(a.turn_ms / a.turns, 1),
        "tokens": {
            "input": r[R_INPUT],
            "output": r[R_OUTPUT],
            "cacheRead": r[R_CACHE_READ],
            "cacheWrite": r[R_CACHE_WRITE],
        },
        "cacheHitRate": _hit_rate(a.ep_rows, reporting),
        "cost": None if not r[R_PRICED] else r[R_COST] / COST_SCALE,
        "pricedRequests": r[R_PRICED],
        "unpricedRequests": r[R_REQUESTS] - r[R_PRICED],
        "errors": r[R_ERRORS],
        "retries": r[R_RETRIES],
    }


def aggregate(g: Gathered, q: StatsQuery) -> dict:
    """The report (the ``--json`` object without ``files``/``scope``/``range``)."""
    lo, hi = q.since, q.until
    by = q.by
    total = _Acc()
    groups: dict[str, _Acc] = {}
    endpoints: dict[tuple, dict] = {}

    def ep_entry(ep: tuple) -> dict:
        e = endpoints.get(ep)
        if e is None:
            e = endpoints[ep] = {
                "requests": 0,
                "cache": [0, 0, 0],
                "ttfb": [],
                "dur": [],
                "status": Counter(),
            }
        return e

    def add_req(a: _Acc, fk: Any, kind: str, ep: tuple, vals: tuple) -> None:
        r = a.req
        for i in range(9):
            r[i] += vals[i]
        if vals[R_REQUESTS]:
            a.kinds[kind] += vals[R_REQUESTS]
        a.files.add(fk)
        er = a.ep_rows.get(ep)
        if er is None:
            er = a.ep_rows[ep] = [0, 0, 0]
        er[0] += vals[R_INPUT]
        er[1] += vals[R_CACHE_READ]
        er[2] += vals[R_CACHE_WRITE]

    for row in g.req:
        fk, cwd, day, kind, p, m, c = row[:7]
        if (lo is not None and day < lo) or (hi is not None and day > hi):
            continue
        vals = row[7:]
        ep = (p, m, c)
        add_req(total, fk, kind, ep, vals)
        if by is not None:
            key = _group_key(by, day, p, m, c, cwd, g.agents.get(fk, "main"))
            acc = groups.get(key)
            if acc is None:
                acc = groups[key] = _Acc()
            add_req(acc, fk, kind, ep, vals)
        e = ep_entry(ep)
        e["requests"] += vals[R_REQUESTS]
        cache = e["cache"]
        cache[0] += vals[R_INPUT]
        cache[1] += vals[R_CACHE_READ]
        cache[2] += vals[R_CACHE_WRITE]
    for fk, cwd, day, p, m, c, n, ms in g.turns:
        if (lo is not None and day < lo) or (hi is not None and day > hi):
            continue
        total.turns += n
        total.turn_ms += ms
        total.files.add(fk)
        if by is not None:
            key = _group_key(by, day, p, m, c, cwd, g.agents.get(fk, "main"))
            acc = groups.get(key)
            if acc is None:
                acc = groups[key] = _Acc()
            acc.turns += n
            acc.turn_ms += ms
            acc.files.add(fk)
    for _fk, _cwd, day, p, m, c, _purpose, ttfb, dur, status, _attempt in g.latency:
        if (lo is not None and day < lo) or (hi is not None and day > hi):
            continue
        e = ep_entry((p, m, c))
        if ttfb is not None:
            e["ttfb"].append(ttfb)
        if dur is not None:
            e["dur"].append(dur)
        if status is not None:
            e["status"][str(status)] += 1
    tools = g.tools

    reporting = {ep for ep, e in endpoints.items() if e["cache"][1] + e["cache"][2] > 0}
    with_requests = [ep for ep, e in endpoints.items() if e["requests"]]
    report = _acc_json(total, reporting)
    if g.sessions is not None:  # the rows were summed over the files (from_index)
        report["sessions"] = g.sessions
    report["cacheEndpoints"] = {
        "reporting": len([ep for ep in with_requests if ep in reporting]),
        "total": len(with_requests),
    }
    if q.by is not None:
        if q.by in _TIME_GROUPS:
            order = sorted(groups)
        else:
            order = sorted(groups, key=lambda k: (-groups[k].req[R_REQUESTS], -groups[k].turns, k))
        report["by"] = q.by
        report["groups"] = [{"key": k, **_acc_json(groups[k], reporting)} for k in order]
    report["tools"] = [
        {"name": n, "calls": c}
        for n, c in sorted(tools.items(), key=lambda kv: (-kv[1], kv[0]))[: max(0, q.top)]
        if c
    ]
    report["toolsTotal"] = {"names": len(tools), "calls": sum(tools.values())}
    eps = []
    for ep in sorted(endpoints, key=lambda ep: (-endpoints[ep]["requests"], _endpoint(*ep))):
        e = endpoints[ep]
        inp, cr, cw = e["cache"]
        eps.append(
            {
                "endpoint": _endpoint(*ep),
                "provider": ep[0],
                "model": ep[1],
                "channel": ep[2] or None,
                "requests": e["requests"],
                "reportsCache": ep in reporting,
                "cacheHitRate": (cr / (inp + cr + cw)) if ep in reporting and inp + cr + cw else None,
                "ttfbMs": percentiles(e["ttfb"]),
                "durationMs": percentiles(e["dur"]),
                "httpStatus": dict(sorted(e["status"].items())),
            }
        )
    report["endpoints"] = eps
    report["external"] = _external(g, q)
    return report


def _external(g: Gathered, q: StatsQuery) -> dict:
    """External agents' usage in range: ``session.external_usage.summarize`` over the rows,
    ``sessions`` counting distinct external sessions per agent."""
    from ama.session.external_usage import summarize

    rows = []
    sessions: dict[str, set[str]] = {}
    for _fk, _cwd, day, agent, sid, *vals in g.external:
        if _in_range(q, day):
            rows.append((agent, list(vals)))
            sessions.setdefault(agent, set()).add(sid)
    return summarize(rows, sessions)


def cached_report(db: sqlite3.Connection, root_id: int, q: StatsQuery) -> tuple[dict, int]:
    """The report and the number of invalid files, from the index, through the query cache
    (``qcache``): a report is reused while the index has not changed."""
    import json

    from ama.index import qcache

    key = json.dumps([root_id, q.since, q.until, q.by, q.project, q.top])
    gen, hit = qcache.get(db, key)
    if hit is not None:
        value = json.loads(hit)
        return value["report"], value["invalid"]
    g = from_index(db, root_id, q)
    report = aggregate(g, q)
    qcache.put(db, key, gen, json.dumps({"report": report, "invalid": g.counts.invalid}))
    return report, g.counts.invalid
