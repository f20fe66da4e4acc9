"""Projection: the four steps of the format, pairing repair, and properties over random trees."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ama.messages import (
    AssistantMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    SystemMessage,
    TextContent,
    ToolResultMessage,
    UserMessage,
)
from ama.session.projection import MISSING_RESULT_TEXT
from ama.session.store import Session
from tests.session.helpers import assistant, result, user


def texts(ctx) -> list[str]:
    out = []
    for m in ctx.messages:
        if isinstance(m, CompactionSummaryMessage | BranchSummaryMessage):
            out.append(f"{m.role if hasattr(m, 'role') else type(m).__name__}:{m.summary}")
        elif isinstance(m.content, str):
            out.append(m.content)
        else:
            out.append("|".join(getattr(b, "text", f"<{type(b).__name__}>") for b in m.content))
    return out


def test_compaction_keeps_summary_kept_region_and_everything_after_with_all_system_folded_first() -> None:
    s = Session.in_memory("/x")
    s.append_message(SystemMessage(content="sys A"))
    s.append_message(user("u1"))
    s.append_message(assistant("a1"))
    kept = s.append_message(user("u2"))
    s.append_message(SystemMessage(content="sys B"))  # inside the kept region: folded, not repeated
    s.append_message(assistant("a2"))
    s.append_compaction("summary of u1..a1", kept.id, 5000)
    s.append_message(user("u3"))
    s.append_message(SystemMessage(content="sys C"))  # after the compaction: folded in front too
    ctx = s.context()
    assert [type(m).__name__ for m in ctx.messages] == [
        "SystemMessage",
        "CompactionSummaryMessage",
        "UserMessage",
        "AssistantMessage",
        "UserMessage",
    ]
    assert ctx.messages[0].content == "sys A\n\nsys B\n\nsys C"
    assert ctx.messages[1].summary == "summary of u1..a1" and ctx.messages[1].tokens_before == 5000
    assert texts(ctx)[2:] == ["u2", "a2", "u3"]
    assert len(ctx.entry_ids[0]) == 3  # folded from three entries


def test_a_system_message_appended_at_the_leaf_is_sent_first() -> None:
    """A resumed pi session gets ama's system message at its leaf: the context still
    starts with it, and nothing after the history is a system message."""
    s = Session.in_memory("/x")
    s.append_message(user("u1"))
    s.append_message(assistant("a1"))
    sysm = s.append_message(SystemMessage(content="ama system prompt"))
    s.append_message(user("u2"))
    ctx = s.context()
    assert texts(ctx) == ["ama system prompt", "u1", "a1", "u2"]
    assert isinstance(ctx.messages[0], SystemMessage)
    assert ctx.entry_ids[0] == (sysm.id,)
    assert not any(isinstance(m, SystemMessage) for m in ctx.messages[1:])


def test_only_the_last_of_consecutive_rewind_notes_reaches_the_context() -> None:
    s = Session.in_memory("/x")
    s.append_message(user("u1"))
    s.append_message(assistant("a1"))
    s.append_custom_message("ama.rewind-note", "old note, answered", display=False)
    s.append_message(user("u2"))
    s.append_message(assistant("a2"))
    s.append_custom_message("ama.rewind-note", "files restored (code-only rewind)", display=False)
    s.append_custom_message("ama.rewind-note", "conversation rewound (the later rewind)", display=False)
    s.append_message(user("u3"))
    assert texts(s.context()) == [
        "u1", "a1", "old note, answered", "u2", "a2", "conversation rewound (the later rewind)", "u3"
    ]  # fmt: skip


def test_only_latest_compaction_counts() -> None:
    s = Session.in_memory("/x")
    s.append_message(user("u1"))
    s.append_compaction("first", None, 1)
    u2 = s.append_message(user("u2"))
    s.append_compaction("second", u2.id, 2)
    s.append_message(user("u3"))
    assert texts(s.context()) == ["CompactionSummaryMessage:second", "u2", "u3"]


def test_context_edits_latest_per_target_null_removes_string_replaces_content_only() -> None:
    s = Session.in_memory("/x")
    sysm = s.append_message(SystemMessage(content="system"))
    u = s.append_message(user("original question"))
    a = s.append_message(assistant("long answer", [("c1", "read")]))
    r = s.append_message(result("c1", "huge output"))
    s.append_context_edit(r.id, "[pruned]", "prune")
    s.append_context_edit(u.id, None, "manual")
    s.append_context_edit(u.id, "edited question", "manual")  # latest wins
    s.append_context_edit(sysm.id, "ignored", "manual")  # system unchanged by a string
    final = s.append_message(assistant("long final answer"))
    s.append_context_edit(final.id, "short", "overflow")
    ctx = s.context()
    assert texts(ctx) == ["system", "edited question", "long answer|<ToolCall>", "[pruned]", "short"]
    tr = ctx.messages[3]
    assert isinstance(tr, ToolResultMessage) and tr.tool_call_id == "c1" and tr.tool_name == "read"
    asst = ctx.messages[4]
    assert isinstance(asst, AssistantMessage) and asst.provider == "anthropic" and asst.usage.input == 10
    # an assistant replaced by text loses its calls, so their results leave the context too
    s.append_context_edit(a.id, "gist", "overflow")
    assert texts(s.context()) == ["system", "edited question", "gist", "short"]


def test_edit_replacing_an_assistant_with_calls_drops_the_orphaned_result() -> None:
    s = Session.in_memory("/x")
    s.append_message(user("q"))
    a = s.append_message(assistant("", [("c1", "read")]))
    s.append_message(result("c1"))
    s.append_context_edit(a.id, None, "retry")
    assert texts(s.context()) == ["q"]


def test_edit_off_branch_does_not_apply() -> None:
    s = Session.in_memory("/x")
    u = s.append_message(user("q"))
    s.append_message(assistant("a"))
    s.append_context_edit(u.id, None, "manual")
    s.navigate(u.id)
    s.append_message(assistant("b"))
    assert texts(s.context()) == ["q", "b"]


def test_mapping_of_custom_message_summaries_and_skipped_types() -> None:
    s = Session.in_memory("/x")
    u = s.append_message(user("q"))
    s.append_custom_message("ama.hook_context", "ctx text", display=False)
    s.append_custom("ama.todo", {"items": []})
    s.append_branch_summary(u.id, "we tried X")
    from ama.messages import Usage

    s.append_usage("cache_warm", "anthropic", "m", Usage())
    s.set_label(u.id, "here")
    s.set_name("n")
    ctx = s.context()
    assert [type(m).__name__ for m in ctx.messages] == ["UserMessage", "CustomMessage", "BranchSummaryMessage"]
    cm = ctx.messages[1]
    assert isinstance(cm, CustomMessage) and cm.custom_type == "ama.hook_context" and cm.display is False
    assert ctx.messages[2].from_id == u.id


def test_model_and_thinking_level_restored_from_latest_changes() -> None:
    s = Session.in_memory("/x")
    s.append_model_change("anthropic", "claude-sonnet-4-5", channel="direct")
    s.append_thinking_level_change("high")
    s.append_message(user("q"))
    s.append_message(assistant("a", provider="anthropic", model="claude-sonnet-4-5"))
    ctx = s.context()
    assert ctx.model.ref == "anthropic/claude-sonnet-4-5" and ctx.model.channel == "direct"
    assert ctx.thinking_level == "high"
    s.append_model_change("openai", "gpt-4.1")
    s.append_thinking_level_change("off")
    ctx = s.context()
    assert ctx.model.ref == "openai/gpt-4.1" and ctx.model.channel is None and ctx.thinking_level == "off"


def test_dangling_calls_get_synthetic_results_unless_the_reply_was_aborted() -> None:
    s = Session.in_memory("/x")
    s.append_message(user("q"))
    s.append_message(assistant("", [("c1", "read"), ("c2", "bash")]))
    s.append_message(result("c1"))
    ctx = s.context()
    assert [m.tool_call_id for m in ctx.messages if isinstance(m, ToolResultMessage)] == ["c1", "c2"]
    assert ctx.messages[-1].content[0].text == MISSING_RESULT_TEXT and ctx.messages[-1].is_error
    assert ctx.entry_ids[-1] == ()

    s2 = Session.in_memory("/x")
    s2.append_message(user("q"))
    s2.append_message(assistant("partial", [("c1", "read")], stop="aborted"))
    s2.append_message(user("next"))
    ctx2 = s2.context()
    assert texts(ctx2) == ["q", "partial", "next"]
    assert not any(isinstance(m, ToolResultMessage) for m in ctx2.messages)


def test_excluded_bash_execution_stays_out() -> None:
    from tests.conftest import FIXTURES

    ctx = Session.load(FIXTURES / "pi" / "v3-session.jsonl").context("a000000c")
    roles = [type(m).__name__ for m in ctx.messages]
    assert roles.count("BashExecutionMessage") == 1


# --- properties over random sessions -------------------------------------------------------

ops = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.text(max_size=5)),
        st.tuples(st.just("assistant"), st.integers(0, 2)),
        st.tuples(st.just("result"), st.integers(0, 5)),
        st.tuples(st.just("compact"), st.integers(0, 50)),
        st.tuples(st.just("edit"), st.integers(0, 50), st.booleans()),
        st.tuples(st.just("navigate"), st.integers(0, 50)),
        st.tuples(st.just("custom"), st.just(0)),
        st.tuples(st.just("system"), st.just(0)),
    ),
    max_size=40,
)


def build(seq) -> Session:
    s = Session.in_memory("/x")
    calls: list[str] = []
    n = 0
    for op in seq:
        ids = [e.id for e in s.entries]
        kind = op[0]
        if kind == "user":
            s.append_message(UserMessage(content=op[1] or "u"))
        elif kind == "assistant":
            n += 1
            new = [(f"c{n}_{i}", "read") for i in range(op[1])]
            calls += [c for c, _ in new]
            s.append_message(assistant(f"a{n}", new))
        elif kind == "result" and calls:
            s.append_message(result(calls[op[1] % len(calls)]))
        elif kind == "compact" and ids:
            s.append_compaction("sum", ids[op[1] % len(ids)], 1)
        elif kind == "edit" and ids:
            s.append_context_edit(ids[op[1] % len(ids)], None if op[2] else "edited", "manual")
        elif kind == "navigate" and ids:
            s.navigate(ids[op[1] % len(ids)])
        elif kind == "custom":
            s.append_custom("x.y", {})
        elif kind == "system":
            s.append_message(SystemMessage(content="sys"))
    return s


@settings(max_examples=300, deadline=None)
@given(ops)
def test_projection_never_includes_an_entry_outside_the_branch(seq) -> None:
    s = build(seq)
    branch_ids = set(s.tree.path_ids())
    ctx = s.context()
    assert len(ctx.messages) == len(ctx.entry_ids)
    for ids in ctx.entry_ids:
        assert set(ids) <= branch_ids


@settings(max_examples=300, deadline=None)
@given(ops)
def test_projection_pairs_every_call_with_exactly_one_result(seq) -> None:
    ctx = build(seq).context()
    pending: set[str] = set()
    for m in ctx.messages:
        if isinstance(m, ToolResultMessage):
            assert m.tool_call_id in pending
            pending.discard(m.tool_call_id)
            continue
        assert not pending, "a call without its result before the next message"
        if isinstance(m, AssistantMessage):
            pending = {b.id for b in m.content if not isinstance(b, TextContent) and hasattr(b, "arguments")}
    assert not pending


@settings(max_examples=200, deadline=None)
@given(ops)
def test_tree_branch_is_a_parent_chain_ending_at_the_leaf(seq) -> None:
    s = build(seq)
    branch = s.branch()
    if s.leaf_id is None:
        assert branch == []
        return
    assert branch[-1].id == s.leaf_id
    assert s.tree.parent[branch[0].id] is None
    for a, b in zip(branch, branch[1:]):
        assert s.tree.parent[b.id] == a.id


@settings(max_examples=100, deadline=None)
@given(ops)
def test_file_and_memory_sessions_project_identically(tmp_path_factory, seq) -> None:
    mem = build(seq)
    d = tmp_path_factory.mktemp("s")
    f = Session.create("/x", d)
    for e in mem.entries:
        # replay the memory session's tree: parents as recorded, then its final leaf
        if f.leaf_id != mem.tree.parent[e.id]:
            f.navigate(mem.tree.parent[e.id])
        f.append(e)
    f.navigate(mem.leaf_id)
    f.close()
    if mem.entries:
        loaded = Session.load(f.path)
        assert loaded.leaf_id == mem.leaf_id
        assert loaded.context().to_json() == mem.context().to_json()
