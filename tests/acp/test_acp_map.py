"""The pure ama -> ACP mapping: tool kinds, titles, locations, diffs, history, prompts, stop reasons."""

from __future__ import annotations

import pytest

from ama.rpc import acp_map as m
from ama.rpc.acp_history import history_updates
from ama.rpc.acp_prompt import prompt_input, stop_reason
from ama.tools.diff import unified_diff


@pytest.mark.parametrize(
    ("name", "kind"),
    [("read", "read"), ("edit", "edit"), ("write", "edit"), ("bash", "execute"), ("bash_output", "execute"),
     ("grep", "search"), ("find", "search"), ("ls", "search"), ("web_fetch", "fetch"), ("todo", "other"),
     ("weather", "other")],
)  # fmt: skip
def test_tool_kind(name: str, kind: str) -> None:
    assert m.tool_kind(name) == kind


def test_titles_and_locations() -> None:
    cwd = "/w"
    assert (
        m.tool_title("read", {"path": "src/a.py", "offset": 10, "limit": 5}, cwd)
        == "Read src/a.py (lines 10-14)"
    )
    assert m.tool_title("edit", {"path": "/w/b.py"}, cwd) == "Edit b.py"
    assert m.tool_title("write", {"path": "/etc/x"}, cwd) == "Write /etc/x"
    assert m.tool_title("bash", {"command": "make test\nmake lint"}, cwd) == "`make test…`"
    assert m.tool_title("grep", {"pattern": "TODO", "path": "src"}, cwd) == "Grep TODO in src"
    assert m.tool_locations("read", {"path": "a.py", "offset": 7}, cwd) == [{"path": "/w/a.py", "line": 7}]
    assert m.tool_locations("edit", {"path": "a.py"}, cwd, {"firstChangedLine": 3}) == [
        {"path": "/w/a.py", "line": 3}
    ]
    assert m.tool_locations("ls", {}, cwd) == []
    assert m.tool_locations("bash", {"path": "x"}, cwd) == []


def test_fenced_outlasts_backticks() -> None:
    assert m.fenced("a\n") == "```\na\n```"
    assert m.fenced("x ```` y") == "`````\nx ```` y\n`````"


def test_diff_hunks_from_a_unified_diff() -> None:
    old = "".join(f"line {i}\n" for i in range(1, 30)) + "last"
    new = old.replace("line 2\n", "line two\n").replace("last", "final")
    hunks = m.diff_hunks(unified_diff(old, new, "f.txt"))
    assert len(hunks) == 2
    assert hunks[0] == (
        "line 1\nline 2\nline 3\nline 4\nline 5\n",
        "line 1\nline two\nline 3\nline 4\nline 5\n",
    )
    assert hunks[1][0].endswith("line 29\nlast") and hunks[1][1].endswith("line 29\nfinal")


def test_result_content_diff_text_and_created_file() -> None:
    details = {"path": "/w/a.txt", "diff": unified_diff("a\n", "b\n", "a.txt")}
    out = m.result_content("edit", {"path": "a.txt"}, {"content": [], "details": details}, "/w", False)
    assert out == [{"type": "diff", "path": "/w/a.txt", "oldText": "a\n", "newText": "b\n"}]
    created = m.result_content(
        "write",
        {"path": "n.txt", "content": "new\n"},
        {"details": {"path": "/w/n.txt", "created": True}},
        "/w",
        False,
    )
    assert created == [{"type": "diff", "path": "/w/n.txt", "oldText": None, "newText": "new\n"}]
    failed = m.result_content("bash", {}, {"content": [{"type": "text", "text": "denied"}]}, "/w", True)
    assert failed == [m.text_content("denied")]


def test_prompt_input() -> None:
    text, images = prompt_input(
        [
            {"type": "text", "text": "look at"},
            {"type": "resource_link", "uri": "file:///w/a%20b.py", "name": "a b.py"},
            {"type": "text", "text": " and fix it"},
            {"type": "resource", "resource": {"uri": "file:///w/c.py", "text": "print(1)"}},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        ]
    )
    assert text == 'look at @/w/a b.py and fix it\n\n<context ref="@/w/c.py">\nprint(1)\n</context>'
    assert images == [{"data": "AAAA", "mimeType": "image/png"}]


@pytest.mark.parametrize(
    ("status", "terminal", "last", "error", "expected"),
    [("COMPLETED", "stop", "stop", None, "end_turn"), ("COMPLETED", "length", "length", None, "max_tokens"),
     ("COMPLETED", "max_steps", "toolUse", None, "max_turn_requests"), ("CANCELLED", "aborted", "aborted", None, "cancelled"),
     ("FAILED", "error", "error", None, "refusal"),
     ("FAILED", "error", "error", "openai: response blocked by content filter", "refusal"),
     ("FAILED", "error", "error", "529 overloaded", None), ("FAILED", "error", None, None, None)],
)  # fmt: skip
def test_stop_reason(
    status: str, terminal: str, last: str | None, error: str | None, expected: str | None
) -> None:
    assert stop_reason(status, terminal, last, error) == expected


def test_cancel_wins_over_a_run_that_completed_meanwhile() -> None:
    assert stop_reason("COMPLETED", "stop", "stop", None, cancelled=True) == "cancelled"


def test_event_mapper_follows_a_call_through_its_approval() -> None:
    mapper = m.EventMapper(cwd="/w")
    args = {"path": "a.txt", "old_string": "x", "new_string": "y"}
    start = mapper.on_event(
        {"type": "tool_execution_start", "toolCallId": "c1", "toolName": "edit", "args": args}
    )
    assert start[0]["status"] == "pending" and start[0]["content"][0]["type"] == "diff"
    ask = mapper.permission_tool_call(
        {"requestId": "r", "toolName": "edit", "input": args, "message": "asks"}
    )
    assert ask["toolCallId"] == "c1" and ask["content"][0] == m.text_content("asks")
    assert mapper.on_event({"type": "permission_resolved", "decision": "allow"}) == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "in_progress"}
    ]
    end = mapper.on_event(
        {"type": "tool_execution_end", "toolCallId": "c1", "toolName": "edit", "isError": True,
         "result": {"content": [{"type": "text", "text": "no match"}], "details": None}}
    )  # fmt: skip
    assert end == [{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "failed",
                    "content": [m.text_content("no match")]}]  # fmt: skip
    assert mapper.current is None and mapper.calls == {}
    todo = mapper.on_event({"type": "todo_updated", "items": [{"id": "1", "text": "t", "status": "done"}]})
    assert todo == [
        {"sessionUpdate": "plan", "entries": [{"content": "t", "priority": "medium", "status": "completed"}]}
    ]
    proposed = mapper.on_event({"type": "plan_proposed", "planId": "p", "steps": [{"id": "1", "text": "do it"}]})
    assert proposed == [
        {"sessionUpdate": "plan", "entries": [{"content": "do it", "priority": "medium", "status": "pending"}]}
    ]


def test_history_marks_a_call_without_result_failed() -> None:
    msgs = [
        {"role": "system", "content": "sys"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "data": "AA", "mimeType": "image/png"},
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}],
        },
        {"role": "custom", "customType": "ama.aborted", "content": "x"},
    ]
    out = history_updates(msgs, "/w")
    assert [u["sessionUpdate"] for u in out] == ["user_message_chunk", "user_message_chunk", "tool_call"]
    assert out[1]["content"]["type"] == "image" and out[2]["status"] == "failed"


def test_grep_and_write_locations() -> None:
    cwd = "/w"
    out = "src/a.py:3:def f():\nsrc/a.py:9:def g():\n--\nb.py:1:x\n\n[Showing the first 3 matches; narrow the search or raise limit.]"
    assert m.tool_locations("grep", {"pattern": "def"}, cwd, {"mode": "content"}, out) == [
        {"path": "/w/src/a.py", "line": 3},
        {"path": "/w/b.py", "line": 1},
    ]
    assert m.tool_locations("grep", {"pattern": "x"}, cwd, {"mode": "files_with_matches"}, "a.py\n/etc/b") == [
        {"path": "/w/a.py"},
        {"path": "/etc/b"},
    ]
    assert m.tool_locations("grep", {"pattern": "x", "path": "src"}, cwd, {"mode": "content"}, "No matches for 'x' in /w/src.") == [
        {"path": "/w/src"}
    ]
    diff = "--- a/a.py\n+++ b/a.py\n@@ -10,3 +12,4 @@\n x\n+y\n"
    assert m.tool_locations("write", {"path": "a.py"}, cwd, {"diff": diff}) == [{"path": "/w/a.py", "line": 12}]
    assert m.tool_locations("write", {"path": "a.py"}, cwd, {"created": True}) == [{"path": "/w/a.py", "line": 1}]


def test_permission_preview_becomes_diff_content() -> None:
    preview = {"kind": "diff", "path": "/w/a.py", "diff": "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-old\n+new\n"}
    assert m.request_diffs(preview, {}) == [{"type": "diff", "path": "/w/a.py", "oldText": "old\n", "newText": "new\n"}]
    created = {"kind": "diff", "path": "/w/n.py", "diff": "", "created": True}
    assert m.request_diffs(created, {"content": "x\n"}) == [{"type": "diff", "path": "/w/n.py", "oldText": None, "newText": "x\n"}]
    assert m.request_diffs({"kind": "command", "command": "ls"}, {}) == []
