"""``ama runs watch``: follow a live run until it ends, exiting with the run's exit code.

The run is found through the index (or a scan) like ``ama runs status``; then its session
file is read from the start and polled for appended lines (``index/runwatch.py``).  The run
ends with its terminal record, or as interrupted when no process holds the session file's
lease any more (or a newer run started in the file) without one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from ama.cli.util import local_time, one_line, sessions_dir

#: exit codes of the query itself (the run's own codes are 0, 1 and 130)
NOT_FOUND = 2


def add_parser(sub: Any, formatter: Any) -> None:
    p = sub.add_parser(
        "watch",
        help="follow a live run until it ends",
        formatter_class=formatter,
        description="Follow a run as it goes: print its state changes (status, step index) and each model step "
        "until it is in a terminal state, then exit with the run's exit code (0 completed, 1 failed, "
        "130 cancelled or interrupted; 2 when no such run).",
    )
    p.add_argument("execution_id", nargs="?", metavar="EXECUTION_ID", help="the run's executionId or a unique prefix")
    p.add_argument("--latest", action="store_true", help="the most recently started run of this directory")
    p.add_argument(
        "--interval", type=float, default=0.5, metavar="SECONDS", help="how often to look for news (default 0.5)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object per line (state, step, end)")
    p.add_argument("--no-cache", action="store_true", help="find the run by scanning the session files")
    from ama.cli.util import add_session_dir

    add_session_dir(p)
    p.set_defaults(func=runs_watch)


def _fail(args: argparse.Namespace, code: str, message: str) -> int:
    if args.json:
        print(json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False), file=sys.stderr)
    else:
        print(f"ama: error: {message}", file=sys.stderr)
    return NOT_FOUND


def _latest(args: argparse.Namespace, root: str) -> Any:
    from ama.cli.runs import _query

    found, _ = _query(root, no_cache=args.no_cache, project=os.getcwd())
    if not found:
        return None
    return max(found, key=lambda r: (r.rec["created_ms"], r.rec["start_k"], r.updated_ms))


def _print(ev: dict[str, Any], as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(ev, ensure_ascii=False) + "\n")
    elif ev["type"] == "state":
        extra = ""
        if ev.get("terminalReason"):
            extra += f" ({ev['terminalReason']})"
        if ev.get("errorCode"):
            extra += f"  {ev['errorCode']}" + (f": {one_line(ev['errorMessage'], 80)}" if ev.get("errorMessage") else "")
        if ev.get("limit"):
            lim = ev["limit"]
            extra += f"  limit {lim.get('kind')} {lim.get('value')} of {lim.get('limit')}"
        stamp = local_time(ev["timestamp"]) if isinstance(ev.get("timestamp"), str) else "-"
        sys.stdout.write(f"{stamp}  {ev['status']:<9}  step {ev['stepIndex']}{extra}\n")
    elif ev["type"] == "step":
        err = f"  error: {one_line(ev['error'], 60)}" if ev.get("error") else ""
        stamp = local_time(ev["timestamp"]) if isinstance(ev.get("timestamp"), str) else "-"
        tools = ", ".join(ev["tools"]) or "-"
        sys.stdout.write(f"{stamp}    step {ev['step']:<4} {ev.get('stopReason') or '-':<8}  {tools}{err}\n")
    elif ev["type"] == "end" and ev["terminalReason"] == "interrupted":
        sys.stdout.write(f"-                    CANCELLED  (interrupted: recorded {ev.get('recordedStatus')}, no process writes it)\n")
    sys.stdout.flush()


def runs_watch(args: argparse.Namespace) -> int:
    from ama.cli.runs import _find
    from ama.index.runs import lease_held
    from ama.index.runwatch import RunFollower

    if args.interval <= 0:
        return _fail(args, "invalid_arguments", f"--interval must be positive, got {args.interval}")
    if bool(args.execution_id) == bool(args.latest):
        return _fail(args, "invalid_arguments", "give an EXECUTION_ID or --latest (one of them)")
    root = os.path.abspath(sessions_dir(args))
    if args.latest:
        run = _latest(args, root)
        if run is None:
            return _fail(args, "not_found", f"no runs in {os.getcwd()}")
    else:
        found, err = _find(args, root, 0)
        if err:
            return _fail(args, "not_found", err)
        assert found is not None
        run = found[0]
    follower = RunFollower(run.execution_id)
    if not args.json:
        print(f"run {run.execution_id}  session {run.session_id}  {run.cwd}")
    try:
        f = open(run.path, "rb")  # noqa: SIM115 (closed below)
    except OSError as e:
        return _fail(args, "not_found", f"cannot read the run's session file {run.path}: {e}")
    with f:
        while True:
            held = lease_held(run.path)  # before reading: a writer ends with its record, then lets go
            for ev in follower.feed(f.read()):
                _print(ev, args.json)
            if follower.end is None and not held:
                _print(follower.interrupted(), args.json)
            if follower.end is not None:
                return int(follower.end["exitCode"])
            time.sleep(args.interval)
