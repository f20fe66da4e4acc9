"""``ama sessions compact``: summarize the older part of a session now (docs/compaction.md)."""

from __future__ import annotations

import argparse
import json
import os

from ama.cli.util import print_json, sessions_dir
from ama.index.helpfmt import Formatter

DESCRIPTION = """\
Summarize the older part of a session into a compaction entry, as the agent does on its own
near the context limit; the newest context (compaction.keepRecentTokens, at most half of the
conversation) stays verbatim.  The summary is written by --model, else compaction.model,
else the session's model (in parts when the history does not fit one request);
--focus tells it what to keep.  Nothing is removed from the file: the entry is appended and
the model sees summary -> kept messages from then on.  A session that another process is
writing is refused (exit 3).  --json prints the same CompactionResult as RPC compact."""


def add_parser(sub: argparse._SubParsersAction, add_session_dir) -> None:
    p = sub.add_parser(
        "compact",
        help="summarize the older part of a session's context now",
        description=DESCRIPTION,
        formatter_class=Formatter,
    )
    p.add_argument("id", help="session id, unique id prefix (4+ chars), or path to a session file")
    p.add_argument("--focus", metavar="TEXT", help="what the summary should concentrate on")
    p.add_argument("--model", metavar="PROVIDER/ID", help="model that writes the summary (default: compaction.model, else the session's)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_session_dir(p)
    p.set_defaults(func=sessions_compact)


def _session(args: argparse.Namespace) -> tuple[str, str]:
    """(path, cwd) of the session."""
    from ama.session.catalog import resolve

    path = os.path.abspath(args.id) if os.path.isfile(args.id) else resolve(sessions_dir(args), args.id).path
    cwd = os.getcwd()
    try:
        with open(path, encoding="utf-8") as f:
            header = json.loads(f.readline() or "{}")
        if isinstance(header, dict) and isinstance(header.get("cwd"), str) and os.path.isdir(header["cwd"]):
            cwd = header["cwd"]
    except (OSError, ValueError):
        pass
    return path, cwd


async def _compact(path: str, cwd: str, args: argparse.Namespace) -> dict:
    from ama.agent.compose import AgentOptions, build_agent

    opts = AgentOptions(cwd=cwd, model=args.model, session=path, session_dir=getattr(args, "session_dir", None), sandbox="off")
    agent, _warnings = build_agent(opts)
    if args.model:  # --model writes the summary, over compaction.model
        agent.context_state.summary_model = agent.model
    try:
        return await agent.compact(args.focus)
    finally:
        await agent.close()


def sessions_compact(args: argparse.Namespace) -> int:
    import asyncio

    path, cwd = _session(args)
    result = asyncio.run(_compact(path, cwd, args))
    if args.json:
        print_json(result)
        return 0
    before, after = result["tokensBefore"], result["tokensAfter"]
    print(f"Compacted {before:,} -> {after:,} tokens; kept from entry {result['firstKeptEntryId']}")
    d = result["details"]
    print(f"  files read: {len(d['readFiles'])}, modified: {len(d['modifiedFiles'])}; summary entry {result['entryId']}")
    return 0
