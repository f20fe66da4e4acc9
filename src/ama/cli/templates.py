"""``ama templates``: the installed prompt templates (implemented in ``cli/prompts.py``)."""

from ama.cli.prompts import build_templates_parser as build_parser

__all__ = ["build_parser"]
