"""``ama agents list``: the agent types a ``task`` can run here (docs/agents.md) and the
external agents with whether they are installed (docs/external-agents.md) -- what RPC
``get_agents`` answers, for a terminal or a script.

Exit codes: 0 listed (broken definition files are warnings), 2 bad arguments.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ama.cli.util import list_verb_parser, one_line, print_json


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser, p = list_verb_parser(
        prog,
        description="Agent types for the task tool: the built-in general and explore, Markdown definitions in "
        ".ama/agents/ and .claude/agents/ of the project and <config dir>/agents/, and external agents "
        "(claude, codex, acp:<program>).",
        epilog="Exit codes: 0 listed, 2 bad arguments. See docs/agents.md and docs/external-agents.md.",
        help="list the agent types and external agents",
        list_description="List the agent types a task can run here, project definitions first (a name found twice "
        "keeps the first and warns), then the external agents with installed, version and allowed.",
    )
    p.add_argument("--json", action="store_true", help="print {agents, warnings} as JSON (get_agents' entries)")
    p.add_argument("--cwd", metavar="DIR", help="the project directory (default: the current directory)")
    p.add_argument("--no-external", action="store_true", help="leave out the external agents (no PATH probe)")
    p.set_defaults(func=agents_list)
    return parser


def agents_list(args: argparse.Namespace) -> int:
    from ama.agent.subagents.definitions import discover_agents
    from ama.config.loader import load_config
    from ama.config.paths import config_dir
    from ama.errors import InvalidArguments

    cwd = os.path.abspath(args.cwd or os.getcwd())
    if not os.path.isdir(cwd):
        raise InvalidArguments(f"--cwd {args.cwd!r} is not a directory")
    found = discover_agents(cwd, str(config_dir()))
    rows: list[dict[str, Any]] = [a.to_json() for a in found.agents]
    warnings = list(found.warnings)
    if not args.no_external:
        from ama.agent.external import list_external_agents

        cfg = load_config(cwd)
        warnings += [w for w in cfg.warnings if "agents.external" in w]
        rows += list_external_agents(dict(cfg.values), wait=True)
    if args.json:
        print_json({"agents": rows, "warnings": warnings})
        return 0
    for a in rows:
        if a.get("runner", "ama") == "ama":
            print(f"{a['name']:<16} {a.get('scope', ''):<8} {one_line(a.get('description', ''), 70)}")
            if a.get("location"):
                print(f"{'':<16} {'':<8} {a['location']}")
        else:
            state = f"installed {a.get('version') or ''}".rstrip() if a.get("installed") else "not installed"
            if a.get("allowed") is False:
                state += ", not allowed (agents.external.allow)"
            print(f"{a['name']:<16} {'external':<8} {state}")
    for w in warnings:
        print(f"ama: warning: {w}", file=sys.stderr)
    return 0


__all__ = ["agents_list", "build_parser"]
