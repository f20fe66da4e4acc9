"""Command hooks: user commands run at agent events (docs/hooks.md).

``parse_hooks`` validates the ``hooks`` config value; ``run_hooks`` runs the hooks of one
event and returns a ``HookOutcome`` (aggregated decision, reason, additional context and one
``HookRecord`` per hook for the ``hook_executed`` event).
"""

from ama.hooks._config import EVENTS, TOOL_EVENTS, HookSpec, HookTable, parse_hooks
from ama.hooks._runner import HookOutcome, HookRecord, interpret, run_hooks

__all__ = [
    "EVENTS",
    "HookOutcome",
    "HookRecord",
    "HookSpec",
    "HookTable",
    "TOOL_EVENTS",
    "interpret",
    "parse_hooks",
    "run_hooks",
]
