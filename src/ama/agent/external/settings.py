"""Which external agents may run and how each is started, read from the merged config.

``config`` is the merged ama config as a plain dict, either flat (``{"agents.external.allow":
[...]}``, as ``Config.values``) or nested (``{"agents": {"external": {"allow": [...]}}}``).
Values are checked again here (a caller may hand in a dict that never went through the
loader), so a bad entry fails the task with a one-line message naming it.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from typing import Any

from ama.config.external_agents import DEFAULT_ALLOW, NAME, check_agents, check_allow

CLI_RUNNERS = ("claude", "codex")


class SettingsError(Exception):
    """A bad agent name or ``agents.external.*`` value (the message names it)."""


@dataclass(frozen=True)
class AgentSpec:
    """How to start one external agent."""

    name: str  # "claude" | "codex" | "acp:<program>"
    command: str  # the program as configured (a name looked up on PATH, or a path)
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    confirm: bool = True
    configured: bool = False  # has an entry in agents.external.agents
    configured_command: bool = False  # that entry names a command

    @property
    def runner(self) -> str:
        return self.name

    @property
    def is_acp(self) -> bool:
        return self.name.startswith("acp:")

    @property
    def is_self(self) -> bool:
        """``acp:ama`` without a configured command: this ama, started with this interpreter."""
        return self.name == "acp:ama" and not self.configured_command

    def program(self) -> list[str] | None:
        """The program to start (a path, or this interpreter and ``-m ama --mode acp``); None
        when it is not installed (not on PATH, or not an executable file)."""
        if self.is_self:
            return [sys.executable, "-m", "ama", "--mode", "acp"]
        path = shutil.which(self.command)
        return None if path is None else [path]

    def environ(self) -> dict[str, str]:
        return {**os.environ, **self.env}


def lookup(config: dict[str, Any], key: str, default: Any) -> Any:
    """``agents.external.<key>`` from a flat or nested config dict."""
    flat = config.get(f"agents.external.{key}")
    if flat is not None:
        return flat
    node: Any = config
    for part in ("agents", "external", key):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def allow_list(config: dict[str, Any]) -> list[str]:
    allow = lookup(config, "allow", DEFAULT_ALLOW)
    err = check_allow(allow)
    if err:
        raise SettingsError(f"agents.external.allow {err}")
    return list(allow)


def agent_settings(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    agents = lookup(config, "agents", {})
    err = check_agents(agents)
    if err:
        raise SettingsError(f"agents.external.agents {err}")
    return dict(agents)


def is_allowed(name: str, allow: list[str]) -> bool:
    return name in allow or (name.startswith("acp:") and "acp:*" in allow)


def spec_for(name: str, config: dict[str, Any]) -> AgentSpec:
    """The start settings of ``name`` (raises SettingsError for an unknown name or bad config)."""
    if not NAME.fullmatch(name):
        raise SettingsError(f"unknown external agent {name!r}: use claude, codex or acp:<program>")
    entry = agent_settings(config).get(name)
    default_cmd = name[4:] if name.startswith("acp:") else name
    if entry is None:
        return AgentSpec(name=name, command=default_cmd)
    return AgentSpec(
        name=name,
        command=entry.get("command", default_cmd),
        args=list(entry.get("args", [])),
        env=dict(entry.get("env", {})),
        confirm=entry.get("confirm", True),
        configured=True,
        configured_command="command" in entry,
    )


def known_agents(config: dict[str, Any]) -> list[str]:
    """claude, codex, acp:ama, every configured agent and every explicitly allowed ACP program."""
    names = ["claude", "codex", "acp:ama"]
    try:
        extra = list(agent_settings(config)) + [a for a in allow_list(config) if a != "acp:*"]
    except SettingsError:
        extra = []
    for n in extra:
        if n not in names:
            names.append(n)
    return names
