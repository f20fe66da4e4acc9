"""The line format: key order, round trips, pi compatibility, damage handling."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest

from ama.errors import AmaError
from ama.messages import ImageContent, UserMessage
from ama.session.entries import ENTRY_TYPES, SessionHeader, encode_line
from ama.session.reader import parse_session, read_session
from ama.session.store import Session
from ama.session.tree import SessionTree
from tests.conftest import FIXTURES
from tests.session.helpers import assistant, result, simple_session, user

PI = FIXTURES / "pi"


def test_every_line_has_type_first_then_id_parent_timestamp(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir)
    s.append_custom("ama.todo", {"items": []})
    s.append_custom_message("ama.hook_context", "extra", display=False)
    s.append_model_change("openai", "gpt-4.1", channel="responses")
    s.append_thinking_level_change("high")
    s.append_context_edit(s.entries[2].id, None, "prune")
    s.append_compaction("sum", s.entries[4].id, 1234)
    s.append_branch_summary(s.entries[1].id, "left branch")
    s.set_label(s.entries[0].id, "start")
    s.set_name("My session")
    from ama.messages import Usage

    s.append_usage("cache_warm", "anthropic", "claude-sonnet-4-5", Usage(input=1))
    s.navigate(s.entries[0].id)
    s.close()
    lines = Path(s.path).read_bytes().splitlines()
    header = json.loads(lines[0])
    assert list(header)[:5] == ["type", "version", "id", "timestamp", "cwd"]
    assert header["version"] == 3
    seen_types = set()
    for raw in lines[1:]:
        obj = json.loads(raw)
        keys = list(obj)
        assert keys[0] == "type"
        if obj["type"] == "leaf":
            assert obj["targetId"] == s.entries[0].id
            continue
        seen_types.add(obj["type"])
        assert keys[1:4] == ["id", "parentId", "timestamp"]
        assert len(obj["id"]) == 8 and int(obj["id"], 16) >= 0
    assert seen_types == set(ENTRY_TYPES)


def test_round_trip_of_each_entry_is_byte_identical(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir)
    s.append_message(UserMessage(content=[ImageContent(data="aGVsbG8=", mime_type="image/png")], origin="steer"))
    s.close()
    data = Path(s.path).read_bytes()
    parsed = parse_session(data)
    again = encode_line(parsed.header) + b"".join(encode_line(e) for e in parsed.entries)
    assert again == data


def test_context_edit_keeps_explicit_null_replacement(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir, turns=1)
    e = s.append_context_edit(s.entries[1].id, None, "retry")
    s.close()
    line = [json.loads(x) for x in Path(s.path).read_text().splitlines() if e.id in x][0]
    assert line["replacement"] is None and line["reason"] == "retry"


def test_pi_v3_file_reads_with_every_entry_type() -> None:
    d = read_session(PI / "v3-session.jsonl")
    assert d.problems == [] and d.readonly_reason is None
    assert d.header.id == "1a6f6bc4-2b1e-4c7a-9d3e-5f8a0b1c2d3e"
    types = [e.type for e in d.entries]
    assert {"model_change", "thinking_level_change", "message", "custom", "custom_message", "label"} <= set(types)
    tree = SessionTree(d.entries, d.leaf_id)
    assert tree.leaf_id == "a0000012"  # pi has no leaf lines: the last entry is the leaf
    assert tree.name == "Parser crash"
    assert tree.labels() == {"a0000003": "start"}
    # the current branch left the compacted branch via a branch_summary
    assert [e.id for e in tree.branch()][-3:] == ["a0000010", "a0000011", "a0000012"]


def test_pi_v2_hook_message_is_read_as_custom_and_file_is_readonly(sessions_dir: Path, tmp_path: Path) -> None:
    d = read_session(PI / "v2-session.jsonl")
    assert type(d.entries[1].message).__name__ == "CustomMessage"
    assert "older session format version 2" in d.readonly_reason
    copy = tmp_path / "v2.jsonl"
    shutil.copy(PI / "v2-session.jsonl", copy)
    before = copy.read_bytes()
    with pytest.raises(AmaError) as err:
        Session.open(copy)
    assert err.value.code == "readonly" and "fork it" in err.value.message
    assert copy.read_bytes() == before


def test_pi_v1_linear_file_gets_ids_in_memory_only() -> None:
    before = (PI / "v1-session.jsonl").read_bytes()
    d = read_session(PI / "v1-session.jsonl")
    assert [e.id for e in d.entries] == ["00000001", "00000002", "00000003", "00000004"]
    assert [e.parent_id for e in d.entries] == [None, "00000001", "00000002", "00000003"]
    assert (PI / "v1-session.jsonl").read_bytes() == before


def test_newer_version_is_refused_for_writing_with_a_clear_message(tmp_path: Path) -> None:
    p = tmp_path / "future.jsonl"
    p.write_text(
        '{"type":"session","version":4,"id":"f","timestamp":"2030-01-01T00:00:00Z","cwd":"/x"}\n'
        '{"type":"message","id":"00000001","parentId":null,"timestamp":"2030-01-01T00:00:01Z",'
        '"message":{"role":"user","content":"hi","timestamp":1}}\n'
    )
    d = read_session(p)
    assert len(d.entries) == 1  # read best-effort
    assert "version 4, newer than this ama supports (3)" in d.readonly_reason
    with pytest.raises(AmaError) as err:
        Session.open(p)
    assert err.value.code == "readonly" and "upgrade ama" in err.value.message


def test_unknown_entry_types_and_roles_are_kept_not_in_context(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text(
        '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00Z","cwd":"/x"}\n'
        '{"type":"message","id":"00000001","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}\n'
        '{"type":"future_thing","id":"00000002","parentId":"00000001","timestamp":"t","payload":{"a":1}}\n'
        '{"type":"message","id":"00000003","parentId":"00000002","timestamp":"t","message":{"role":"hologram","content":"x"}}\n'
        '{"type":"message","id":"00000004","parentId":"00000003","timestamp":"t","message":{"role":"user","content":"again","timestamp":2}}\n'
    )
    d = read_session(p)
    assert d.problems == []
    assert [e.type for e in d.entries] == ["message", "future_thing", "message", "message"]
    assert type(d.entries[1]).__name__ == "UnknownEntry" and d.entries[1].raw["payload"] == {"a": 1}
    ctx = Session.load(p).context()
    assert [m.content for m in ctx.messages] == ["hi", "again"]


def test_corrupt_header_is_reported_never_rewritten(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    body = b'{"type":"sess\n{"type":"message","id":"00000001","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}\n'
    p.write_bytes(body)
    d = read_session(p)
    assert d.header is None and "not valid JSON" in d.header_error
    assert len(d.entries) == 1  # the rest still reads
    with pytest.raises(AmaError) as err:
        Session.open(p)
    assert err.value.code == "readonly" and "header line is damaged" in err.value.message
    assert p.read_bytes() == body


def test_malformed_middle_line_is_skipped_and_counted(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir, turns=2)
    s.close()
    lines = Path(s.path).read_bytes().splitlines(keepends=True)
    # damage the assistant message holding call0's toolCall (line 3) and call1's result (line 8)
    lines[2] = b'{"type":"message","id":"broken' + b"\n"
    lines[7] = b"\x00\x01garbage\n"
    Path(s.path).write_bytes(b"".join(lines))
    d = read_session(s.path)
    assert [x.line for x in d.damaged] == [3, 8]
    tree = SessionTree(d.entries, d.leaf_id)
    assert tree.reparented == 2
    ctx = Session.load(s.path).context()
    # no result without its call, no call without a result
    calls = [b.id for m in ctx.messages if m.__class__.__name__ == "AssistantMessage" for b in m.content if hasattr(b, "arguments")]
    results = [m.tool_call_id for m in ctx.messages if m.__class__.__name__ == "ToolResultMessage"]
    assert sorted(calls) == sorted(results) == ["call1"]
    assert "call0" not in results
    # the synthetic result marks the lost one
    synth = [m for m in ctx.messages if m.__class__.__name__ == "ToolResultMessage" and m.is_error]
    assert len(synth) == 1 and "missing" in synth[0].content[0].text


def test_partial_last_line_is_skipped_then_next_writer_starts_a_new_line(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir, turns=1)
    last_id = s.leaf_id
    s.close()
    with open(s.path, "ab") as f:
        f.write(b'{"type":"message","id":"deadbeef","parentId":"' + last_id.encode() + b'","times')
    d = read_session(s.path)
    assert d.partial_tail and d.damaged == [] and d.leaf_id == last_id
    # resume and prompt: the new entry is intact and correctly parented
    s2 = Session.open(s.path)
    e = s2.append_message(user("after the crash"))
    s2.close()
    d2 = read_session(s.path)
    assert not d2.partial_tail
    assert [x.reason for x in d2.damaged] == ["not valid JSON"]
    assert d2.entries[-1].id == e.id and d2.entries[-1].parent_id == last_id
    assert Session.load(s.path).context().messages[-1].content == "after the crash"


def test_struct_shapes_decode_pi_usage_without_cost() -> None:
    line = (
        b'{"type":"message","id":"00000001","parentId":null,"timestamp":"t","message":{"role":"assistant",'
        b'"content":[],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,'
        b'"cacheWrite":0,"totalTokens":3},"stopReason":"stop","timestamp":1}}'
    )
    from ama.session.entries import Line

    e = msgspec.json.decode(line, type=Line)
    assert e.message.usage.cost is msgspec.UNSET
    assert b'"cost"' not in encode_line(e)


def test_header_parent_session_written_only_when_set(sessions_dir: Path) -> None:
    assert b"parentSession" not in encode_line(SessionHeader(version=3, id="a", timestamp="t", cwd="/"))
    s = Session.create("/x", sessions_dir, parent_session="abc")
    s.append_message(user("hi"))
    s.close()
    assert json.loads(Path(s.path).read_text().splitlines()[0])["parentSession"] == "abc"


def test_file_layout_matches_pi(sessions_dir: Path) -> None:
    s = Session.create("/home/me/my proj", sessions_dir)
    s.append_message(user("x"))
    s.close()
    rel = Path(s.path).relative_to(sessions_dir)
    assert rel.parts[0] == "--home-me-my proj--"
    stem = rel.parts[1]
    assert stem.endswith(f"_{s.id}.jsonl") and ":" not in stem and "." not in stem[:-6]


def test_in_memory_session_has_same_api_and_no_file(tmp_path: Path) -> None:
    s = Session.in_memory("/x")
    u = s.append_message(user("hi"))
    s.append_message(assistant("yo"))
    s.navigate(u.id)
    s.append_message(assistant("other"))
    assert s.path is None and not s.persisted
    assert [m.content if isinstance(m.content, str) else m.content[0].text for m in s.context().messages] == ["hi", "other"]
    assert list(tmp_path.iterdir()) == []


def test_result_helper_pairs(sessions_dir: Path) -> None:
    # sanity of the helpers used across tests
    s = Session.in_memory("/x")
    s.append_message(user("q"))
    s.append_message(assistant("", [("c", "read")]))
    s.append_message(result("c"))
    assert len(s.context().messages) == 3
