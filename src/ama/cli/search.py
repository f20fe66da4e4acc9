"""``ama sessions search``: find text in sessions (the command function; the parser is in
``cli/sessions.py``)."""

from __future__ import annotations

import os
import sys

from ama.cli.util import local_time, sessions_dir
from ama.errors import InvalidArguments
from ama.index.hits import parse_roles as _roles
from ama.index.hits import search_page, since_ms

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:
    import argparse

DESCRIPTION = """\
Search user text, assistant text, tool calls (as `name args-json`) and tool results of the
sessions of this project (or --all); not thinking, system or custom messages.  A keyword
matches case-insensitively; /pattern/flags is a Python regular expression (flags: i, m, s,
x; g and u are ignored).  Newest sessions first.

Each hit: session id prefix and locator (#n for the n-th user message, usable with
ama --from <id>#n; @k for the k-th entry of the file), time, project, role, snippet.
--json prints one object per hit per line (onBranch: false marks a branch the session
was rewound away from).  See docs/search.md."""


def add_parser(sub: argparse._SubParsersAction, add_session_dir) -> None:
    from ama.index.helpfmt import Formatter

    p = sub.add_parser(
        "search",
        help="search the text of sessions, newest first",
        description=DESCRIPTION,
        formatter_class=Formatter,
    )
    p.add_argument("pattern", metavar="KEYWORD|/REGEX/FLAGS", help="what to look for")
    p.add_argument("--all", action="store_true", help="sessions of every workspace")
    p.add_argument(
        "--role", metavar="ROLES", help="only these roles: user, assistant, tool (comma-separated)"
    )
    p.add_argument(
        "--since", metavar="WHEN", help="only entries since: today, yesterday, 7d, 4w or YYYY-MM-DD"
    )
    p.add_argument("--limit", type=int, default=20, metavar="N", help="at most N hits (default 20)")
    p.add_argument("--json", action="store_true", help="one JSON object per hit per line")
    p.add_argument(
        "--no-cache", action="store_true", help="scan the session files instead of using the index"
    )
    add_session_dir(p)
    p.set_defaults(func=sessions_search)


def sessions_search(args: argparse.Namespace) -> int:
    from ama.index.pattern import Pattern
    from ama.index.search import SearchQuery

    if args.limit < 1:
        raise InvalidArguments(f"--limit must be at least 1, got {args.limit}")
    q = SearchQuery(
        Pattern(args.pattern),
        project=None if args.all else os.getcwd(),
        roles=_roles(args.role),
        since_ms=since_ms(args.since),
        limit=args.limit,
    )
    root = os.path.abspath(sessions_dir(args))
    hits, more = search_page(root, q, no_cache=args.no_cache)
    out = sys.stdout
    if args.json:
        import json

        for h in hits:
            out.write(json.dumps(h.to_json(), ensure_ascii=False) + "\n")
    else:
        color = out.isatty() and not os.environ.get("NO_COLOR")
        ref_w = max([14, *(len(h.short) + len(h.locator) + 2 for h in hits)])
        for h in hits:
            snip, a, b = h.snippet()
            if color:
                snip = f"{snip[:a]}\033[1;31m{snip[a:b]}\033[0m{snip[b:]}"
            ref = f"{h.short}{h.locator}"
            role = ("user", "assistant", "tool")[h.role]
            out.write(f"{ref:<{ref_w}}{local_time(h.timestamp, seconds=False):<18}{h.cwd}  {role:<10} {snip}\n")
    if not hits:
        where = "any workspace" if args.all else os.getcwd()
        print(f"No matches for {args.pattern!r} in {where}.", file=sys.stderr)
    elif more:
        print(f"more hits: raise --limit (now {args.limit})", file=sys.stderr)
    return 0
