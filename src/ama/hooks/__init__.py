"""Command hooks: user commands run at agent events (docs/hooks.md).

``parse_hooks`` validates the ``hooks`` config value; ``run_hooks`` runs the hooks of one
event and returns a ``HookOutcome`` (aggregated decision, reason, additional context and one
``HookRecord`` per hook for the ``hook_executed`` event).
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from ama.hooks._config import EVENTS, TOOL_EVENTS, HookSpec, HookTable, parse_hooks

if _TYPE_CHECKING:
    from ama.hooks._runner import HookOutcome, HookRecord, interpret, run_hooks

_RUNNER = frozenset({"HookOutcome", "HookRecord", "interpret", "run_hooks"})


def __getattr__(name: str) -> object:
    """The runner (subprocesses, output limits) loads when a hook first runs, not at start-up."""
    if name not in _RUNNER:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ama.hooks import _runner

    value = getattr(_runner, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | _RUNNER)


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
