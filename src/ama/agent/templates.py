"""Prompt templates: Markdown files that become slash commands (``/review src/``).

Discovery (first hit of a name wins; see docs/skills.md):

* project: ``<cwd>/.ama/prompts/*.md``, ``<cwd>/.ama/commands/*.md``, ``<cwd>/.claude/commands/*.md``
* user:    ``<config dir>/prompts/*.md``

The file name without ``.md`` is the command name.  Optional front matter:
``description`` (else the body's first line), ``argument-hint``, ``model`` and
``allowed-tools`` (read and shown, never acted on: a template cannot change the model or
widen permissions).  The body may use ``$ARGUMENTS`` (everything after the name), ``$@``
(the same) and ``$1`` … ``$9`` (shell-like words; missing ones are empty).  A body with no
placeholder gets the arguments appended after a blank line.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field

from ama.agent.frontmatter import FrontMatterError, parse, read_text_file, text_field
from ama.errors import InvalidArguments

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
PLACEHOLDER = re.compile(r"\$(ARGUMENTS|@|[1-9])")
MAX_BYTES = 256 * 1024
DESCRIPTION_CHARS = 120


def template_dirs(cwd: str, config_dir: str) -> list[tuple[str, str]]:
    """``(scope, directory)`` in precedence order."""
    return [
        ("project", os.path.join(cwd, ".ama", "prompts")),
        ("project", os.path.join(cwd, ".ama", "commands")),
        ("project", os.path.join(cwd, ".claude", "commands")),
        ("user", os.path.join(config_dir, "prompts")),
    ]


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    path: str
    scope: str  # "project" | "user"
    description: str = ""
    argument_hint: str = ""
    body: str = ""
    model: str | None = None
    allowed_tools: tuple[str, ...] = ()
    #: why the file cannot be used ("path:line: ..."); invoking it reports this
    error: str | None = None

    def to_json(self) -> dict:
        out: dict = {"name": self.name, "description": self.description, "location": self.path, "scope": self.scope}
        if self.argument_hint:
            out["argumentHint"] = self.argument_hint
        if self.model:
            out["model"] = self.model
        if self.allowed_tools:
            out["allowedTools"] = list(self.allowed_tools)
        if self.error:
            out["error"] = self.error
        return out


@dataclass
class Found:
    templates: list[PromptTemplate] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _first_line(body: str) -> str:
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line if len(line) <= DESCRIPTION_CHARS else line[: DESCRIPTION_CHARS - 1] + "…"
    return ""


def load_template(path: str, scope: str) -> PromptTemplate:
    """One template file; a malformed one comes back with ``error`` set (never raises)."""
    name = os.path.basename(path)[: -len(".md")]
    try:
        text = read_text_file(path, MAX_BYTES)
    except InvalidArguments as e:
        return PromptTemplate(name, path, scope, error=e.message)
    try:
        doc = parse(text, path)
        description = text_field(doc, "description", path)
        hint = text_field(doc, "argument-hint", path) or ""
        model = text_field(doc, "model", path)
    except FrontMatterError as e:
        return PromptTemplate(name, path, scope, error=e.message)
    tools = doc.meta.get("allowed-tools") or []
    allowed = tuple(tools) if isinstance(tools, list) else tuple(t.strip() for t in tools.split(",") if t.strip())
    body = doc.body.strip("\n").rstrip()
    if not body.strip():
        return PromptTemplate(name, path, scope, error=f"{path}:{doc.body_line}: the template has no body")
    return PromptTemplate(
        name, path, scope, description or _first_line(body), hint, body, model or None, allowed
    )


def discover_templates(cwd: str, config_dir: str, *, reserved: frozenset[str] = frozenset()) -> Found:
    """Every template of the project and the user; ``reserved`` names (the built-in
    commands) are skipped with a warning, as are later duplicates of a name."""
    found = Found()
    seen: dict[str, PromptTemplate] = {}
    for scope, d in template_dirs(cwd, config_dir):
        try:
            names = sorted(n for n in os.listdir(d) if n.endswith(".md") and not n.startswith("."))
        except OSError:
            continue
        for fname in names:
            path = os.path.join(d, fname)
            if not os.path.isfile(path):
                continue
            name = fname[:-3]
            if not NAME.match(name):
                found.warnings.append(f"prompt template {path}: {name!r} is not a command name (letters, digits, . _ -)")
                continue
            if name in reserved:
                found.warnings.append(f"prompt template {path} is ignored: /{name} is a built-in command")
                continue
            if name in seen:
                found.warnings.append(f"prompt template {path} is shadowed by {seen[name].path} (/{name})")
                continue
            t = load_template(path, scope)
            if t.error:
                found.warnings.append(f"prompt template /{name}: {t.error}")
            seen[name] = t
            found.templates.append(t)
    return found


def split_args(text: str) -> list[str]:
    """Shell-like words (quotes group); unbalanced quotes fall back to whitespace."""
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def expand(template: PromptTemplate, args: str) -> str:
    """The prompt text of ``/name args``."""
    if template.error:
        raise InvalidArguments(f"cannot use /{template.name}: {template.error}")
    args = args.strip()
    words = split_args(args) if args else []
    used = False

    def sub(m: re.Match) -> str:
        nonlocal used
        used = True
        key = m.group(1)
        if key in ("ARGUMENTS", "@"):
            return args
        i = int(key) - 1
        return words[i] if i < len(words) else ""

    out = PLACEHOLDER.sub(sub, template.body)
    if args and not used:
        out = f"{out}\n\n{args}"
    return out


__all__ = ["Found", "PromptTemplate", "discover_templates", "expand", "load_template", "split_args", "template_dirs"]
