"""``ama runs``: the run ledger (one run = one prompt to the agent settling).

Exit codes (seeds/003 §6): 0 when the query succeeded (also for an empty list), 2 for bad
arguments or an unknown execution id.  Imports stay light: the standard library,
``ama.index``, ``ama.session`` and ``ama.errors``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from ama.cli.util import add_session_dir, local_time, one_line, print_json, sessions_dir
from ama.errors import InvalidArguments
from ama.index.helpfmt import Formatter

STATUSES = ("CREATED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED")


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="The run ledger: every prompt the agent ran, with its status, terminal reason and steps. "
        "Runs are recorded in the session files (ama.run entries) and read through the session index.",
        epilog="Exit codes: 0 found (also an empty list), 2 bad arguments or unknown execution. See docs/runs.md.",
        formatter_class=Formatter,
    )
    sub = parser.add_subparsers(metavar="COMMAND")

    p = sub.add_parser(
        "list",
        help="list runs, most recently updated first",
        formatter_class=Formatter,
        description="List the runs of this project (or --all, or one --session), most recently updated first, "
        "a page at a time.",
    )
    p.add_argument(
        "--session", metavar="ID", help="only the runs of this session (id, unique prefix or path)"
    )
    p.add_argument("--all", action="store_true", help="runs of every workspace")
    p.add_argument("--status", metavar="S[,S]", help=f"only these statuses ({', '.join(STATUSES)})")
    p.add_argument("--limit", type=int, default=20, metavar="N", help="page size (default 20)")
    p.add_argument("--cursor", metavar="C", help="continue from the cursor a previous page printed")
    p.add_argument("--json", action="store_true", help="print {runs, nextCursor}")
    p.add_argument("--no-cache", action="store_true", help="scan the session files instead of the index")
    add_session_dir(p)
    p.set_defaults(func=runs_list)

    p = sub.add_parser(
        "status",
        help="show one run",
        formatter_class=Formatter,
        description="Show a run's status, terminal reason, step index and times; --verbose adds its recent steps "
        "and last entries; --watch refreshes until the run ends.",
    )
    p.add_argument(
        "execution_id",
        metavar="EXECUTION_ID",
        help="the run's executionId (or a unique prefix of 4+ characters)",
    )
    p.add_argument("--verbose", action="store_true", help="also the recent steps and the run's last entries")
    p.add_argument("--watch", action="store_true", help="refresh until the run is in a terminal state")
    p.add_argument(
        "--interval", type=float, default=1.0, metavar="SECONDS", help="--watch refresh interval (default 1)"
    )
    p.add_argument("--json", action="store_true", help="print a JSON object (with --watch: one per change)")
    p.add_argument("--no-cache", action="store_true", help="scan the session files instead of the index")
    add_session_dir(p)
    p.set_defaults(func=runs_status)

    from ama.cli.runs_watch import add_parser as add_watch

    add_watch(sub, Formatter)
    return parser


def _fail(args: argparse.Namespace, code: str, message: str) -> int:
    if getattr(args, "json", False):
        import json

        print(json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False), file=sys.stderr)
    else:
        print(f"ama: error: {message}", file=sys.stderr)
    return 2


def _query(root: str, *, no_cache: bool, steps: int = 0, **kw):
    """Runs from the index (refreshed) or, when it cannot be used, by scanning."""
    from ama.index import runs as R

    if not no_cache:
        from ama.index.access import with_index

        def query(db, info):
            found = R.from_index(db, info.root_id, steps=steps, **kw)
            offsets = {r.path: R.offsets_from_index(db, info.root_id, r.path) for r in found} if steps else {}
            return found, offsets

        res = with_index(root, query)
        if res is not None:
            return res[0]
    found = R.scan(root, steps=steps, **kw)
    offsets = {r.path: R.offsets_by_scan(r.path) for r in found} if steps else {}
    return found, offsets


# --- list ---------------------------------------------------------------------------------


def runs_list(args: argparse.Namespace) -> int:
    from ama.errors import AmaError, NotFound
    from ama.session.cursor import decode_cursor, encode_cursor, sort_key

    if args.limit < 1:
        return _fail(args, "invalid_arguments", f"--limit must be at least 1, got {args.limit}")
    statuses = None
    if args.status:
        statuses = sorted({s.strip().upper() for s in args.status.split(",") if s.strip()})
        bad = [s for s in statuses if s not in STATUSES]
        if bad or not statuses:
            return _fail(
                args,
                "invalid_arguments",
                f"--status: unknown status {args.status!r} (use {', '.join(STATUSES)})",
            )
    root = os.path.abspath(sessions_dir(args))
    session_path = None
    session_id = None
    if args.session:
        from ama.session.catalog import resolve

        try:
            r = resolve(root, args.session)
        except NotFound as e:
            return _fail(args, "not_found", e.message)
        except AmaError as e:
            return _fail(args, e.code, e.message)
        session_path, session_id = os.path.abspath(r.path), r.id
    project = None if (args.all or args.session) else os.getcwd()
    scope = {"cwd": project, "session": session_id, "status": statuses}
    try:
        after = decode_cursor(args.cursor, scope) if args.cursor else None
    except InvalidArguments as e:
        return _fail(args, e.code, e.message)
    found, _ = _query(root, no_cache=args.no_cache, project=project, session_path=session_path)
    for r in found:
        r.settle()
    rows = [r for r in found if statuses is None or r.status in statuses]
    rows.sort(key=lambda r: sort_key(r.updated_ms, r.session_id, r.execution_id))
    if after is not None:
        ak = sort_key(*after)
        rows = [r for r in rows if sort_key(r.updated_ms, r.session_id, r.execution_id) > ak]
    page = rows[: args.limit]
    nxt = None
    if len(rows) > args.limit:
        last = page[-1]
        nxt = encode_cursor(scope, (last.updated_ms, last.session_id, last.execution_id))
    if args.json:
        print_json({"runs": [r.to_json() for r in page], "nextCursor": nxt})
        return 0
    if not page:
        where = f"session {session_id}" if session_id else ("any workspace" if project is None else project)
        print(f"No runs in {where}.", file=sys.stderr)
        return 0
    from ama.session.shortid import abbreviate, short_session_ids

    # prefixes unique among every run found (what `runs status` resolves) and every session
    eids = abbreviate([r.execution_id for r in page], among=[r.execution_id for r in found])
    sids = short_session_ids(root, {r.session_id for r in page})
    ew = max([9, *(len(v) for v in eids.values())])
    sw = max([8, *(len(v) for v in sids.values())])
    print(
        f"{'EXECUTION':<{ew}}  {'STATUS':<9}  {'REASON':<12}  {'STEP':>4}  {'UPDATED':<16}  {'SESSION':<{sw}}  PROMPT"
    )
    for r in page:
        d = r.to_json()
        print(
            f"{eids[r.execution_id]:<{ew}}  {r.status:<9}  {(r.terminal_reason or '-'):<12}  {d['stepIndex']:>4}  "
            f"{local_time(d['updatedAt'] or '', seconds=False):<16}  {sids.get(r.session_id, r.session_id):<{sw}}  "
            f"{one_line(d['prompt'] or '', 40)}"
        )
    if nxt:
        sys.stdout.flush()
        print(f"\nmore: add --cursor {nxt}", file=sys.stderr)
    return 0


# --- status -------------------------------------------------------------------------------


def _find(args: argparse.Namespace, root: str, steps: int):
    """``(run, offsets)`` or an error message."""
    eid = args.execution_id
    found, offsets = _query(root, no_cache=args.no_cache, steps=steps)
    exact = [r for r in found if r.execution_id == eid]
    if not exact:
        if len(eid) < 4:
            return None, f"no run with executionId {eid!r} (give the full id or at least 4 characters)"
        exact = [r for r in found if r.execution_id.startswith(eid)]
    if not exact:
        return None, f"no run with executionId {eid!r} in {root}"
    if len({r.execution_id for r in exact}) > 1:
        ids = ", ".join(sorted({r.execution_id for r in exact}))
        return None, f"executionId prefix {eid!r} matches several runs: {ids}"
    exact.sort(key=lambda r: -r.updated_ms)
    run = exact[0]
    run.settle()
    return (run, offsets.get(run.path)), None


def _show(run, offsets, args: argparse.Namespace) -> None:
    from ama.index.runs import tail_events

    d = run.to_json()  # with the details of its latest record (errorMessage, limit, fallback, ...)
    if args.verbose and offsets is not None:
        last = run.rec["end_k"] or run.rec["last_k"]
        if run.status in ("RUNNING", "CREATED") or run.interrupted:
            last = max(last, len(offsets[0]))
        d["tailEvents"] = tail_events(run.path, run.rec["start_k"], last, offsets[0], offsets[1])
    if args.json:
        import json

        print(
            json.dumps(d, ensure_ascii=False) if args.watch else json.dumps(d, ensure_ascii=False, indent=2)
        )
        return
    rows = [
        ("Run", d["executionId"]),
        ("Status", d["status"] + (f" ({d['terminalReason']})" if d["terminalReason"] else "")),
        ("Step", f"{d['stepIndex']} ({d['steps']} model step{'s' if d['steps'] != 1 else ''} recorded)"),
        ("Created", local_time(d["createdAt"] or "")),
        ("Updated", local_time(d["updatedAt"] or "")),
        ("Completed", local_time(d["completedAt"] or "")),
        ("Session", f"{d['session']}  {d['project']}"),
    ]
    if d["errorCode"]:
        status = f", HTTP {d['httpStatus']}" if d.get("httpStatus") else ""
        status += f", {d['category']}" if d.get("category") else ""
        rows.insert(2, ("Error", d["errorCode"] + status + (f": {d['errorMessage']}" if d.get("errorMessage") else "")))
    if d.get("fallback"):
        fb = d["fallback"]
        n = fb.get("count", 1)
        rows.insert(2, ("Fallback", f"{fb.get('to')} answered {n} request{'s' if n != 1 else ''} of {fb.get('from')}"))
    if d.get("limit"):
        lim = d["limit"]
        rows.insert(2, ("Limit", f"{lim['kind']} {lim['value']} of {lim['limit']}"))
    if d["model"]:
        rows.append(("Model", d["model"]))
    if d["prompt"]:
        rows.append(("Prompt", one_line(d["prompt"], 80)))
    if d["interrupted"]:
        rows.append(
            ("Note", f"recorded as {d['recordedStatus']}, but no process is writing the session any more")
        )
    for label, value in rows:
        print(f"{label:<10} {value}")
    for a in d["anomalies"]:
        print(f"{'Refused':<10} {a}")
    if args.verbose:
        print("\nRecent steps:")
        for s in d.get("recentSteps") or []:
            err = f"  error: {one_line(s['error'], 60)}" if s["error"] else ""
            print(
                f"  #{s['step']:<3} @{s['entry']:<5} {local_time(s['timestamp'])}  {s['stopReason'] or '-':<8}  "
                f"{','.join(s['tools']) or '-'}{err}"
            )
        if not d.get("recentSteps"):
            print("  (none)")
        print("\nLast entries:")
        for ev in d.get("tailEvents") or []:
            what = ev["type"] + (f"/{ev['role']}" if ev.get("role") else "")
            text = f"  {one_line(ev['text'], 60)}" if ev.get("text") else ""
            print(f"  @{ev['entry']:<5} {local_time(ev['timestamp'] or '')}  {what:<18}{text}")


def runs_status(args: argparse.Namespace) -> int:
    if args.interval <= 0:
        return _fail(args, "invalid_arguments", f"--interval must be positive, got {args.interval}")
    root = os.path.abspath(sessions_dir(args))
    steps = 10 if args.verbose else 0
    found, err = _find(args, root, steps)
    if err:
        return _fail(args, "not_found", err)
    assert found is not None
    run, offsets = found
    if not args.watch:
        _show(run, offsets, args)
        return 0
    tty = sys.stdout.isatty() and not args.json
    last = None
    while True:
        state = (run.status, run.updated_ms, run.rec["steps"], run.rec["step_index"])
        if state != last:
            if tty:
                sys.stdout.write("\033[H\033[2J")
            _show(run, offsets, args)
            sys.stdout.flush()
            last = state
        if run.terminal:
            return 0
        time.sleep(args.interval)
        found, err = _find(args, root, steps)
        if err:
            return _fail(args, "not_found", err)
        assert found is not None
        run, offsets = found
