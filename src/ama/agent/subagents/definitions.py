"""Agent types a ``task`` can run: built-ins and Markdown definitions (docs/agents.md).

Discovery (first hit of a name wins; project before user; built-ins last unless shadowed):

* project: ``<cwd>/.ama/agents/*.md``, ``<cwd>/.claude/agents/*.md`` (Claude Code's, read as-is)
* user:    ``<config dir>/agents/*.md``

A definition's front matter: ``name`` (lowercase letters, digits, hyphens), ``description``
(when to use it), optional ``tools`` (a list or a comma-separated string; Claude Code's names
such as ``Read, Grep, Glob`` are mapped to ama's), ``model`` (``provider/id``, or ``inherit``),
``permissionMode`` (capped by the parent's).  The body is the agent's instructions, added to
the child's system prompt.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ama.agent.frontmatter import FrontMatterError, parse_file, text_field
from ama.errors import InvalidArguments

NAME = re.compile(r"^[a-z0-9]+([-_][a-z0-9]+)*$")
MAX_BYTES = 256 * 1024
#: tools a read-only agent may use
READ_ONLY_TOOLS = ("read", "ls", "find", "grep")
#: Claude Code tool names -> ama's (names already ama's pass through lowercased)
CLAUDE_TOOLS = {
    "read": "read",
    "write": "write",
    "edit": "edit",
    "multiedit": "edit",
    "bash": "bash",
    "grep": "grep",
    "glob": "find",
    "ls": "ls",
    "todowrite": "todo",
    "task": "task",
}
#: agent names served by an external runner (``ama.agent.external``)
EXTERNAL = ("claude", "codex")

GENERAL_PROMPT = (
    "You are a sub-agent started by another ama agent for one task. Work on the task you are "
    "given with the tools you have, then reply with a concise final report: what you found or "
    "did, the files involved, and anything left open. Your final message is all the parent sees."
)
EXPLORE_PROMPT = (
    "You are a read-only exploration sub-agent. Find the code, files and facts the task asks "
    "about using read, ls, find and grep; you cannot change files or run commands. Reply with "
    "a concise report: the relevant paths (with line numbers), what they contain, and the answer."
)


@dataclass(frozen=True)
class AgentDefinition:
    name: str
    description: str
    #: the tools it may use (None: every tool of the parent, minus ``task`` beyond the depth limit)
    tools: tuple[str, ...] | None = None
    #: ``provider/id``; None inherits the parent's model
    model: str | None = None
    permission_mode: str | None = None
    prompt: str = ""
    #: builtin | project | user
    scope: str = "builtin"
    location: str | None = None
    #: uses the configured small model (``tasks.exploreModel``) when there is one
    small_model: bool = False

    def to_json(self) -> dict:
        out: dict = {"name": self.name, "description": self.description, "runner": "ama", "scope": self.scope}
        if self.tools is not None:
            out["tools"] = list(self.tools)
        if self.model:
            out["model"] = self.model
        if self.permission_mode:
            out["permissionMode"] = self.permission_mode
        if self.location:
            out["location"] = self.location
        return out


BUILTINS = (
    AgentDefinition("general", "General-purpose agent for multi-step tasks: research, edits and commands.", prompt=GENERAL_PROMPT),
    AgentDefinition(
        "explore",
        "Fast read-only agent for finding files, code and answers in the workspace (cannot edit or run commands).",
        tools=READ_ONLY_TOOLS,
        prompt=EXPLORE_PROMPT,
        small_model=True,
    ),
)


@dataclass
class FoundAgents:
    agents: list[AgentDefinition] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def get(self, name: str) -> AgentDefinition | None:
        return next((a for a in self.agents if a.name == name), None)


def agent_dirs(cwd: str, config_dir: str) -> list[tuple[str, str]]:
    """``(scope, directory)`` in precedence order."""
    return [
        ("project", os.path.join(cwd, ".ama", "agents")),
        ("project", os.path.join(cwd, ".claude", "agents")),
        ("user", os.path.join(config_dir, "agents")),
    ]


def _tools(value: str | list[str] | None, path: str, line: int) -> tuple[str, ...] | None:
    if value is None:
        return None
    # Claude Code's Bash(git log:*) names the tool bash: the parenthesized part is dropped
    if isinstance(value, list):
        items = [re.sub(r"\([^)]*\)", "", v) for v in value]
    else:
        items = re.split(r"[,\s]+", re.sub(r"\([^)]*\)", "", value))
    out: list[str] = []
    for raw in items:
        name = raw.strip()
        if not name:
            continue
        if name.startswith("mcp__"):  # Claude Code MCP tools: ama has none; skip quietly
            continue
        mapped = CLAUDE_TOOLS.get(name.lower(), name.lower())
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", mapped):
            raise FrontMatterError(path, line, f"unknown tool name {raw!r} in 'tools'")
        if mapped not in out:
            out.append(mapped)
    return tuple(out)


def load_definition(path: str, scope: str) -> AgentDefinition:
    """One ``<name>.md``; raises ``InvalidArguments`` with ``path:line: what``."""
    doc = parse_file(path, MAX_BYTES)
    stem = os.path.splitext(os.path.basename(path))[0]
    name = (text_field(doc, "name", path) or stem).strip()
    if not NAME.match(name):
        raise FrontMatterError(path, doc.line_of("name"), f"the name {name!r} must be lowercase letters, digits and hyphens")
    if name.startswith("acp:") or name in EXTERNAL:
        raise FrontMatterError(path, doc.line_of("name"), f"the name {name!r} is reserved for external agents")
    description = (text_field(doc, "description", path) or "").strip()
    if not description:
        raise FrontMatterError(path, doc.line_of("description"), "missing or empty 'description' (when to use this agent)")
    model = (text_field(doc, "model", path) or "").strip() or None
    if model == "inherit":
        model = None
    mode = (text_field(doc, "permissionMode", path) or "").strip() or None
    if mode is not None:
        from ama.permissions._types import MODES

        claude = {"acceptEdits": "auto-edit", "bypassPermissions": "full-auto", "default": "default", "plan": "plan"}
        mode = claude.get(mode, mode)
        if mode not in MODES:
            raise FrontMatterError(path, doc.line_of("permissionMode"), f"unknown permissionMode {mode!r}; expected one of {', '.join(MODES)}")
    tools = _tools(doc.meta.get("tools"), path, doc.line_of("tools"))
    return AgentDefinition(name, description, tools, model, mode, doc.body.strip(), scope, path)


def discover_agents(cwd: str, config_dir: str) -> FoundAgents:
    found = FoundAgents()
    seen: dict[str, AgentDefinition] = {}
    for scope, d in agent_dirs(cwd, config_dir):
        try:
            names = sorted(n for n in os.listdir(d) if n.endswith(".md") and not n.startswith("."))
        except OSError:
            continue
        for n in names:
            path = os.path.join(d, n)
            if not os.path.isfile(path):
                continue
            try:
                agent = load_definition(path, scope)
            except InvalidArguments as e:
                found.warnings.append(f"agent definition ignored: {e.message}")
                continue
            if agent.name in seen:
                winner = seen[agent.name]
                found.warnings.append(f"agent {agent.name!r} at {path} is shadowed by {winner.location}")
                continue
            seen[agent.name] = agent
            found.agents.append(agent)
    for b in BUILTINS:
        if b.name not in seen:
            found.agents.append(b)
    return found


def is_external(name: str) -> bool:
    return name.startswith("acp:") or name in EXTERNAL


__all__ = ["AgentDefinition", "BUILTINS", "FoundAgents", "READ_ONLY_TOOLS", "discover_agents", "is_external", "load_definition"]
