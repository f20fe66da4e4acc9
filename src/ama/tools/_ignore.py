"""Gitignore-style globs and ignore files, with ripgrep's rules (for the no-ripgrep fallback).

``find`` and ``grep`` use ``rg`` when it is installed; without it they walk the tree in
Python and must list the same files.  This module reproduces what ripgrep (its ``ignore``
crate) decides for one path:

1. ``-g`` globs (``Overrides``) first: a matching glob includes (or, with ``!``, excludes)
   the path whatever else says; with any include glob, a file matching none is excluded.
2. Ignore files, by kind in this order: ``.rgignore``, ``.ignore``, ``.gitignore``,
   ``.git/info/exclude``; for each kind the deepest directory with a matching rule decides,
   and within a file the last matching rule.  ``.gitignore`` / exclude files above the
   directory that holds ``.git`` do not count.  Ancestors of the search root count.
3. Hidden names (starting with ``.``) are skipped unless a rule above included them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

IGNORE_KINDS = (".rgignore", ".ignore", ".gitignore", "exclude")


def glob_to_regex(glob: str) -> str:
    """Regex source for a gitignore-style glob over ``/``-separated relative paths
    (``*`` and ``?`` stay within a component, ``**`` spans components, ``[...]``, ``{a,b}``)."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if glob.startswith("**", i):
            starts_component = i == 0 or glob[i - 1] == "/"
            if starts_component and i + 2 == n:
                out.append(".*")
                i += 2
                continue
            if starts_component and glob[i + 2] == "/":
                out.append("(?:.*/)?")
                i += 3
                continue
            out.append("[^/]*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = glob.find("]", i + 2 if glob[i + 1 : i + 2] in ("!", "^") else i + 1)
            if j == -1:
                out.append(re.escape(c))
                i += 1
                continue
            body = glob[i + 1 : j]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = j + 1
        elif c == "{":
            j = glob.find("}", i)
            if j == -1:
                out.append(re.escape(c))
                i += 1
                continue
            alts = glob[i + 1 : j].split(",")
            out.append("(?:" + "|".join(glob_to_regex(a) for a in alts) + ")")
            i = j + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool

    def matches(self, rel: str, is_dir: bool) -> bool:
        return (is_dir or not self.dir_only) and self.regex.fullmatch(rel) is not None


def parse_rule(line: str, *, ignore_case: bool = False) -> Rule | None:
    """One line of an ignore file (or one ``-g`` glob), or None for blanks and comments."""
    line = line.rstrip("\r\n")
    if not line or line.startswith("#"):
        return None
    if line.endswith(" ") and not line.endswith("\\ "):
        line = line.rstrip(" ")
        if not line:
            return None
    negate = line.startswith("!")
    if negate or line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    return compile_glob(line, negate=negate, ignore_case=ignore_case)


def compile_glob(glob: str, *, negate: bool = False, ignore_case: bool = False) -> Rule | None:
    """A gitignore-style glob: without ``/`` it matches a name at any depth, with ``/`` the
    path relative to the base (a leading ``/`` only anchors); a trailing ``/`` means directories."""
    dir_only = glob.endswith("/")
    glob = glob.rstrip("/")
    if not glob:
        return None
    glob = glob.lstrip("/") if "/" in glob else "**/" + glob
    flags = re.IGNORECASE if ignore_case else 0
    return Rule(re.compile(glob_to_regex(glob), flags | re.DOTALL), negate, dir_only)


def parse_rules(text: str) -> list[Rule]:
    return [r for r in (parse_rule(line) for line in text.split("\n")) if r is not None]


def last_match(rules: list[Rule], rel: str, is_dir: bool) -> bool | None:
    """True: ignored, False: re-included (``!``), None: no rule matches."""
    for rule in reversed(rules):
        if rule.matches(rel, is_dir):
            return not rule.negate
    return None


class Overrides:
    """ripgrep's ``-g`` globs, relative to the search root: ``glob`` includes, ``!glob`` excludes."""

    def __init__(self, globs: list[str]) -> None:
        self.rules = [r for r in (parse_rule(g) for g in globs) if r is not None]
        self.has_includes = any(not r.negate for r in self.rules)

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True: take it, False: skip it, None: the globs do not decide."""
        m = last_match(self.rules, rel, is_dir)  # a plain glob is an "ignore" rule inverted
        if m is not None:
            return m
        if self.has_includes and not is_dir:
            return False
        return None


@dataclass
class DirRules:
    """The ignore files of one directory."""

    path: str
    has_git: bool
    kinds: dict[str, list[Rule]]

    @classmethod
    def load(cls, path: str) -> DirRules:
        kinds: dict[str, list[Rule]] = {}
        for kind in IGNORE_KINDS:
            name = os.path.join(".git", "info", "exclude") if kind == "exclude" else kind
            try:
                with open(os.path.join(path, name), encoding="utf-8", errors="replace") as f:
                    rules = parse_rules(f.read())
            except OSError:
                continue
            if rules:
                kinds[kind] = rules
        return cls(path, os.path.exists(os.path.join(path, ".git")), kinds)


def ancestors_rules(root: str) -> list[DirRules]:
    """Ignore files of the directories above ``root``, nearest first."""
    out: list[DirRules] = []
    path = root
    while True:
        parent = os.path.dirname(path)
        if parent == path:
            return out
        out.append(DirRules.load(parent))
        path = parent


def ignored_by_files(stack: list[DirRules], path: str, is_dir: bool) -> bool | None:
    """The ignore files' verdict on absolute ``path``; ``stack`` is nearest directory first."""
    for kind in IGNORE_KINDS:
        git_kind = kind in (".gitignore", "exclude")
        for d in stack:
            rules = d.kinds.get(kind)
            if rules:
                m = last_match(rules, os.path.relpath(path, d.path).replace(os.sep, "/"), is_dir)
                if m is not None:
                    return m
            if git_kind and d.has_git:
                break
    return None
