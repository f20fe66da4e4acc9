"""Generate ``docs/cli.md`` from the parsers' ``--help`` text; ``--check`` fails on drift.

    python -m ama.cli.gendocs          # rewrite docs/cli.md
    python -m ama.cli.gendocs --check  # exit 1 if docs/cli.md is out of date
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

from ama.cli.main import COMMANDS, _agent_parser

DOC = Path(__file__).resolve().parents[3] / "docs" / "cli.md"


def _walk(parser: argparse.ArgumentParser, out: list[str]) -> None:
    out += [f"## `{parser.prog}`", "", "```text", parser.format_help().rstrip(), "```", ""]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases map to the same parser
                _walk(sub, out)


def _interactive() -> list[str]:
    """The interactive UI's commands and keys, from their tables (docs/tui.md has the rest)."""
    from ama.agent.commands import help_lines
    from ama.cli.interactive import KEY_BINDINGS

    return [
        "## Interactive mode",
        "",
        "`ama` without `-p` reads prompts in the terminal; docs/tui.md describes the screen, approvals, "
        "completion, resume and the rewind panel.",
        "",
        "```text",
        "Commands:",
        *help_lines(),
        "Keys:",
        *(f"  {k:<40} {what}" for k, what in KEY_BINDINGS),
        "```",
        "",
    ]


def render() -> str:
    os.environ["COLUMNS"] = "100"  # stable wrapping
    out = [
        "# Command-line reference",
        "",
        "Generated from `--help` by `python -m ama.cli.gendocs`; CI fails when it drifts.",
        "",
    ]
    _walk(_agent_parser(), out)
    out += _interactive()
    for name, (module, _summary) in COMMANDS.items():
        _walk(importlib.import_module(module).build_parser(f"ama {name}"), out)
    return "\n".join(out).rstrip() + "\n"


def main() -> int:
    text = render()
    if "--check" in sys.argv[1:]:
        current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
        if current != text:
            print(f"{DOC} is out of date: run python -m ama.cli.gendocs", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
