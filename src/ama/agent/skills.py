"""Skills: folders with a ``SKILL.md`` the model loads when a task calls for them.

Discovery (first hit of a name wins; project before user; see docs/skills.md):

* project: ``<cwd>/.ama/skills/<name>/SKILL.md``, ``<cwd>/.claude/skills/<name>/SKILL.md``
* user:    ``<config dir>/skills/<name>/SKILL.md``

``SKILL.md`` starts with front matter: ``name`` (lowercase letters, digits and single
hyphens, at most 64 characters, equal to the folder's name) and ``description`` (what it is
for and when to use it, at most 1024 characters); ``disable-model-invocation: true`` keeps a
skill out of the model's list (``/skill:<name>`` still works).  Only names and descriptions
go into the system prompt (within ``LISTING_BUDGET`` characters); the model loads a skill's
body with the ``skill`` tool, and reads the files next to it by path with ``read``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ama.agent.frontmatter import FrontMatterError, parse_file, text_field
from ama.errors import InvalidArguments

NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_BYTES = 256 * 1024
LISTING_BUDGET = 8000
MAX_FILES_LISTED = 50


def skill_dirs(cwd: str, config_dir: str) -> list[tuple[str, str]]:
    """``(scope, directory)`` in precedence order."""
    return [
        ("project", os.path.join(cwd, ".ama", "skills")),
        ("project", os.path.join(cwd, ".claude", "skills")),
        ("user", os.path.join(config_dir, "skills")),
    ]


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    #: the SKILL.md path
    location: str
    scope: str  # "project" | "user"
    body: str
    model_invocable: bool = True

    @property
    def base_dir(self) -> str:
        return os.path.dirname(self.location)

    def to_json(self) -> dict:
        out: dict = {"name": self.name, "description": self.description, "location": self.location, "scope": self.scope}
        if not self.model_invocable:
            out["disableModelInvocation"] = True
        return out


@dataclass
class FoundSkills:
    skills: list[Skill] = field(default_factory=list)
    #: ``{location, error}`` of SKILL.md files that could not be loaded
    errors: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def check_name(name: str) -> str | None:
    if not name:
        return "the name is empty"
    if len(name) > MAX_NAME:
        return f"the name {name!r} is longer than {MAX_NAME} characters"
    if not NAME.match(name):
        return f"the name {name!r} must be lowercase letters, digits and single hyphens (e.g. pdf-forms)"
    return None


def load_skill(path: str, scope: str) -> Skill:
    """One ``SKILL.md``; raises ``InvalidArguments`` with ``path:line: what``."""
    folder = os.path.basename(os.path.dirname(path))
    doc = parse_file(path, MAX_BYTES)
    name = text_field(doc, "name", path)
    if name is None:
        raise FrontMatterError(path, 1, f"missing 'name' (use name: {folder})")
    err = check_name(name)
    if err:
        raise FrontMatterError(path, doc.line_of("name"), err)
    if name != folder:
        raise FrontMatterError(path, doc.line_of("name"), f"the name {name!r} differs from its folder {folder!r}")
    description = (text_field(doc, "description", path) or "").strip()
    if not description:
        raise FrontMatterError(path, doc.line_of("description"), "missing or empty 'description' (what the skill is for and when to use it)")
    if len(description) > MAX_DESCRIPTION:
        raise FrontMatterError(path, doc.line_of("description"), f"the description is longer than {MAX_DESCRIPTION} characters ({len(description)})")
    flag = (text_field(doc, "disable-model-invocation", path) or "false").strip().lower()
    if flag not in ("true", "false"):
        raise FrontMatterError(path, doc.line_of("disable-model-invocation"), f"'disable-model-invocation' must be true or false, got {flag!r}")
    return Skill(name, description, path, scope, doc.body.strip("\n").rstrip(), flag != "true")


def discover_skills(cwd: str, config_dir: str) -> FoundSkills:
    found = FoundSkills()
    seen: dict[str, Skill] = {}
    for scope, d in skill_dirs(cwd, config_dir):
        try:
            folders = sorted(n for n in os.listdir(d) if not n.startswith("."))
        except OSError:
            continue
        for folder in folders:
            path = os.path.join(d, folder, "SKILL.md")
            if not os.path.isfile(path):
                continue
            try:
                skill = load_skill(path, scope)
            except InvalidArguments as e:
                found.errors.append({"location": path, "error": e.message})
                found.warnings.append(f"skill ignored: {e.message}")
                continue
            if skill.name in seen:
                winner = seen[skill.name]
                found.warnings.append(
                    f"skill {skill.name!r} at {path} is shadowed by {winner.location} ({winner.scope} wins)"
                )
                continue
            seen[skill.name] = skill
            found.skills.append(skill)
    return found


def listing(skills: list[Skill], budget: int = LISTING_BUDGET) -> str:
    """The system-prompt section: names and descriptions only, within ``budget`` characters
    (skills past it are named without their description)."""
    shown = [s for s in skills if s.model_invocable]
    if not shown:
        return ""
    head = (
        "# Skills\n"
        "Skills are instructions for particular tasks. When a task matches a skill's description, "
        "call the `skill` tool with its name before you start, then follow it; read files it mentions "
        "by path with `read`.\n"
    )
    lines: list[str] = []
    used = len(head)
    rest: list[str] = []
    for s in shown:
        line = f"- {s.name}: {' '.join(s.description.split())}"
        if not rest and used + len(line) + 1 <= budget:
            lines.append(line)
            used += len(line) + 1
        else:
            rest.append(s.name)
    if rest:
        lines.append(f"- (descriptions left out to keep this list short) {', '.join(rest)}")
    return head + "\n".join(lines)


def _files(skill: Skill) -> list[str]:
    out: list[str] = []
    for root, dirs, files in os.walk(skill.base_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for f in sorted(files):
            rel = os.path.relpath(os.path.join(root, f), skill.base_dir)
            if rel != "SKILL.md" and not f.startswith("."):
                out.append(rel)
            if len(out) > MAX_FILES_LISTED:
                return out
    return out


def skill_text(skill: Skill, args: str = "") -> str:
    """What the model reads for a skill: its body, where it lives, the files next to it
    and (for ``/skill:<name> args``) the user's request."""
    parts = [f'<skill name="{skill.name}" location="{skill.location}">']
    parts.append(f"Paths in this skill are relative to {skill.base_dir}.")
    files = _files(skill)
    if files:
        more = " …" if len(files) > MAX_FILES_LISTED else ""
        parts.append("Files: " + ", ".join(files[:MAX_FILES_LISTED]) + more)
    parts.append("")
    parts.append(skill.body)
    parts.append("</skill>")
    text = "\n".join(parts)
    args = args.strip()
    return f"{text}\n\n{args}" if args else text


__all__ = ["FoundSkills", "Skill", "check_name", "discover_skills", "listing", "load_skill", "skill_dirs", "skill_text"]
