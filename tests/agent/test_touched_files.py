"""``touched_files`` (resume) resolves each path once and reads each timestamp once: the
same answer as resolving and reading them at every call and result."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from ama.agent.resume_reads import touched_files
from ama.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from ama.session.entries import MessageEntry, UnknownEntry, iso_to_ms
from ama.tools import resolve_path

PATHS = ["a.txt", "./a.txt", "sub/../a.txt", "~/x", "/abs/b", "b", 7, None]
TOOLS = ["read", "write", "edit", "grep", "bash"]


def reference(branch: list, cwd: str) -> dict[str, int]:
    calls: dict[str, str] = {}
    out: dict[str, int] = {}
    for e in branch:
        if not isinstance(e, MessageEntry):
            continue
        m = e.message
        if isinstance(m, AssistantMessage):
            for b in m.content:
                if isinstance(b, ToolCall) and b.name in ("read", "write", "edit") and isinstance(b.arguments.get("path"), str):
                    calls[b.id] = resolve_path(cwd, b.arguments["path"])
        elif isinstance(m, ToolResultMessage) and not m.is_error and m.tool_call_id in calls:
            path = calls[m.tool_call_id]
            out.pop(path, None)
            out[path] = iso_to_ms(e.timestamp)
    return out


step = st.tuples(st.integers(0, 4), st.integers(0, 100), st.integers(0, 100))


@settings(max_examples=300, deadline=None)
@given(steps=st.lists(step, max_size=40))
def test_property_the_same_files_and_times(steps: list[tuple[int, int, int]]) -> None:
    branch: list = []
    calls: list[str] = []
    for n, (kind, a, b) in enumerate(steps):
        ts = "" if b % 11 == 0 else f"2026-01-01T00:{n % 60:02d}:{b % 60:02d}.000Z"
        if kind == 0:
            cid = f"c{n}"
            calls.append(cid)
            path = PATHS[a % len(PATHS)]
            args = {} if path is None else {"path": path}
            msg = AssistantMessage(content=[TextContent(text="t"), ToolCall(id=cid, name=TOOLS[b % len(TOOLS)], arguments=args)])
            branch.append(MessageEntry(f"e{n}", None, ts, message=msg))
        elif kind in (1, 2) and calls:
            res = ToolResultMessage(tool_call_id=calls[a % len(calls)], is_error=b % 5 == 0)
            branch.append(MessageEntry(f"e{n}", None, ts, message=res))
        elif kind == 3:
            branch.append(MessageEntry(f"e{n}", None, ts, message=UserMessage(content="u")))
        else:
            raw = {"type": "message", "id": f"e{n}", "message": {"role": "futureRole"}}
            branch.append(UnknownEntry(id=f"e{n}", parent_id=None, timestamp=ts, raw=raw))
    cwd = "/work/proj"
    got = touched_files(branch, cwd)
    assert got == reference(branch, cwd)
    assert list(got) == list(reference(branch, cwd))  # the order of the latest use
    assert all(os.path.isabs(p) for p in got)
