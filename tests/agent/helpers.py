"""Helpers for agent tests: scripted models, normalized event logs, in-process agents."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from ama.agent.compose import AgentOptions, build_agent

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
HEX32 = re.compile(r"\b[0-9a-f]{32}\b")
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def write_script(path: Path, turns: list[Any], **extra: Any) -> str:
    path.write_text(json.dumps({"turns": turns, **extra}))
    return f"scripted/{path}"


def normalize(events: list[dict], *, root: str) -> list[dict]:
    """Events with ids, times, durations and paths replaced by stable placeholders."""
    ids: dict[str, str] = {}

    def ident(value: str, kind: str) -> str:
        if value not in ids:
            ids[value] = f"<{kind}{len([k for k in ids.values() if k.startswith('<' + kind)]) + 1}>"
        return ids[value]

    def walk(obj: Any, key: str = "") -> Any:
        if isinstance(obj, dict):
            # a checkpoint record keeps mtimeNs only when the file is older than the racy
            # window (checkpoints/tracker.py), which depends on how busy the machine is
            return {k: walk(v, k) for k, v in obj.items() if k != "mtimeNs"}
        if isinstance(obj, list):
            return [walk(v, key) for v in obj]
        if isinstance(obj, str):
            if key in ("id", "parentId", "targetId", "entryId", "userEntryId", "fromId", "firstKeptEntryId", "leafId") and re.fullmatch(r"[0-9a-f]{8}", obj):
                return ident(obj, "e")
            s = UUID.sub(lambda m: ident(m.group(), "s"), obj)
            s = HEX32.sub(lambda m: ident(m.group(), "x"), s)
            s = ISO.sub("<time>", s)
            s = re.sub(r"\bentry [0-9a-f]{8}\b", "entry <id>", s)
            s = re.sub(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z", "<filetime>", s)
            s = re.sub(r"Date: \d{4}-\d\d-\d\d", "Date: <date>", s)
            s = re.sub(r"Platform: [^\n]*", "Platform: <platform>", s)
            return s.replace(root, "<root>")
        if isinstance(obj, int | float) and key in ("timestamp", "durationMs", "firstByteMs", "delayMs"):
            return 0
        return obj

    out = []
    for ev in events:
        ev = walk(ev)
        if ev.get("type") == "entry_appended" and ev["entry"].get("customType") == "ama.request":
            ev["entry"]["data"] = {k: v for k, v in ev["entry"]["data"].items() if k != "startedAt"}
        out.append(ev)
    return out


def compare_golden(name: str, events: list[dict], *, root: str) -> None:
    """Compare with tests/fixtures/agent/<name>.jsonl; UPDATE_GOLDEN=1 rewrites it."""
    from tests.conftest import FIXTURES

    path = FIXTURES / "agent" / f"{name}.jsonl"
    lines = [json.dumps(e, sort_keys=True, ensure_ascii=False) for e in normalize(events, root=root)]
    text = "\n".join(lines) + "\n"
    if os.environ.get("UPDATE_GOLDEN") == "1" or not path.exists():
        path.write_text(text)
    assert text.splitlines() == path.read_text().splitlines()


async def make_agent(cwd: Path, model: str, **kw: Any):
    opts = AgentOptions(cwd=str(cwd), model=model, **kw)
    agent, warnings = build_agent(opts)
    events: list[dict] = []
    agent.subscribe(events.append)
    return agent, events
