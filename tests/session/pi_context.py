"""How pi builds the model context of a session file, re-implemented from pi's documented
behaviour (its session format v3), to check that ama's files stay readable by pi.

pi reads every line as JSON (skipping lines that are not), drops the header, takes the
**last entry of the file** as the leaf, and walks ``parentId`` up to the root.  On that path:
``message`` entries give their message, ``custom_message`` a ``custom`` message,
``branch_summary`` (with a summary) a ``branchSummary`` message; everything else (``custom``,
``label``, ``model_change``...) stays out.  With a ``compaction`` on the path, the latest one's
summary comes first, then the path from its ``firstKeptEntryId`` up to it, then the rest.
A line without an ``id`` (ama's old bare ``leaf`` line) is still an entry to pi: as the last
line it is a leaf with no parent, and the context is empty.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def pi_entries(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").strip().split("\n"):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    if not out or out[0].get("type") != "session" or not isinstance(out[0].get("id"), str):
        return []
    return [e for e in out if e.get("type") != "session"]


def pi_context(path: Path) -> list[dict[str, Any]]:
    entries = pi_entries(path)
    if not entries:
        return []
    by_id = {e.get("id"): e for e in entries}
    chain: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = entries[-1]
    while cur is not None:
        chain.insert(0, cur)
        pid = cur.get("parentId")
        cur = by_id.get(pid) if pid else None
    compaction = None
    for e in chain:
        if e.get("type") == "compaction":
            compaction = e

    messages: list[dict[str, Any]] = []

    def add(e: dict[str, Any]) -> None:
        t = e.get("type")
        if t == "message":
            messages.append(e["message"])
        elif t == "custom_message":
            messages.append({"role": "custom", "customType": e["customType"], "content": e["content"]})
        elif t == "branch_summary" and e.get("summary"):
            messages.append({"role": "branchSummary", "summary": e["summary"]})

    if compaction is None:
        for e in chain:
            add(e)
        return messages
    messages.append({"role": "compactionSummary", "summary": compaction["summary"]})
    at = next(i for i, e in enumerate(chain) if e is compaction)
    kept = False
    for e in chain[:at]:
        kept = kept or e.get("id") == compaction.get("firstKeptEntryId")
        if kept:
            add(e)
    for e in chain[at + 1 :]:
        add(e)
    return messages


def comparable(messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What both readers must agree on: role and content of every non-system message
    (pi passes ama's system messages through in place; ama folds them first)."""
    out: list[tuple[Any, ...]] = []
    for m in messages:
        role = m.get("role")
        if role == "system":
            continue
        if role in ("compactionSummary", "branchSummary"):
            out.append((role, m["summary"]))
        elif role == "custom":
            out.append((role, m["customType"], json.dumps(m["content"], sort_keys=True)))
        else:
            out.append((role, json.dumps(m.get("content"), sort_keys=True)))
    return out
