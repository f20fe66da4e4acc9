"""``ama sessions export``: the command function (the parser is added to ``ama sessions``)."""

from __future__ import annotations

import argparse
import os
import sys

from ama.cli.util import sessions_dir
from ama.index.helpfmt import Formatter

DESCRIPTION = """\
Export a session as Markdown (default), JSON or JSON lines, to stdout or a new file.

  md     user messages (numbered #n), assistant text, tool calls (arguments cut at 500
         characters) and results (cut at 2,000), summaries, model changes, a usage table;
         no thinking or system messages; images as placeholders
  json   {format: "ama.session-export", version: 1, session, branch, leafId,
         userMessages, usage, entries}
  jsonl  the header and the chosen entries, readable by ama again

Before anything is written, credential-shaped strings (API keys and tokens of cloud,
payment, chat, version control and registry services, Bearer/Basic credentials, private
keys, passwords and secret assignments, URL credentials) become [REDACTED], the session's
workspace becomes <workspace> and the home directory ~ (unless --keep-paths), and terminal
escapes and invisible characters are removed.  Shapes only: read it before sharing.
An item over 64 KiB is cut with a marker; an export over 16 MiB fails.  See docs/export.md."""


def add_parser(sub: argparse._SubParsersAction, add_session_dir) -> None:
    p = sub.add_parser(
        "export",
        help="export a session as Markdown, JSON or JSON lines (secrets redacted)",
        description=DESCRIPTION,
        formatter_class=Formatter,
    )
    p.add_argument("id", help="session id, unique id prefix (4+ chars), or path to a session file")
    p.add_argument(
        "--format", choices=["md", "json", "jsonl"], default="md", help="output format (default md)"
    )
    p.add_argument(
        "--branch",
        choices=["leaf", "all"],
        default="leaf",
        help="leaf: root to the current leaf (default); all: every entry of the file",
    )
    p.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        help="write a new file (mode 0600; never overwrites) instead of stdout",
    )
    p.add_argument(
        "--keep-paths",
        action="store_true",
        help="keep the workspace and home directory paths (default: <workspace> and ~)",
    )
    add_session_dir(p)
    p.set_defaults(func=sessions_export)


def sessions_export(args: argparse.Namespace) -> int:
    from ama.export import export_session, write_new
    from ama.session.catalog import resolve

    root = sessions_dir(args)
    path = os.path.abspath(args.id) if os.path.isfile(args.id) else resolve(root, args.id).path
    if args.output and os.path.lexists(args.output):
        from ama.errors import AmaError

        raise AmaError(
            "exists", f"{args.output} already exists; ama never overwrites it: choose another --output"
        )
    content = export_session(path, args.format, args.branch, keep_paths=args.keep_paths)
    if args.output:
        write_new(args.output, content)
        print(
            f"exported {os.path.basename(path)} ({args.format}, {len(content)} bytes) to {args.output}",
            file=sys.stderr,
        )
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(content)
        sys.stdout.buffer.flush()
    return 0
