"""Token accounting and the compaction cut point (agent/context_budget.py, agent/compaction.py)."""

from __future__ import annotations

from ama.agent.compaction import file_lists, find_cut
from ama.agent.context_budget import IMAGE_TOKENS, MESSAGE_OVERHEAD, Window, estimate_message, measure
from ama.messages import (
    AssistantMessage,
    ImageContent,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ama.session.entries import MessageEntry
from ama.session.store import Session


def test_estimator_per_content_type() -> None:
    assert estimate_message(UserMessage(content="x" * 400)) == 100 + MESSAGE_OVERHEAD
    img = UserMessage(content=[TextContent(text="abcd"), ImageContent(data="A" * 100_000, mime_type="image/png")])
    assert estimate_message(img) == 1 + IMAGE_TOKENS + MESSAGE_OVERHEAD  # not the base64 length
    call = AssistantMessage(content=[ToolCall(id="c", name="read", arguments={"path": "a.py"})])
    assert estimate_message(call) == -(-(4 + len('{"path": "a.py"}')) // 4) + MESSAGE_OVERHEAD


def _session(tmp_path) -> Session:
    s = Session.in_memory(str(tmp_path))
    s.append_message(SystemMessage(content="system " * 100))
    return s


def _turn(s: Session, n: int, result_chars: int, usage: int = 0) -> None:
    s.append_message(AssistantMessage(content=[ToolCall(id=f"c{n}", name="read", arguments={"path": f"f{n}.py"})],
                                      usage=Usage(input=usage), stop_reason="toolUse"))  # fmt: skip
    s.append_message(ToolResultMessage(tool_call_id=f"c{n}", tool_name="read", content=[TextContent(text="y" * result_chars)]))


def test_next_request_size_is_last_usage_plus_what_came_after(tmp_path) -> None:
    s = _session(tmp_path)
    s.append_message(UserMessage(content="go"))
    _turn(s, 1, 4000, usage=5000)
    ctx = s.context()
    size = measure(s.branch(), ctx.messages, ctx.entry_ids, [])
    # the assistant reply's usage, then the tool result after it (1000 + name + overhead)
    assert size.from_usage == 5000 and size.estimated == 1000 + 1 + MESSAGE_OVERHEAD
    # a failed attempt's usage is not an anchor; no usage at all -> everything estimated
    s2 = _session(tmp_path)
    s2.append_message(UserMessage(content="go"))
    _turn(s2, 1, 4000)
    ctx2 = s2.context()
    assert measure(s2.branch(), ctx2.messages, ctx2.entry_ids, []).from_usage == 0
    # after a compaction the kept messages' usage (of the bigger context) is not used
    s.append_compaction("short summary", s.branch()[2].id, 5000)
    ctx3 = s.context()
    after = measure(s.branch(), ctx3.messages, ctx3.entry_ids, [])
    assert after.from_usage == 0 and after.tokens == sum(estimate_message(m) for m in ctx3.messages)


def test_cut_never_separates_a_call_from_its_result(tmp_path) -> None:
    s = _session(tmp_path)
    s.append_message(UserMessage(content="go"))
    for n in range(10):
        _turn(s, n, 2000 + 300 * n)
    branch = s.branch()
    for keep in (1, 100, 500, 1000, 2000, 3000, 5000):
        cut = find_cut(branch, keep)
        assert cut is not None
        e = branch[cut]
        assert isinstance(e, MessageEntry) and not isinstance(e.message, ToolResultMessage), keep
        kept = branch[cut:]
        calls = {b.id for x in kept if isinstance(x.message, AssistantMessage) for b in x.message.content}
        results = {x.message.tool_call_id for x in kept if isinstance(x.message, ToolResultMessage)}
        assert calls == results
    # nothing before the only turn: nothing to compact
    one = _session(tmp_path)
    one.append_message(UserMessage(content="only"))
    assert find_cut(one.branch(), 10) is None
    assert file_lists(branch) == ([f"f{n}.py" for n in range(10)], [])


def test_window_limit_leaves_reserve_and_threshold() -> None:
    assert Window(200_000, 32_000, 0.8, 16_384).limit == 160_000
    assert Window(200_000, 32_000, 0.95, 16_384).limit == 200_000 - 16_384
    assert Window(8_000, 1_000, 0.7, 16_384).limit == 5_600  # the reserve would leave nothing
