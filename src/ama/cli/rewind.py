"""``ama sessions rewind``: the command function (the parser is added to ``ama sessions``)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ama.cli.util import local_time, one_line, print_json, sessions_dir
from ama.index.helpfmt import Formatter

DESCRIPTION = """\
Go back to before one of your messages: the conversation, the files ama changed, or both.

  ama sessions rewind ID --list        the rewind points, numbered #1 (oldest) ...
  ama sessions rewind ID [N]           rewind to before point #N (default: the last one)

Modes: both (default when the point has a file checkpoint), conversation (default
otherwise: files stay, the model is told which differ), code (the conversation stays).
The abandoned branch stays in the session file; a file changed outside ama is a conflict,
left alone unless --on-conflict overwrite.  A session that another process is writing is
refused (exit 3).  --json prints the same RewindResult as RPC rewind.  See docs/rewind.md."""


def add_parser(sub: argparse._SubParsersAction, add_session_dir) -> None:
    p = sub.add_parser(
        "rewind",
        help="rewind a session's conversation and/or files to before one of its user messages",
        description=DESCRIPTION,
        formatter_class=Formatter,
    )
    p.add_argument("id", help="session id, unique id prefix (4+ chars), or path to a session file")
    p.add_argument("n", nargs="?", help="rewind point number from --list (or its entry id); default: the last")
    p.add_argument("--list", action="store_true", help="list the rewind points instead of rewinding")
    p.add_argument("--mode", choices=["both", "conversation", "code"], help="what to rewind (default: see above)")
    p.add_argument("--dry-run", action="store_true", help="only report what would be restored; change nothing")
    p.add_argument(
        "--on-conflict", choices=["skip", "overwrite"], default="skip",
        help="files changed outside ama: leave them (skip, default) or restore them anyway",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="print JSON")
    add_session_dir(p)
    p.set_defaults(func=sessions_rewind)


def _path(args: argparse.Namespace) -> str:
    from ama.session.catalog import resolve

    if os.path.isfile(args.id):
        return os.path.abspath(args.id)
    return resolve(sessions_dir(args), args.id).path


def sessions_rewind(args: argparse.Namespace) -> int:
    from ama.errors import InvalidArguments

    if args.list:
        if args.n is not None or args.mode or args.dry_run:
            raise InvalidArguments("--list takes no point number, --mode or --dry-run")
        return _list(args)
    import asyncio

    from ama.agent.rewind_offline import rewind_file

    point, result = asyncio.run(
        rewind_file(_path(args), args.n, args.mode, dry_run=args.dry_run, on_conflict=args.on_conflict)
    )
    if args.json:
        print_json(result)
        return 0
    _print_result(point, result, args.dry_run)
    return 0


def _list(args: argparse.Namespace) -> int:
    from ama.agent.rewind_offline import list_points

    points = list_points(_path(args))
    if args.json:
        print_json({"points": points})
        return 0
    if not points:
        print("No rewind points (no user message on the current branch).")
        return 0
    for p in points:
        mark = "checkpoint" if p["hasCheckpoint"] else "no files  "
        prefix = f"  #{p['n']:<4} {local_time(p['timestamp'])}  {mark}  "
        print(prefix + one_line(p["text"] or "", max(30, 100 - len(prefix))))
    return 0


def _print_result(point: dict[str, Any], result: dict[str, Any], dry_run: bool) -> None:
    would = "would be " if dry_run else ""
    print(f"{'Dry run: ' if dry_run else ''}rewind to before #{point['n']} ({point['mode']})")
    code = result.get("code")
    if code is not None:
        for key, label in (("restored", "restored"), ("deleted", "deleted")):
            if code.get(key):
                print(f"  {would}{label}: {', '.join(code[key])}")
        for c in code.get("conflicts", []):
            print(f"  conflict (left alone): {c['path'] if isinstance(c, dict) else c}", file=sys.stderr)
        for s in code.get("skipped", []):
            print(f"  skipped: {s['path']} ({s.get('reason', '')})", file=sys.stderr)
        if not code.get("restored") and not code.get("deleted"):
            print(f"  no file {would}changed")
    conv = result.get("conversation")
    if conv is not None:
        print(f"  conversation {would}moved to {conv['leafId'] or '(before the first entry)'}")
        print(f"  your message was: {one_line(conv['draft'].get('text', ''), 90)}")
    hint = result.get("gitHint")
    if hint:
        print(f"  git: HEAD moved since the checkpoint ({hint.get('recordedHead')} -> {hint.get('currentHead')})")
