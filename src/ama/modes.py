"""The interfaces ``ama --mode`` runs, by name: each is ``module:function`` taking the parsed
command line and returning the exit code.

The command line (``cli/``) starts the protocol servers (``rpc/``) through this table, so the
two interfaces never import each other; the modules are imported only when their mode runs.
"""

from __future__ import annotations

import importlib
from typing import Any

MODES: dict[str, str] = {
    "interactive": "ama.cli.interactive:interactive_main",
    "rpc": "ama.rpc.start:rpc_main",
    "acp": "ama.rpc.acp:acp_main",
}


def run_mode(name: str, args: Any) -> int:
    module, _, func = MODES[name].partition(":")
    return int(getattr(importlib.import_module(module), func)(args) or 0)
