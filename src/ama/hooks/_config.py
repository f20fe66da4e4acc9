"""The ``hooks`` config key: validated into a table of command hooks per event.

Shape (Claude Code's nested form is accepted too)::

    {"PreToolUse": [{"matcher": "bash|edit", "command": "./check.sh", "timeout": 30}],
     "Stop":       [{"command": "make lint"}]}

    {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "..."}]}]}

``matcher`` (tool events only) is a regular expression matched against the whole tool name,
case-insensitively; missing, ``""`` or ``"*"`` matches every tool.  ``timeout`` is seconds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ama.errors import InvalidArguments

#: Event -> what a hook can do there (docs/hooks.md).
EVENTS: dict[str, str] = {
    "PreToolUse": "allow / deny / ask a tool call",
    "PostToolUse": "block: feed a reason back to the model after a tool ran",
    "UserPromptSubmit": "add context to the prompt, or block it",
    "Stop": "block: keep the run going with a reason as a new user message",
    "PostRewind": "observe a rewind (cannot block)",
}
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
_FLAT_KEYS = frozenset({"matcher", "command", "timeout", "type"})
_NESTED_KEYS = frozenset({"matcher", "hooks"})
_HOOK_KEYS = frozenset({"type", "command", "timeout"})


@dataclass(frozen=True)
class HookSpec:
    event: str
    command: str
    matcher: str | None = None
    timeout: float | None = None
    where: str = ""  # "hooks.PreToolUse[0]" — for messages

    def matches(self, tool_name: str | None) -> bool:
        if self.event not in TOOL_EVENTS or self.matcher in (None, "", "*"):
            return True
        return tool_name is not None and re.fullmatch(self.matcher, tool_name, re.IGNORECASE) is not None


@dataclass(frozen=True)
class HookTable:
    hooks: tuple[HookSpec, ...] = ()

    def for_event(self, event: str, tool_name: str | None = None) -> list[HookSpec]:
        """The hooks to run, in config order, each distinct command once."""
        seen: set[str] = set()
        out = []
        for h in self.hooks:
            if h.event == event and h.matches(tool_name) and h.command not in seen:
                seen.add(h.command)
                out.append(h)
        return out

    def __bool__(self) -> bool:
        return bool(self.hooks)


def _check_timeout(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise InvalidArguments(f"{where}.timeout: must be a positive number of seconds, got {value!r}")
    return float(value)


def _check_matcher(value: Any, where: str, event: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArguments(f"{where}.matcher: must be a string (a regular expression), got {value!r}")
    if event in TOOL_EVENTS and value not in ("", "*"):
        try:
            re.compile(value)
        except re.error as e:
            raise InvalidArguments(f"{where}.matcher: invalid regular expression {value!r} ({e})") from None
    return value


def _command_hook(entry: Mapping[str, Any], where: str, event: str, matcher: str | None) -> HookSpec:
    kind = entry.get("type", "command")
    if kind != "command":
        raise InvalidArguments(f"{where}.type: only 'command' hooks are supported, got {kind!r}")
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise InvalidArguments(f"{where}.command: must be a non-empty string, got {command!r}")
    return HookSpec(event, command, matcher, _check_timeout(entry.get("timeout"), where), where)


def _entry(entry: Any, where: str, event: str) -> list[HookSpec]:
    if not isinstance(entry, Mapping):
        raise InvalidArguments(f'{where}: must be an object like {{"command": "..."}}, got {entry!r}')
    if "hooks" in entry:
        unknown = set(entry) - _NESTED_KEYS
        if unknown:
            raise InvalidArguments(f"{where}: unknown key {sorted(unknown)[0]!r} (expected matcher, hooks)")
        matcher = _check_matcher(entry.get("matcher"), where, event)
        inner = entry["hooks"]
        if not isinstance(inner, list) or not inner:
            raise InvalidArguments(f"{where}.hooks: must be a non-empty list of command hooks")
        out = []
        for j, hook in enumerate(inner):
            w = f"{where}.hooks[{j}]"
            if not isinstance(hook, Mapping):
                raise InvalidArguments(f'{w}: must be an object like {{"command": "..."}}, got {hook!r}')
            unknown = set(hook) - _HOOK_KEYS
            if unknown:
                raise InvalidArguments(
                    f"{w}: unknown key {sorted(unknown)[0]!r} (expected type, command, timeout)"
                )
            out.append(_command_hook(hook, w, event, matcher))
        return out
    unknown = set(entry) - _FLAT_KEYS
    if unknown:
        raise InvalidArguments(
            f"{where}: unknown key {sorted(unknown)[0]!r} (expected matcher, command, timeout)"
        )
    return [_command_hook(entry, where, event, _check_matcher(entry.get("matcher"), where, event))]


def parse_hooks(config_hooks: Any, *, errors: list[str] | None = None) -> HookTable:
    """Validate the ``hooks`` config value.

    A bad entry raises ``InvalidArguments`` naming it (``hooks.PreToolUse[1].command: …``);
    with ``errors`` given, the message is appended there and the entry skipped instead.
    """
    if isinstance(config_hooks, HookTable):
        return config_hooks
    if config_hooks is None:
        return HookTable()
    if not isinstance(config_hooks, Mapping):
        raise InvalidArguments(f"hooks: must be an object keyed by event, got {config_hooks!r}")
    specs: list[HookSpec] = []
    for event, entries in config_hooks.items():
        try:
            if event not in EVENTS:
                raise InvalidArguments(f"hooks.{event}: unknown event (known: {', '.join(EVENTS)})")
            if not isinstance(entries, list):
                raise InvalidArguments(f"hooks.{event}: must be a list of hooks, got {entries!r}")
        except InvalidArguments as e:
            if errors is None:
                raise
            errors.append(e.message)
            continue
        for i, entry in enumerate(entries):
            try:
                specs.extend(_entry(entry, f"hooks.{event}[{i}]", event))
            except InvalidArguments as e:
                if errors is None:
                    raise
                errors.append(e.message)
    return HookTable(tuple(specs))
