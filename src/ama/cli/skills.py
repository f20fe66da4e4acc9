"""``ama skills``: the installed skills (implemented in ``cli/prompts.py``)."""

from ama.cli.prompts import build_skills_parser as build_parser

__all__ = ["build_parser"]
