"""``ama skills list`` and ``ama templates list``: what this project and the user have
installed, as the agent would see it started here (docs/skills.md).

Exit codes: 0 (also when nothing is installed, or some files are broken: they are listed
with their error), 2 bad arguments.  Imports stay light: ``ama.agent.catalog`` only.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ama.cli.util import list_verb_parser, one_line, print_json


def _catalog(args: argparse.Namespace) -> Any:
    from ama.agent.catalog import PromptCatalog
    from ama.config.paths import config_dir
    from ama.errors import InvalidArguments

    cwd = os.path.abspath(args.cwd or os.getcwd())
    if not os.path.isdir(cwd):
        raise InvalidArguments(f"--cwd {args.cwd!r} is not a directory")
    return PromptCatalog.load(cwd, str(config_dir()))


def _add_common(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--json", action="store_true", help=f"print {{{what}, warnings}} as JSON")
    p.add_argument("--cwd", metavar="DIR", help="the project directory (default: the current directory)")


def build_skills_parser(prog: str) -> argparse.ArgumentParser:
    parser, p = list_verb_parser(
        prog,
        description="Skills: SKILL.md folders in .ama/skills/ and .claude/skills/ of the project and in "
        "<config dir>/skills/. The model sees their names and descriptions and loads one with the skill tool; "
        "/skill:<name> [args] runs one by hand.",
        epilog="Exit codes: 0 listed (also none, or broken ones: shown with their error), 2 bad arguments. "
        "See docs/skills.md.",
        help="list the skills the agent would find here",
        list_description="List the skills found for this project, project ones first; a name found twice keeps the "
        "project's and says which file it shadows. Broken SKILL.md files are listed with the file, line and reason.",
    )
    _add_common(p, "skills, errors")
    p.set_defaults(func=skills_list)
    return parser


def build_templates_parser(prog: str) -> argparse.ArgumentParser:
    parser, p = list_verb_parser(
        prog,
        description="Prompt templates: Markdown files in .ama/prompts/, .ama/commands/ and .claude/commands/ of "
        "the project and in <config dir>/prompts/; /NAME [args] sends the file's text with $ARGUMENTS and $1..$9 "
        "filled in (interactive UI, -p and RPC prompt).",
        epilog="Exit codes: 0 listed (also none, or broken ones: shown with their error), 2 bad arguments. "
        "See docs/skills.md.",
        help="list the prompt templates the agent would find here",
        list_description="List the prompt templates found for this project, project ones first, with their argument "
        "hint and file; a broken template is listed with the file, line and reason.",
    )
    _add_common(p, "templates")
    p.set_defaults(func=templates_list)
    return parser


def _warnings(warnings: list[str]) -> None:
    for w in warnings:
        print(f"ama: warning: {w}", file=sys.stderr)


def skills_list(args: argparse.Namespace) -> int:
    cat = _catalog(args)
    if args.json:
        print_json({"skills": [s.to_json() for s in cat.skills], "errors": cat.skill_errors, "warnings": cat.warnings})
        return 0
    if not cat.skills and not cat.skill_errors:
        print("No skills (put SKILL.md folders in .ama/skills/ or the user config dir's skills/).")
    for s in cat.skills:
        flag = "  (model: off)" if not s.model_invocable else ""
        print(f"{s.name:<24} {s.scope:<8} {one_line(s.description, 70)}{flag}")
        print(f"{'':<24} {'':<8} {s.location}")
    _warnings([w for w in cat.warnings if w.startswith("skill")])
    return 0


def templates_list(args: argparse.Namespace) -> int:
    cat = _catalog(args)
    if args.json:
        print_json({"templates": [t.to_json() for t in cat.templates], "warnings": cat.warnings})
        return 0
    if not cat.templates:
        print("No prompt templates (put NAME.md files in .ama/prompts/ or the user config dir's prompts/).")
    for t in cat.templates:
        usage = f"/{t.name}" + (f" {t.argument_hint}" if t.argument_hint else "")
        what = f"broken: {t.error}" if t.error else one_line(t.description, 70)
        print(f"{usage:<24} {t.scope:<8} {what}")
        print(f"{'':<24} {'':<8} {t.path}")
    _warnings([w for w in cat.warnings if w.startswith("prompt template")])
    return 0


__all__ = ["build_skills_parser", "build_templates_parser", "skills_list", "templates_list"]
