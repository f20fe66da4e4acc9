"""Plans: the ``<proposed_plan>`` block, ``PlanData``, plan files and the plan-mode texts.

Pure functions over plain data (the controller that drives them is ``agent/plan_mode.py``);
docs/plan.md is the normative description.

    block = find_plan_block(reply_text)        # the Markdown inside <proposed_plan>…</proposed_plan>
    steps = parse_steps(block)                 # [PlanStep(id="1", text="…", depends_on=[], agent=None)]
    plan_file_name("Fix the parser", 2)        # "fix-the-parser-v2.md"
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

PLAN_TYPE = "ama.plan"
STATE_TYPE = "ama.plan_state"
MODE_NOTE = "ama.plan_mode"
EXIT_NOTE = "ama.plan_mode_exit"
APPROVED_NOTE = "ama.plan_approved"
TODO_TYPE = "ama.todo"

STATUSES = ("proposed", "approved", "rejected", "superseded")
DECISIONS = ("approve", "approve_fresh", "approve_compact", "revise", "reject")
UNATTENDED = ("stop", "approve")
APPROVED_PROMPT = "The plan is approved. Go ahead."
#: prompts between two short reminders of plan mode
REMIND_EVERY = 5

_BLOCK = re.compile(r"<proposed_plan>\s*\n?(.*?)\n?\s*</proposed_plan>", re.S)
_STEP = re.compile(r"^(?:(\d+)[.)]|[-*](?: \[[ xX]\])?)\s+(.+?)\s*$")
_ATTRS = re.compile(r"\s*\{([^{}]*)\}\s*$")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


@dataclass
class PlanStep:
    id: str
    text: str
    depends_on: list[str] = field(default_factory=list)
    agent: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "text": self.text}
        if self.depends_on:
            out["dependsOn"] = list(self.depends_on)
        if self.agent:
            out["agent"] = self.agent
        return out


@dataclass
class PlanData:
    """One version of a plan, as stored in ``ama.plan`` entries and sent on the wire."""

    id: str
    version: int
    status: str
    title: str
    markdown: str
    steps: list[PlanStep]
    source_entry_id: str | None = None
    file_path: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "version": self.version,
            "status": self.status,
            "title": self.title,
            "markdown": self.markdown,
            "steps": [s.to_json() for s in self.steps],
            "sourceEntryId": self.source_entry_id,
        }
        if self.file_path:
            out["filePath"] = self.file_path
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PlanData:
        steps = [
            PlanStep(str(s.get("id", "")), str(s.get("text", "")), [str(x) for x in s.get("dependsOn") or []], s.get("agent"))
            for s in d.get("steps") or []
            if isinstance(s, dict)
        ]
        return cls(
            id=str(d.get("id", "")),
            version=int(d.get("version", 1)),
            status=str(d.get("status", "proposed")),
            title=str(d.get("title", "") or title_of(str(d.get("markdown", "")))),
            markdown=str(d.get("markdown", "")),
            steps=steps,
            source_entry_id=d.get("sourceEntryId"),
            file_path=d.get("filePath"),
        )


def find_plan_block(text: str) -> str | None:
    """The Markdown of the last ``<proposed_plan>`` block in ``text`` (None: no block, or
    an empty one)."""
    blocks = [m.group(1).strip() for m in _BLOCK.finditer(text)]
    blocks = [b for b in blocks if b]
    return blocks[-1] if blocks else None


def title_of(markdown: str) -> str:
    """The first heading, else the first non-empty line (without list markers), else "plan"."""
    lines = [ln.strip() for ln in markdown.splitlines() if ln.strip()]
    for ln in lines:
        m = _HEADING.match(ln)
        if m:
            return m.group(1)
    for ln in lines:
        m = _STEP.match(ln)
        return (m.group(2) if m else ln)[:80]
    return "plan"


def _attrs(text: str) -> tuple[str, dict[str, str]]:
    m = _ATTRS.search(text)
    if not m:
        return text, {}
    out: dict[str, str] = {}
    for part in m.group(1).split():
        key, sep, value = part.partition("=")
        if not sep:
            return text, {}  # not an attribute group: keep the braces as text
        out[key] = value
    return text[: m.start()].rstrip(), out


def parse_steps(markdown: str) -> list[PlanStep]:
    """Top-level list items (``1. …``, ``- …``, ``- [ ] …``, not indented) are the steps.
    A trailing ``{id=… dependsOn=a,b agent=…}`` sets a step's id, dependencies and suggested
    agent; without ``id`` a numbered step's id is its number, a bulleted one its position."""
    steps: list[PlanStep] = []
    in_code = False
    for raw in markdown.splitlines():
        if raw.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code or raw[:1].isspace():
            continue
        m = _STEP.match(raw)
        if not m:
            continue
        text, attrs = _attrs(m.group(2))
        sid = attrs.get("id") or m.group(1) or str(len(steps) + 1)
        deps = [d for d in attrs.get("dependsOn", "").split(",") if d]
        steps.append(PlanStep(sid, text, deps, attrs.get("agent") or None))
    seen: set[str] = set()
    for i, s in enumerate(steps):  # ids stay unique: a repeated id gets its position
        if s.id in seen:
            s.id = f"{s.id}-{i + 1}"
        seen.add(s.id)
    return steps


def slug(title: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return s[:60].rstrip("-") or "plan"


def plan_file_name(title: str, version: int) -> str:
    return f"{slug(title)}-v{version}.md"


def todo_items(steps: list[PlanStep]) -> list[dict[str, Any]]:
    """The todo list an approved plan becomes: the first step in progress, ``planStep`` set."""
    return [
        {"id": s.id, "text": s.text, "status": "in_progress" if i == 0 else "pending", "planStep": s.id}
        for i, s in enumerate(steps)
    ]


_DONE = re.compile(r"^\s*\[DONE:\s*([^\]]+?)\s*\]\s*$", re.M)


def done_marks(text: str) -> list[str]:
    """Step ids from ``[DONE:<step>]`` lines of a reply."""
    return _DONE.findall(text)


def advance(items: list[dict[str, Any]], done: list[str]) -> list[dict[str, Any]] | None:
    """``items`` with the steps in ``done`` marked done and the next pending one in progress;
    None when nothing changed."""
    out = [dict(i) for i in items]
    changed = False
    for d in done:
        for it in out:
            if d in (it.get("planStep"), it.get("id")) and it.get("status") != "done":
                it["status"] = "done"
                changed = True
    if not changed:
        return None
    if not any(i.get("status") == "in_progress" for i in out):
        nxt = next((i for i in out if i.get("status") == "pending"), None)
        if nxt is not None:
            nxt["status"] = "in_progress"
    return out


PLAN_MODE_FULL = """You are in plan mode. Only read-only tools run (read, ls, find, grep, bash_output, todo get); \
writes, edits and other commands are refused until the user approves a plan.
Investigate as much as you need, then end your reply with the plan in one block:

<proposed_plan>
# <short title>
<context: what you found and the approach>

1. <first step>
2. <second step> {dependsOn=1}
3. <a step a helper agent could take> {id=docs agent=general}
</proposed_plan>

Top-level list items are the steps; a trailing {id=… dependsOn=… agent=…} is optional. The user \
approves, rejects or asks for changes; you cannot approve a plan yourself. When asked to revise, \
reply with the whole new plan in a new block."""

PLAN_MODE_SHORT = (
    "Reminder: still in plan mode (read-only tools only). End with the plan in a <proposed_plan> block."
)

PLAN_MODE_EXIT = "Plan mode is off: the tools you are permitted to use may change files again."


def approved_note(plan: PlanData, *, has_todo_tool: bool) -> str:
    where = f"\nThe plan is saved in {plan.file_path}." if plan.file_path else ""
    if has_todo_tool:
        progress = (
            "The todo list holds its steps (planStep = step id); keep it current with the todo tool: "
            "mark each step done as you finish it and the next one in_progress."
        )
    else:
        progress = "After finishing each step, write a line `[DONE:<step id>]` on its own."
    return f"The user approved plan {plan.id} (version {plan.version}).{where}\n{progress}\n\n{plan.markdown}"
