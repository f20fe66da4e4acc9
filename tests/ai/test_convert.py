"""Context conversion rules shared by both APIs (pure functions, no HTTP)."""

from __future__ import annotations

import json

from ama.ai import Context, StreamOptions, ToolSpec
from ama.ai import anthropic as anth
from ama.ai import openai_completions as oai
from ama.ai.convert import encode_body, normalize_id
from ama.messages import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

from .helpers import anthropic_model, openai_model

A = anthropic_model("http://127.0.0.1:9")
OA = openai_model("http://127.0.0.1:9")


def from_claude(*content, stop="toolUse", model="claude-sonnet-4-5") -> AssistantMessage:
    return AssistantMessage(
        content=list(content), api="anthropic-messages", provider="anthropic", model=model, stop_reason=stop
    )


def a_body(*messages, system="S", tools=(), **opts) -> dict:
    _, _, raw = anth.build_request(A, Context(system, list(messages), list(tools)), StreamOptions(**opts), "k")
    return json.loads(raw)


def o_body(*messages, system="S", model=OA, **opts) -> dict:
    _, _, raw = oai.build_request(model, Context(system, list(messages), []), StreamOptions(**opts), "k")
    return json.loads(raw)


def test_context_only_roles_become_wrapped_user_text():
    msgs = [
        CompactionSummaryMessage(summary="We fixed the parser."),
        BranchSummaryMessage(summary="Tried X; abandoned."),
        CustomMessage(custom_type="ama.rewind-note", content="<note>files differ</note>"),
        BashExecutionMessage(command="make", output="ok", exit_code=2),
        BashExecutionMessage(command="secret", output="x", exclude_from_context=True),
        UserMessage(content="continue"),
    ]
    b = o_body(*msgs)
    # adjacent user-side items are one user message (strict templates want roles to alternate)
    assert [m["role"] for m in b["messages"]] == ["system", "user"]
    texts = [part["text"] for part in b["messages"][1]["content"]]
    assert texts[0].startswith("The conversation history before this point was compacted")
    assert "<summary>\nWe fixed the parser.\n</summary>" in texts[0]
    assert "<summary>\nTried X; abandoned.\n</summary>" in texts[1]
    assert texts[2] == "<note>files differ</note>"
    assert texts[3].startswith("Ran `make`") and "exited with code 2" in texts[3]
    assert texts[4] == "continue" and len(texts) == 5
    # Anthropic merges the consecutive user-side items into one user message
    am = a_body(*msgs)["messages"]
    assert len(am) == 1 and am[0]["role"] == "user" and len(am[0]["content"]) == 5


def test_system_messages_join_the_system_prompt_for_anthropic():
    b = a_body(UserMessage(content="q"), SystemMessage(content="Plan mode is on."), system="Base")
    assert [s["text"] for s in b["system"]] == ["Base", "Plan mode is on."]
    assert "cache_control" not in b["system"][0] and b["system"][1]["cache_control"] == {"type": "ephemeral"}


def test_thinking_replayed_only_to_the_same_model():
    turn = [
        UserMessage(content="q"),
        from_claude(
            ThinkingContent(thinking="deep", thinking_signature="SIG"),
            ThinkingContent(thinking="", thinking_signature="REDACTED", redacted=True),
            ThinkingContent(thinking="unsigned"),
            TextContent(text="answer"),
            stop="stop",
        ),
        UserMessage(content="more"),
    ]
    same = a_body(*turn)["messages"][1]["content"]
    assert same == [
        {"type": "thinking", "thinking": "deep", "signature": "SIG"},
        {"type": "redacted_thinking", "data": "REDACTED"},
        {"type": "text", "text": "answer"},
    ]
    turn[1].model = "claude-opus-4-1"
    other = a_body(*turn)["messages"][1]["content"]
    assert other == [{"type": "text", "text": "answer"}]


def test_reasoning_replay_is_opt_in_for_openai_compatible():
    msg = AssistantMessage(
        content=[ThinkingContent(thinking="r", thinking_signature="reasoning_content"), TextContent(text="4")],
        api="openai-completions",
        provider="openai",
        model="gpt-4.1",
    )
    assert "reasoning_content" not in o_body(UserMessage(content="q"), msg)["messages"][2]
    replay = openai_model("http://127.0.0.1:9", compat={"replayReasoning": True})
    assert o_body(UserMessage(content="q"), msg, model=replay)["messages"][2]["reasoning_content"] == "r"


def test_failed_and_empty_assistant_messages_are_skipped():
    msgs = [
        UserMessage(content="q"),
        from_claude(TextContent(text="partial"), ToolCall(id="t1", name="ls"), stop="aborted"),
        ToolResultMessage(tool_call_id="t1", content=[TextContent(text="orphan")]),
        from_claude(TextContent(text="   "), stop="stop"),
        from_claude(TextContent(text="oops"), stop="error"),
        UserMessage(content="again"),
    ]
    b = o_body(*msgs)
    assert [m["role"] for m in b["messages"]] == ["system", "user"]  # the two user messages, now adjacent, merge
    assert [p["text"] for p in b["messages"][1]["content"]] == ["q", "again"]


def test_tool_calls_without_results_get_a_synthetic_error_result():
    msgs = [
        UserMessage(content="q"),
        from_claude(ToolCall(id="t1", name="ls"), ToolCall(id="t2", name="read", arguments={"path": "x"})),
        ToolResultMessage(tool_call_id="t1", content=[TextContent(text="ok")]),
        UserMessage(content="stop that"),
    ]
    b = o_body(*msgs)["messages"]
    assert [m["role"] for m in b] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert b[4] == {"role": "tool", "tool_call_id": "t2", "content": "No result provided"}
    am = a_body(*msgs)["messages"]
    results = am[2]["content"]
    assert [r.get("tool_use_id") for r in results[:2]] == ["t1", "t2"]
    assert results[1]["is_error"] is True and results[2]["text"] == "stop that"


def test_tool_call_ids_are_normalised_deterministically():
    weird = "fc_123|call/abc:def" + "y" * 80
    a = normalize_id(weird, max_len=64)
    assert a == normalize_id(weird, max_len=64) and len(a) <= 64
    assert all(c.isalnum() or c in "_-" for c in a)
    assert normalize_id("toolu_ok-1", max_len=64) == "toolu_ok-1"
    assert normalize_id(weird + "1", max_len=64) != a
    o = normalize_id(weird, max_len=40)
    assert len(o) <= 40


def test_images_for_models_without_image_input():
    msg = UserMessage(content=[TextContent(text="see"), ImageContent(data="x", mime_type="image/png")])
    no_img = openai_model("http://127.0.0.1:9", images=False)
    parts = o_body(msg, model=no_img)["messages"][1]["content"]
    assert parts[1] == {"type": "text", "text": "(image omitted: this model does not accept images)"}


def test_thinking_budget_fits_max_tokens():
    b = a_body(UserMessage(content="q"), thinking_level="xhigh", max_tokens=8000)
    assert b["thinking"] == {"type": "enabled", "budget_tokens": 8000 - 1024}
    assert "thinking" not in a_body(UserMessage(content="q"), thinking_level="low", max_tokens=1500)
    assert "thinking" not in a_body(UserMessage(content="q"), thinking_level="off")


def test_tools_schema_key_order_does_not_change_bytes():
    t1 = ToolSpec("read", "Read", {"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "integer"}}})
    t2 = ToolSpec("read", "Read", {"properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "type": "object"})
    ctx1 = Context("S", [UserMessage(content="q")], [t1])
    ctx2 = Context("S", [UserMessage(content="q")], [t2])
    assert anth.build_request(A, ctx1, StreamOptions(), "k")[2] == anth.build_request(A, ctx2, StreamOptions(), "k")[2]


def test_encode_body_keeps_top_level_order_and_sorts_nested():
    raw = encode_body([("z", 1), ("a", {"y": 1, "b": [{"d": 1, "c": 2}]}), ("skip", None)])
    assert raw == b'{"z":1,"a":{"b":[{"c":2,"d":1}],"y":1}}'
