"""``ama stats``: requests, turns, tokens, cache hit rate, cost, errors and tools.

Imports stay light: the standard library, ``ama.index`` and ``ama.errors`` (no HTTP
client, no terminal toolkit).
"""

from __future__ import annotations

import os
import sys
from datetime import date

from ama.cli.util import add_session_dir, print_json, sessions_dir
from ama.errors import InvalidArguments

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:
    import argparse

DESCRIPTION = """\
Count what the sessions of this project (or --all) did: model requests by kind, turns and
their average duration, tokens, cache hit rate (only over endpoints that report caching),
cost (only of priced requests; the others are counted apart), errors and retries, and the
most used tools.  --by splits the numbers into a table; --by model adds time-to-first-byte
and duration percentiles and HTTP statuses per endpoint.

Uses the session index (<data dir>/index.db), refreshing it first; --no-cache reads the
session files instead and neither reads nor writes the index.  See docs/stats.md."""


def build_parser(prog: str) -> argparse.ArgumentParser:
    import argparse

    from ama.index.helpfmt import Formatter

    p = argparse.ArgumentParser(prog=prog, description=DESCRIPTION, formatter_class=Formatter)
    p.add_argument(
        "--since", metavar="WHEN", help="first day: today, yesterday, 7d, 4w or YYYY-MM-DD (local, inclusive)"
    )
    p.add_argument("--until", metavar="WHEN", help="last day, same forms (inclusive)")
    p.add_argument(
        "--by",
        choices=["day", "week", "month", "provider", "channel", "model", "project", "agent"],
        help="split into a table",
    )
    scope = p.add_mutually_exclusive_group()
    scope.add_argument(
        "--project", metavar="DIR", help="sessions of this workspace (default: the current directory)"
    )
    scope.add_argument("--all", action="store_true", help="sessions of every workspace")
    p.add_argument("--top", type=int, default=5, metavar="N", help="how many tools to list (default 5)")
    p.add_argument(
        "--json", action="store_true", help="print one JSON object (with `files`: scanned/cached/invalid)"
    )
    p.add_argument(
        "--no-cache", action="store_true", help="scan the session files; do not read or write the index"
    )
    add_session_dir(p)
    p.set_defaults(func=stats)
    return p


def _range(args: argparse.Namespace) -> tuple[date | None, date | None]:
    from ama.index.timeutil import parse_day

    since = parse_day(args.since, option="--since") if args.since else None
    until = parse_day(args.until, option="--until") if args.until else None
    if since and until and since > until:
        raise InvalidArguments(f"--since {args.since} ({since}) is after --until {args.until} ({until})")
    return since, until


def stats(args: argparse.Namespace) -> int:
    from ama.index import stats as S

    if args.top < 0:
        raise InvalidArguments(f"--top must be 0 or more, got {args.top}")
    since, until = _range(args)
    if args.project:
        project: str | None = os.path.abspath(os.path.expanduser(args.project))
    elif args.all or args.by == "project":
        project = None
    else:
        project = os.getcwd()
    q = S.StatsQuery(
        since=since.isoformat() if since else None,
        until=until.isoformat() if until else None,
        by=args.by,
        project=project,
        top=args.top,
    )
    root = sessions_dir(args)
    report, counts = _report(root, q, no_cache=args.no_cache)
    if args.json:
        print_json(
            {
                "range": {"since": q.since, "until": q.until},
                "scope": {"project": project},
                **report,
                "files": counts,
            }
        )
        return 0
    _render(report, q, args, since, until)
    return 0


def _report(root: str, q, *, no_cache: bool) -> tuple[dict, dict]:
    """The report and the file counts, from the index (refreshed) or by scanning."""
    from ama.index import stats as S

    if not no_cache:
        from ama.index.access import with_index

        def query(db, info):
            report, invalid = S.cached_report(db, info.root_id, q)
            return report, {"scanned": info.scanned, "cached": info.cached, "invalid": invalid}

        res = with_index(root, query)
        if res is not None:
            return res[0]
    g = S.scan(root, q)
    return S.aggregate(g, q), g.counts.to_json()


# --- rendering ----------------------------------------------------------------------------


def human_count(n: int) -> str:
    if n < 1000:
        return str(n)
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            s = f"{n / div:.1f}"
            return (s[:-2] if s.endswith(".0") else s) + unit
    return str(n)


def human_ms(ms: float | None) -> str:
    if ms is None:
        return "—"
    s = ms / 1000
    if s < 60:
        return f"{s:.1f}s"
    if s < 3600:
        return f"{int(s // 60)}m{int(s % 60):02d}s"
    return f"{int(s // 3600)}h{int(s % 3600 // 60):02d}m"


def human_cost(c: float | None) -> str:
    if c is None:
        return "—"
    return f"${c:.4f}" if c < 1 else f"${c:,.2f}"


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x * 100:.1f}%"


def _range_label(args: argparse.Namespace, since: date | None, until: date | None) -> str:
    if since is None and until is None:
        return "All time"
    s = (args.since or "").strip().lower()
    if until is None and s == "today":
        return f"Today ({since})"
    if until is None and s[:-1].isdigit() and s[-1:] in ("d", "w"):
        n = int(s[:-1]) * (7 if s[-1] == "w" else 1)
        return f"Last {n} day{'s' if n != 1 else ''} ({since} – today)"
    if since and until:
        return f"{since} – {until}"
    return f"Since {since}" if since else f"Until {until}"


def _render(r: dict, q, args: argparse.Namespace, since: date | None, until: date | None) -> None:
    out = sys.stdout.write
    scope = f"project {q.project}" if q.project else "all projects"
    n = r["sessions"]
    out(f"{_range_label(args, since, until)} · {scope} · {n} session{'s' if n != 1 else ''}\n")
    if not r["requests"] and not r["turns"]:
        out("No model requests in this range.\n")
        return
    kinds = " · ".join(f"{k} {v}" for k, v in r["requestsByKind"].items())
    rows = [("Requests", f"{r['requests']}" + (f" ({kinds})" if kinds else ""))]
    rows.append(
        ("Turns", f"{r['turns']}" + (f" · average {human_ms(r['averageTurnMs'])}" if r["turns"] else ""))
    )
    t = r["tokens"]
    rows.append(
        (
            "Tokens",
            f"input {human_count(t['input'])} · output {human_count(t['output'])} · "
            f"cache read {human_count(t['cacheRead'])} · cache write {human_count(t['cacheWrite'])}",
        )
    )
    ce = r["cacheEndpoints"]
    if ce["reporting"]:
        rows.append(
            (
                "Cache hit rate",
                f"{_pct(r['cacheHitRate'])} (endpoints reporting cache {ce['reporting']}/{ce['total']}; "
                "the others are not in the denominator)",
            )
        )
    else:
        rows.append(("Cache hit rate", f"— (none of the {ce['total']} endpoints reports caching)"))
    if r["cost"] is None:
        rows.append(("Cost", f"— (none of the {r['requests']} requests has a price; tokens only)"))
    else:
        extra = r["unpricedRequests"]
        note = (
            f" ({extra} more request{'s' if extra != 1 else ''} without a price, not counted)"
            if extra
            else ""
        )
        rows.append(("Cost", human_cost(r["cost"]) + note))
    rows.append(("Errors / retries", f"{r['errors']} / {r['retries']}"))
    ext = r.get("external") or {}
    if ext.get("agents"):
        rows.append(("External agents", " · ".join(_external_agent(a) for a in ext["agents"])))
    for label, value in rows:
        out(f"{label:<18}{value}\n")
    if q.by is not None and r.get("groups"):
        out("\n")
        _table(r["groups"])
        if q.by == "model":
            _latency(r["endpoints"])
    if r["tools"]:
        out(
            f"\nTop {len(r['tools'])} tools"
            + (f" of {r['toolsTotal']['names']}" if r["toolsTotal"]["names"] > len(r["tools"]) else "")
            + "\n"
        )
        width = max(len(x["name"]) for x in r["tools"])
        for x in r["tools"]:
            out(f"  {x['name']:<{width}}  {x['calls']}\n")


def _external_agent(a: dict) -> str:
    """``claude 2 turns, $0.0197, 39.8k tokens``: one external agent's usage (docs/external-agents.md)."""
    parts = [f"{a['agent']} {a['turns']} turn{'s' if a['turns'] != 1 else ''}"]
    if a["cost"]:
        parts.append(human_cost(a["cost"]))
    tokens = sum(a["tokens"].values())
    if tokens:
        parts.append(f"{human_count(tokens)} tokens")
    return ", ".join(parts)


def _table(groups: list[dict]) -> None:
    head = [
        "",
        "sessions",
        "requests",
        "turns",
        "input",
        "output",
        "cache read",
        "cache write",
        "hit rate",
        "cost",
    ]
    body = []
    for g in groups:
        t = g["tokens"]
        body.append(
            [
                g["key"],
                str(g["sessions"]),
                str(g["requests"]),
                str(g["turns"]),
                human_count(t["input"]),
                human_count(t["output"]),
                human_count(t["cacheRead"]),
                human_count(t["cacheWrite"]),
                _pct(g["cacheHitRate"]),
                human_cost(g["cost"]),
            ]
        )
    _print_table(head, body)


def _latency(endpoints: list[dict]) -> None:
    timed = [e for e in endpoints if e["ttfbMs"] or e["durationMs"] or e["httpStatus"]]
    if not timed:
        return
    sys.stdout.write("\nLatency per endpoint (ama.request records)\n")
    head = ["", "timed", "ttfb p50", "p90", "p99", "duration p50", "p90", "p99", "http status"]
    body = []
    for e in timed:
        tt, du = e["ttfbMs"] or {}, e["durationMs"] or {}
        body.append(
            [
                e["endpoint"],
                str(max(tt.get("count", 0), du.get("count", 0))),
                *(human_ms(tt.get(k)) for k in ("p50", "p90", "p99")),
                *(human_ms(du.get(k)) for k in ("p50", "p90", "p99")),
                " ".join(f"{s}×{c}" for s, c in e["httpStatus"].items()) or "—",
            ]
        )
    _print_table(head, body)


def _print_table(head: list[str], body: list[list[str]]) -> None:
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    for row in [head, *body]:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        sys.stdout.write("  ".join(cells).rstrip() + "\n")
