"""The projection in fewer passes gives what it gave in many: any branch of entries of
every kind (edits, compactions, rewind notes, system messages anywhere, unpaired calls),
compared with the projection as it was written (tests/session/oracles.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ama.messages import (
    UNSET,
    AssistantMessage,
    BashExecutionMessage,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ama.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    ThinkingLevelChangeEntry,
    UnknownEntry,
)
from ama.session.projection import REWIND_NOTE, project
from tests.session.oracles import reference_project

KINDS = (
    "user", "asst", "asst", "result", "result", "system", "edit", "compaction", "note", "custom_message",
    "model_change", "thinking", "bash", "branch_summary", "unknown", "custom", "label",
)  # fmt: skip

op = st.tuples(st.sampled_from(KINDS), st.integers(0, 1000), st.integers(0, 1000))


def build(ops: list[tuple[str, int, int]]) -> list[Any]:
    out: list[Any] = []
    calls: list[str] = []
    for n, (kind, a, b) in enumerate(ops):
        eid = f"e{n}"
        ts = f"2026-01-01T00:00:{n % 60:02d}.000Z"
        pick = out[a % len(out)].id if out else "none"
        if kind == "user":
            e: Any = MessageEntry(eid, None, ts, message=UserMessage(content=f"u{a}", timestamp=n))
        elif kind == "asst":
            new = [f"c{n}-{i}" for i in range(a % 3)]
            calls += new
            providers = [("p", "m"), ("p/x", "m"), ("p", "x/m"), ("", "m"), ("q", "")]
            prov, model = providers[b % len(providers)]
            e = MessageEntry(eid, None, ts, message=AssistantMessage(
                content=[TextContent(text=f"a{a}"), *(ToolCall(id=c, name="read") for c in new)],
                provider=prov, model=model, stop_reason=("stop", "toolUse", "error", "aborted")[b % 4], timestamp=n,
            ))  # fmt: skip
        elif kind == "result":
            cid = calls[a % len(calls)] if calls and b % 5 else f"stray{a}"
            e = MessageEntry(eid, None, ts, message=ToolResultMessage(tool_call_id=cid, content=[TextContent(text="r")], is_error=b % 7 == 0))
        elif kind == "system":
            e = MessageEntry(eid, None, ts, message=SystemMessage(content=f"s{a}" if b % 2 else [TextContent(text=f"s{a}")], timestamp=n))
        elif kind == "edit":
            e = ContextEditEntry(eid, None, ts, target_id=pick if b % 4 else f"e{n + 1}", replacement=None if b % 3 == 0 else f"r{a}")
        elif kind == "compaction":
            e = CompactionEntry(eid, None, ts, summary=f"sum{a}", first_kept_entry_id=pick if b % 4 else (None if b % 8 else "gone"), tokens_before=a)
        elif kind == "note":
            e = CustomMessageEntry(eid, None, ts, custom_type=REWIND_NOTE, content=f"note{a}", display=True)
        elif kind == "custom_message":
            e = CustomMessageEntry(eid, None, ts, custom_type="other", content=[TextContent(text=f"cm{a}")])
        elif kind == "model_change":
            e = ModelChangeEntry(eid, None, ts, provider=("p", "p/x", "q")[a % 3], model_id=("m", "x/m")[b % 2], channel="ch" if a % 2 else UNSET)
        elif kind == "thinking":
            e = ThinkingLevelChangeEntry(eid, None, ts, thinking_level=("off", "low", "high")[a % 3])
        elif kind == "bash":
            e = MessageEntry(eid, None, ts, message=BashExecutionMessage(command="ls", output="x", exclude_from_context=(True, False, UNSET)[a % 3]))
        elif kind == "branch_summary":
            e = BranchSummaryEntry(eid, None, ts, from_id=pick if a % 2 else None, summary=f"bs{a}")
        elif kind == "unknown":
            e = UnknownEntry(id=eid, parent_id=None, timestamp=ts, raw={"type": "future", "id": eid})
        elif kind == "custom":
            e = CustomEntry(eid, None, ts, custom_type="ama.run", data={"a": a})
        else:
            e = LabelEntry(eid, None, ts, target_id=pick, label=f"l{a}")
        out.append(e)
    return out


@settings(max_examples=500, deadline=None)
@given(ops=st.lists(op, max_size=40))
def test_property_any_branch_projects_as_before(ops: list[tuple[str, int, int]]) -> None:
    branch = build(ops)
    assert project(branch) == reference_project(branch)


def test_runs_of_rewind_notes_edited_and_not() -> None:
    ops = [("user", 1, 1), ("note", 1, 1), ("note", 2, 1), ("user", 2, 1), ("note", 3, 1),
           ("edit", 4, 3), ("note", 4, 1), ("system", 1, 1), ("user", 3, 1), ("note", 5, 1)]  # fmt: skip
    branch = build(ops)
    assert isinstance(branch[5], ContextEditEntry) and branch[5].target_id == "e4" and branch[5].replacement is None
    got = project(branch)
    assert got == reference_project(branch)
    notes = [m for m in got.messages if getattr(m, "custom_type", None) == REWIND_NOTE]
    assert [m.content for m in notes] == ["note2", "note4", "note5"]  # type: ignore[attr-defined]


def test_the_messages_are_those_of_the_branch_as_it_was_given() -> None:
    """The model and thinking level are found at once, the messages mapped when first
    asked for: from the branch as it was when projected, whatever became of the list."""
    ops = [("model_change", 1, 1), ("user", 1, 1), ("asst", 2, 1), ("result", 1, 1), ("thinking", 2, 0), ("user", 3, 1)]
    branch = build(ops)
    want = reference_project(list(branch))
    ctx = project(branch)
    assert (ctx.model, ctx.thinking_level) == (want.model, want.thinking_level) != (None, None)
    branch.clear()
    assert ctx.messages == want.messages and ctx.entry_ids == want.entry_ids and len(ctx.messages) == 5
    ctx.messages = ctx.messages[:1]  # set, as a caller may
    assert len(ctx.messages) == 1 and len(ctx.entry_ids) == 5
