"""The ``agents.external.*`` keys: which external agents a task may run, and how to start them.

Standard library only (``config/`` sits below ``agent/``); the runner side lives in
``ama/agent/external`` and reads the same shapes (docs/external-agents.md).

* ``agents.external.allow``: the agents a ``task`` may run (``claude``, ``codex``,
  ``acp:<program>``; ``acp:*`` allows every ACP program).
* ``agents.external.agents``: per agent ``{command?, args?, env?, confirm?}``.
"""

from __future__ import annotations

import re
from typing import Any

#: agents a task may run when the user configured nothing
DEFAULT_ALLOW = ["acp:ama", "claude", "codex"]

#: an agent name: a CLI runner, or ``acp:`` and a program name (no path, no spaces)
NAME = re.compile(r"(?:claude|codex|acp:[A-Za-z0-9][A-Za-z0-9._+-]*)")
_FIELDS = {"command", "args", "env", "confirm"}


def check_allow(value: Any) -> str | None:
    """An error for a bad ``agents.external.allow`` list, else None."""
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        return f"must be a list of agent names, got {value!r}"
    for name in value:
        if name != "acp:*" and not NAME.fullmatch(name):
            return f"has an unknown agent {name!r} (claude, codex, acp:<program> or acp:*)"
    return None


def check_agents(value: Any) -> str | None:
    """An error for a bad ``agents.external.agents`` object, else None."""
    if not isinstance(value, dict):
        return f"must be an object of agent settings, got {value!r}"
    for name, spec in value.items():
        if not NAME.fullmatch(name):
            return f"has an unknown agent {name!r} (claude, codex or acp:<program>)"
        if not isinstance(spec, dict):
            return f"{name}: must be an object {{command, args, env, confirm}}, got {spec!r}"
        unknown = sorted(set(spec) - _FIELDS)
        if unknown:
            return f"{name}: unknown field {unknown[0]!r} (command, args, env, confirm)"
        if "command" in spec and (not isinstance(spec["command"], str) or not spec["command"].strip()):
            return f"{name}.command must be a non-empty string, got {spec['command']!r}"
        args = spec.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            return f"{name}.args must be a list of strings, got {args!r}"
        env = spec.get("env", {})
        if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            return f"{name}.env must be an object of strings, got {env!r}"
        if "confirm" in spec and not isinstance(spec["confirm"], bool):
            return f"{name}.confirm must be true or false, got {spec['confirm']!r}"
    return None


def narrower_allow(user: Any, project: Any) -> bool:
    """A project may only remove agents from the user's allow list."""
    base = user if isinstance(user, list) else DEFAULT_ALLOW
    return isinstance(project, list) and all(isinstance(x, str) and x in base for x in project)
