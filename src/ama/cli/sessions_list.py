"""``ama sessions list``: the catalog page as a table or JSON, damaged and unreadable files
included as rows of their own."""

from __future__ import annotations

import os
import sys

from ama.cli.util import local_time, one_line, print_json, sessions_dir

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:
    import argparse

    from ama.session.catalog import Listing, Page
    from ama.session.summary_data import SessionSummary


def _listing(root: str, args: argparse.Namespace) -> Listing:
    """The page from the session index (refreshed), or by scanning the files: the same."""
    opts = {
        "cwd": None if args.all else os.getcwd(),
        "archived": args.archived,
        "include_subagents": args.include_subagents,
        "limit": args.limit,
        "cursor": args.cursor,
    }
    short = not args.json
    if not args.no_cache:
        from ama.index.access import with_index
        from ama.index.listing import page

        res = with_index(root, lambda db, info: page(db, info, root, short=short, **opts))
        if res is not None:
            return res[0]
    from ama.session.catalog import listing_of, scan

    return listing_of(scan(root), short=short, **opts)


def sessions_list(args: argparse.Namespace) -> int:
    root = os.path.abspath(sessions_dir(args))
    listing = _listing(root, args)
    page = listing.page
    for row in page.sessions:
        row.task_status = settled_status(row.task_status, row.path)
    if args.json:
        print_json(page.to_json())
        return 0
    if not page.sessions and not page.damaged:
        where = "any workspace" if args.all else os.getcwd()
        kind = "archived sessions" if args.archived else "sessions"
        print(f"No {kind} in {where} (sessions directory {root}).", file=sys.stderr)
        return 0
    _print_table(page, listing.short or {}, show_project=args.all)
    if page.next_cursor:
        sys.stdout.flush()  # the rows first, then the hint on its own line
        print(f"\nmore: {' '.join(_relist(args))} --cursor {page.next_cursor}", file=sys.stderr)
    return 0


def settled_status(status: str, path: str) -> str:
    """A ``running`` task status left by a process that is gone reads as ``interrupted``
    (the lease tells; a summary cannot, being computed from the bytes alone)."""
    if status != "running":
        return status
    from ama.index.runs import lease_held

    return status if lease_held(path) else "interrupted"


def row_flags(s: SessionSummary) -> list[str]:
    out = []
    if s.damaged:
        out.append("damaged")
    if s.subagent:
        out.append("sub-agent")
    if s.error_count:
        out.append(f"{s.error_count} error{'s' if s.error_count != 1 else ''}")
    if s.pending_interaction:
        out.append(f"pending {s.pending_interaction.replace('_', ' ')}")
    if s.task_status not in ("completed", "cancelled"):
        out.append(s.task_status)
    return out


def _print_table(page: Page, short: dict[str, str], *, show_project: bool) -> None:
    from ama.session.layout import name_id

    id_w = max([8, *(len(v) for v in short.values())])
    proj_w = min(40, max([7, *(len(s.cwd) for s in page.sessions)])) if show_project else 0
    width = 100
    header = f"{'ID':<{id_w}}  {'UPDATED':<16}  {'MSGS':>4}  " + (
        f"{'PROJECT':<{proj_w}}  " if show_project else ""
    )
    print(header + "TITLE")
    for s in page.sessions:
        title = s.name or s.first_message or "(no messages)"
        flags = "".join(f" [{f}]" for f in row_flags(s))
        project = f"{_fit(s.cwd, proj_w):<{proj_w}}  " if show_project else ""
        line = f"{short[s.id]:<{id_w}}  {local_time(s.last_message_time, seconds=False):<16}  {s.message_count:>4}  {project}"
        print(line + one_line(title + flags, max(20, width - len(line))))
    for d in page.damaged:
        # no header to trust: the id comes from the file name, the time from the file
        nid = short.get(name_id(d.path), "") or "?"
        when = local_time(_ns_iso(d.mtime_ns), seconds=False) if d.mtime_ns else "-"
        project = f"{'?':<{proj_w}}  " if show_project else ""
        print(f"{nid:<{id_w}}  {when:<16}  {'-':>4}  {project}[{d.problem}] {d.path}")


def _fit(text: str, width: int) -> str:
    """``text`` in ``width`` columns, cut at the front (the end of a path tells most)."""
    return text if len(text) <= width else "…" + text[len(text) - width + 1 :]


def _ns_iso(ns: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(ns / 1e9, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _relist(args: argparse.Namespace) -> list[str]:
    out = ["ama sessions list"]
    for flag in ("all", "archived", "include_subagents", "no_cache"):
        if getattr(args, flag):
            out.append("--" + flag.replace("_", "-"))
    if args.limit != 50:
        out.append(f"--limit {args.limit}")
    if args.session_dir:
        out.append(f"--session-dir {args.session_dir}")
    return out
