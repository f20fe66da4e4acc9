"""The prompt catalog of one agent: the prompt templates and skills it found, how a
``/name args`` prompt expands, what ``get_commands`` / ``/help`` list, and the ``skill`` tool.

Expansion (``PromptCatalog.expand``) runs on every prompt before the run starts — in the
interactive UI, ``-p`` and RPC ``prompt`` alike — so ``before_agent_start.prompt``, the run
record and the user message carry the expanded text:

* ``/skill:<name> [args]`` -> the skill's body (``skills.skill_text``); unknown name: error
* ``/<template> [args]``   -> the template's body with the arguments substituted
* ``/<built-in>``          -> error outside the interactive UI (it is a UI command)
* anything else            -> unchanged (``/usr/bin is slow`` is a normal prompt)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ama.agent.commands import COMMANDS, all_names
from ama.agent.skills import FoundSkills, Skill, discover_skills, listing, skill_text
from ama.agent.templates import Found, PromptTemplate, discover_templates, expand
from ama.errors import InvalidArguments

SLASH = re.compile(r"^/([A-Za-z0-9][A-Za-z0-9_.:-]*)(?:[ \t\r\n]+(.*))?$", re.S)


@dataclass
class PromptCatalog:
    templates: list[PromptTemplate] = field(default_factory=list)
    skills: list[Skill] = field(default_factory=list)
    #: SKILL.md files that could not be loaded: ``{location, error}``
    skill_errors: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, cwd: str, config_dir: str) -> PromptCatalog:
        t: Found = discover_templates(cwd, config_dir, reserved=frozenset(all_names()))
        s: FoundSkills = discover_skills(cwd, config_dir)
        return cls(t.templates, s.skills, s.errors, t.warnings + s.warnings)

    def template(self, name: str) -> PromptTemplate | None:
        return next((t for t in self.templates if t.name == name), None)

    def skill(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)

    def names(self) -> list[str]:
        """What a user may type after ``/`` besides the built-ins."""
        return [t.name for t in self.templates] + [f"skill:{s.name}" for s in self.skills]

    def expand(self, text: str) -> str:
        m = SLASH.match(text)
        if m is None:
            return text
        name, args = m.group(1), m.group(2) or ""
        if name.startswith("skill:"):
            skill = self.skill(name[6:])
            if skill is None:
                have = ", ".join(s.name for s in self.skills) or "none installed"
                raise InvalidArguments(f"no skill named {name[6:]!r} (skills: {have}; see ama skills list)")
            return skill_text(skill, args)
        template = self.template(name)
        if template is not None:
            return expand(template, args)
        if name in all_names():
            raise InvalidArguments(
                f"/{name} is a command of the interactive UI; a prompt here expands only prompt templates "
                "and /skill:<name> (see ama templates list)"
            )
        return text

    def commands(self) -> list[dict[str, Any]]:
        """``get_commands``: built-ins (aliases included), then templates, then skills."""
        out: list[dict[str, Any]] = [
            {"name": n, "description": c.description, "source": "builtin"} for c in COMMANDS for n in c.names
        ]
        for t in self.templates:
            out.append({"name": t.name, "description": t.description, "source": "template", "location": t.path})
        for s in self.skills:
            out.append({"name": f"skill:{s.name}", "description": s.description, "source": "skill", "location": s.location})
        return out

    def acp_commands(self) -> list[dict[str, Any]]:
        """ACP ``available_commands_update``: what an ACP prompt can run -- the templates and
        the skills, which expand in ``AgentSession.start`` like any other prompt.  The
        built-ins drive the terminal UI (its pickers, its screen) and are not offered."""
        out: list[dict[str, Any]] = []
        for t in self.templates:
            if not t.error:
                item: dict[str, Any] = {"name": t.name, "description": t.description}
                if t.argument_hint:
                    item["input"] = {"hint": t.argument_hint}
                out.append(item)
        for s in self.skills:
            out.append({"name": f"skill:{s.name}", "description": " ".join(s.description.split())[:200]})
        return out

    def help_lines(self) -> list[str]:
        out = []
        if self.templates:
            out.append("Prompt templates:")
            for t in self.templates:
                usage = f"/{t.name}" + (f" {t.argument_hint}" if t.argument_hint else "")
                out.append(f"  {usage:<19} {t.error and '(broken) ' or ''}{t.description}")
        if self.skills:
            out.append("Skills:")
            for s in self.skills:
                out.append(f"  /skill:{s.name:<12} {' '.join(s.description.split())[:90]}")
        return out

    def system_prompt_section(self) -> str:
        return listing(self.skills)

    def model_skills(self) -> list[Skill]:
        return [s for s in self.skills if s.model_invocable]


SKILL_TOOL_DESCRIPTION = """Load a skill: its instructions, where it lives and the files next to it. The system prompt lists the skills (name: description); call this with a skill's name when a task matches its description, then follow what it says.
- name: the skill's name exactly as listed."""


def make_skill_tool(catalog: PromptCatalog) -> Any:
    """The ``skill`` tool (read-only): returns ``skills.skill_text`` of one skill."""
    from ama.tools.base import BuiltinTool, ToolError, ToolResult

    parameters = {
        "type": "object",
        "properties": {"name": {"type": "string", "description": "The skill's name."}},
        "required": ["name"],
        "additionalProperties": False,
    }

    async def run(call_id: str, args: dict, ctx: Any, on_update: Any) -> ToolResult:
        name = args["name"].strip().removeprefix("skill:")
        skill = catalog.skill(name)
        if skill is None or not skill.model_invocable:
            have = ", ".join(s.name for s in catalog.model_skills()) or "none"
            raise ToolError(f"No skill named {name!r}. Skills: {have}.")
        return ToolResult.text(skill_text(skill), {"name": skill.name, "location": skill.location})

    return BuiltinTool("skill", "Skill", SKILL_TOOL_DESCRIPTION, parameters, True, run)


__all__ = ["PromptCatalog", "make_skill_tool"]
