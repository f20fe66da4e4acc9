"""Permission rules: ``permissions.allow`` / ``deny`` / ``ask`` strings parsed and matched.

Syntax (tool names are case-insensitive, so Claude Code's ``Bash(npm test)`` works too)::

    grep                 every call of the tool
    bash(npm test)       exactly this command
    bash(git status:*)   this command or it followed by more words (prefix)
    bash(npm run *)      a glob: * is any text
    read(.env)           a path: no "/" means that name at any depth (and what is below it)
    edit(src/**)         relative to the workspace; ** is any number of directories, * one name
    write(/tmp/*)        absolute;  read(~/.aws/**)  under the home directory

Path rules name a family: ``read(…)`` covers read, ls, find and grep; ``edit(…)`` and
``write(…)`` cover both edit and write.  A pattern matches a path or anything below it.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from ama.errors import InvalidArguments

COMMAND_TOOLS = frozenset({"bash"})
PATH_TOOLS = frozenset({"read", "ls", "find", "grep", "edit", "write"})
FAMILIES: dict[str, frozenset[str]] = {
    "read": frozenset({"read", "ls", "find", "grep"}),
    "edit": frozenset({"edit", "write"}),
    "write": frozenset({"edit", "write"}),
}
Kind = Literal["any", "exact", "prefix", "glob", "path"]

_RULE = re.compile(r"^([A-Za-z_][\w.-]*)\s*(?:\((.*)\))?$", re.DOTALL)


def normalize_command(text: str) -> str:
    """Runs of blanks become one space (newlines stay: they separate commands)."""
    return re.sub(r"[ \t]+", " ", text.strip())


@dataclass(frozen=True)
class Rule:
    tool: str
    kind: Kind = "any"
    pattern: str = ""

    @classmethod
    def parse(cls, text: str) -> Rule:
        """Parse one rule; raises ``InvalidArguments`` saying what is wrong with it."""
        if not isinstance(text, str):
            raise InvalidArguments(f"bad rule {text!r}: a rule is a string like 'bash(npm test)'")
        m = _RULE.match(text.strip())
        if m is None:
            why = (
                "missing ')'"
                if "(" in text and not text.rstrip().endswith(")")
                else ("expected 'tool' or 'tool(pattern)'")
            )
            raise InvalidArguments(f"bad rule {text!r}: {why}")
        tool, pattern = m.group(1).lower(), m.group(2)
        if pattern is None:
            return cls(tool)
        pattern = pattern.strip()
        if not pattern:
            raise InvalidArguments(f"bad rule {text!r}: empty pattern (write '{tool}' for every call)")
        if tool in COMMAND_TOOLS:
            return cls.command(tool, pattern)
        if tool in PATH_TOOLS:
            return cls(tool, "any") if pattern in ("*", "**") else cls(tool, "path", pattern)
        raise InvalidArguments(
            f"bad rule {text!r}: {tool} takes no pattern (patterns work for bash and the file tools "
            f"{', '.join(sorted(PATH_TOOLS))}); write '{tool}' for every call"
        )

    @classmethod
    def command(cls, tool: str, pattern: str) -> Rule:
        pattern = normalize_command(pattern)
        if pattern == "*":
            return cls(tool, "any")
        if pattern.endswith(":*"):
            prefix = pattern[:-2].rstrip()
            return cls(tool, "prefix", prefix) if prefix else cls(tool, "any")
        return cls(tool, "glob" if "*" in pattern else "exact", pattern)

    def __str__(self) -> str:
        if self.kind == "any":
            return self.tool
        return f"{self.tool}({self.pattern}{':*' if self.kind == 'prefix' else ''})"

    def applies_to(self, tool: str) -> bool:
        return tool == self.tool or tool in FAMILIES.get(self.tool, ())

    @property
    def literal(self) -> str:
        """The pattern without wildcards (to ask whether a rule names a secret or danger)."""
        return self.pattern.replace("*", " ").strip()

    def matches_command(self, text: str) -> bool:
        if self.kind == "any":
            return True
        text = normalize_command(text)
        if self.kind == "exact":
            return text == self.pattern
        if self.kind == "prefix":
            return text == self.pattern or text.startswith(self.pattern + " ")
        if self.kind == "glob":
            return _glob_regex(self.pattern).fullmatch(text) is not None
        return False

    def matches_path(self, path: str | None, *, cwd: str, home: str) -> bool:
        if self.kind == "any":
            return True
        if self.kind != "path" or path is None:
            return False
        return _path_regex(self.pattern, cwd, home).match(path) is not None

    def absolute_pattern(self, *, cwd: str, home: str) -> str:
        """The path pattern with ``~`` and relative paths resolved (names stay names)."""
        p = self.pattern.rstrip("/") or "/"
        if p == "~" or p.startswith("~/"):
            return home + p[1:]
        if p.startswith("/") or "/" not in p:
            return p
        return posixpath.join(cwd, p[2:] if p.startswith("./") else p)


@lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.DOTALL)


def _translate(component: str) -> str:
    out, i = [], 0
    while i < len(component):
        c = component[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and "]" in component[i + 2 :]:
            j = component.index("]", i + 2)
            body = component[i + 1 : j]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]")
            i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@lru_cache(maxsize=512)
def _path_regex(pattern: str, cwd: str, home: str) -> re.Pattern[str]:
    p = Rule("read", "path", pattern).absolute_pattern(cwd=cwd, home=home)
    if "/" not in p:
        return re.compile("^(?:.*/)?" + _translate(p) + "(?:/.*)?$", re.DOTALL)
    body = []
    for comp in posixpath.normpath(p).split("/"):
        if comp == "":
            continue
        body.append("(?:/[^/]+)*" if comp == "**" else "/" + _translate(comp))
    return re.compile("^" + "".join(body) + "(?:/.*)?$", re.DOTALL)


@dataclass(frozen=True)
class Rules:
    """The three rule lists of a session (user and project config already merged)."""

    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()

    @classmethod
    def parse(
        cls,
        allow: list[str] | tuple[str, ...] = (),
        deny: list[str] | tuple[str, ...] = (),
        ask: list[str] | tuple[str, ...] = (),
        *,
        errors: list[str] | None = None,
    ) -> Rules:
        """Parse rule strings.  A bad rule raises ``InvalidArguments`` naming it
        (``permissions.deny[2]: bad rule 'bash(rm': missing ')'``); with ``errors`` given,
        the message is appended there and the rule skipped instead."""
        lists: dict[str, tuple[Rule, ...]] = {}
        for name, texts in (("allow", allow), ("deny", deny), ("ask", ask)):
            parsed = []
            for i, text in enumerate(texts):
                try:
                    parsed.append(Rule.parse(text))
                except InvalidArguments as e:
                    message = f"permissions.{name}[{i}]: {e.message}"
                    if errors is None:
                        raise InvalidArguments(message) from None
                    errors.append(message)
            lists[name] = tuple(parsed)
        return cls(**lists)

    @classmethod
    def from_config(cls, config: Any, *, errors: list[str] | None = None) -> Rules:
        """From anything with ``get(key)`` (``ama.config.Config``)."""
        return cls.parse(
            config.get("permissions.allow") or (),
            config.get("permissions.deny") or (),
            config.get("permissions.ask") or (),
            errors=errors,
        )
