"""Plan files: ``<workspace>/.ama/plans/<slug>-v<version>.md``, one per version of a plan.

Each file starts with the header line ``<!-- ama plan <id> version <n> -->`` followed by the
plan's Markdown.  Writing happens in ``agent/plan_mode.py``; this module finds, groups and
removes them (``ama plans list|show|rm``).  docs/plan.md is the normative description.

    plans = scan("/repo")                       # [PlanFiles(id, title, slug, versions=[...])], newest first
    match(plans, "add-a-greeting")              # by id, unique id prefix, or the file's slug
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from ama.agent.plans import title_of
from ama.errors import AmaError

HEADER = "<!-- ama plan {id} version {version} -->"
_HEADER = re.compile(r"^<!-- ama plan (\S+) version (\d+) -->\s*$")
_NAME = re.compile(r"^(.+?)-v(\d+)(?:-\d+)?\.md$")


def plans_dir(cwd: str) -> str:
    return os.path.join(cwd, ".ama", "plans")


def header(plan_id: str, version: int) -> str:
    return HEADER.format(id=plan_id, version=version)


@dataclass
class PlanVersion:
    version: int
    path: str
    markdown: str
    mtime: float

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "filePath": self.path, "modifiedMs": int(self.mtime * 1000)}


@dataclass
class PlanFiles:
    """Every file of one plan (one id), oldest version first."""

    id: str
    slug: str
    versions: list[PlanVersion] = field(default_factory=list)

    @property
    def latest(self) -> PlanVersion:
        return self.versions[-1]

    @property
    def title(self) -> str:
        return title_of(self.latest.markdown)

    def to_json(self, *, markdown: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "slug": self.slug,
            "latestVersion": self.latest.version,
            "versions": [v.to_json() for v in self.versions],
        }
        if markdown:
            out["markdown"] = self.latest.markdown
        return out


def _read(path: str) -> tuple[str, int, str] | None:
    """(id, version, markdown) of an ama plan file; None for any other file."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return None
    first, _, rest = text.partition("\n")
    m = _HEADER.match(first)
    if not m:
        return None
    return m.group(1), int(m.group(2)), rest.strip()


def _slug_of(name: str) -> str:
    m = _NAME.match(name)
    return m.group(1) if m else name[: -len(".md")]


def scan(cwd: str) -> list[PlanFiles]:
    """The plans in ``cwd``'s ``.ama/plans/``, the most recently written first.  Files without
    the ama header are not plans and are left out."""
    folder = plans_dir(cwd)
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise AmaError("io_error", f"cannot read {folder}: {exc.strerror or exc}") from None
    by_id: dict[str, PlanFiles] = {}
    for name in names:
        path = os.path.join(folder, name)
        if not name.endswith(".md") or not os.path.isfile(path):
            continue
        got = _read(path)
        if got is None:
            continue
        pid, version, markdown = got
        plan = by_id.setdefault(pid, PlanFiles(pid, _slug_of(name)))
        plan.versions.append(PlanVersion(version, path, markdown, os.path.getmtime(path)))
    for plan in by_id.values():
        plan.versions.sort(key=lambda v: (v.version, v.mtime))
        plan.slug = _slug_of(os.path.basename(plan.latest.path))  # the title may change between versions
    return sorted(by_id.values(), key=lambda p: max(v.mtime for v in p.versions), reverse=True)


def match(plans: list[PlanFiles], ref: str, cwd: str) -> PlanFiles:
    """The plan named by ``ref``: its id, a unique prefix of the id, or its slug (the file
    name without ``-v<n>.md``; the newest plan of that name)."""
    exact = [p for p in plans if p.id == ref]
    if exact:
        return exact[0]
    by_slug = [p for p in plans if p.slug == ref]
    if by_slug:
        return by_slug[0]
    prefixed = [p for p in plans if p.id.startswith(ref) or p.id.startswith("plan-" + ref)]
    if len(prefixed) == 1:
        return prefixed[0]
    if prefixed:
        ids = ", ".join(p.id for p in prefixed)
        raise AmaError("ambiguous", f"plan {ref!r} is ambiguous: {ids}")
    where = plans_dir(cwd)
    if not plans:
        raise AmaError("not_found", f"no plan {ref!r}: {where} has no plans")
    known = ", ".join(p.id for p in plans[:5]) + (", …" if len(plans) > 5 else "")
    raise AmaError("not_found", f"no plan {ref!r} in {where}; known: {known} (ama plans list)")


def pick_version(plan: PlanFiles, version: int | None) -> PlanVersion:
    if version is None:
        return plan.latest
    for v in plan.versions:
        if v.version == version:
            return v
    have = ", ".join(str(v.version) for v in plan.versions)
    raise AmaError("not_found", f"plan {plan.id} has no version {version} (versions: {have})")
