"""Rewind end to end with the scripted provider and real files: points, both/conversation/code,
dry runs, notes, errors, summaries, and the byte-identical request after a rewind."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ama.errors import AmaError
from ama.session.entries import BranchSummaryEntry, CompactionEntry, CustomMessageEntry
from tests.agent.helpers import make_agent, write_script


def run(coro):
    return asyncio.run(coro)


def edit_turns() -> list:
    return [
        {"toolCalls": [{"name": "write", "arguments": {"path": "a.txt", "content": "A1\n"}}]},
        "wrote a",
        {"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
        {"toolCalls": [{"name": "edit", "arguments": {"path": "a.txt", "old_string": "A1", "new_string": "A2"}}]},
        {"toolCalls": [{"name": "write", "arguments": {"path": "b.txt", "content": "B\n"}}]},
        "edited a, created b",
    ]


async def two_turns(tmp_path: Path, **kw):
    model = write_script(tmp_path / "s.json", edit_turns() + ["after rewind"] * 3, mode="sequence")
    agent, events = await make_agent(tmp_path / "ws", model, permission_mode="full-auto", **kw)
    await agent.prompt("create a")
    await agent.prompt("change a, add b")
    return agent, events


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


def test_rewind_both_restores_files_and_conversation(tmp_path: Path, ws: Path) -> None:
    async def go():
        agent, events = await two_turns(tmp_path)
        points = agent.rewind_points()
        assert [p["text"] for p in points] == ["create a", "change a, add b"] and all(p["hasCheckpoint"] for p in points)
        dry = await agent.rewind(points[1]["entryId"], "both", dry_run=True)
        assert (ws / "a.txt").read_text() == "A2\n" and (ws / "b.txt").exists()  # dry run changed nothing
        assert dry["code"]["restored"] == ["a.txt"] and dry["code"]["deleted"] == ["b.txt"]
        assert dry["code"]["insertions"] == 1 and dry["code"]["deletions"] == 2
        before_leaf = agent.session.leaf_id
        res = await agent.rewind(points[1]["entryId"], "both")
        assert (ws / "a.txt").read_text() == "A1\n" and not (ws / "b.txt").exists()
        assert res["conversation"]["draft"] == {"text": "change a, add b"}
        assert agent.session.leaf_id == res["conversation"]["leafId"] != before_leaf
        assert agent.session.tree.get(before_leaf) is not None  # the abandoned branch stays
        assert agent.read_files.check(str(ws / "a.txt")) is not None  # must be read again
        rewound = [e for e in events if e["type"] == "session_rewound"]
        assert rewound[0]["restored"] == ["a.txt"] and rewound[0]["deleted"] == ["b.txt"]
        await agent.prompt("something else")
        notes = [e for e in agent.session.entries if isinstance(e, CustomMessageEntry) and e.custom_type == "ama.rewind-note"]
        assert notes == []  # both sides agree: no note
        await agent.close()

    run(go())


def test_conversation_only_and_code_only_leave_a_note(tmp_path: Path, ws: Path) -> None:
    async def go():
        agent, _ = await two_turns(tmp_path)
        p2 = agent.rewind_points()[1]["entryId"]
        await agent.rewind(p2, "conversation")
        assert (ws / "a.txt").read_text() == "A2\n"
        await agent.prompt("continue")
        note = [e for e in agent.session.entries if isinstance(e, CustomMessageEntry) and e.custom_type == "ama.rewind-note"]
        assert len(note) == 1 and "a.txt" in note[0].content and "b.txt" in note[0].content and note[0].display is False
        # code only, back to the first message: conversation kept, files restored
        p1 = agent.rewind_points()[0]["entryId"]
        leaf = agent.session.leaf_id
        res = await agent.rewind(p1, "code")
        assert "conversation" not in res and agent.session.leaf_id == leaf
        assert not (ws / "a.txt").exists()
        await agent.prompt("next")
        notes = [e.content for e in agent.session.entries if isinstance(e, CustomMessageEntry) and e.custom_type == "ama.rewind-note"]
        assert len(notes) == 2 and "restored to their state before user message #1" in notes[1]
        await agent.close()

    run(go())


def test_code_only_then_conversation_rewind_sends_only_the_true_note(tmp_path: Path, ws: Path) -> None:
    async def go():
        agent, _ = await two_turns(tmp_path)
        p1, p2 = (p["entryId"] for p in agent.rewind_points())
        await agent.rewind(p2, "code")  # files back to before #2, conversation kept
        await agent.rewind(p1, "conversation")  # conversation back to before #1: a.txt is newer
        await agent.prompt("start over")
        ctx = agent.session.context().messages
        notes = [m.content for m in ctx if getattr(m, "custom_type", None) == "ama.rewind-note"]
        assert len(notes) == 1 and notes[0].startswith("The conversation was rewound") and "a.txt" in notes[0]
        await agent.close()

    run(go())


def test_errors(tmp_path: Path, ws: Path) -> None:
    async def go():
        agent, _ = await two_turns(tmp_path)
        with pytest.raises(AmaError) as err:
            await agent.rewind(agent.session.entries[0].id)
        assert err.value.code == "invalid_arguments"
        with pytest.raises(AmaError) as err:
            await agent.rewind(agent.rewind_points()[0]["entryId"], "sideways")
        assert err.value.code == "invalid_arguments"
        await agent.close()
        mem, _ = await make_agent(ws, write_script(tmp_path / "m.json", ["x"]), session="memory")
        await mem.prompt("hi")
        point = mem.rewind_points()[0]
        assert point["hasCheckpoint"] is False
        with pytest.raises(AmaError) as err:
            await mem.rewind(point["entryId"], "both")
        assert err.value.code == "no_checkpoint"
        await mem.rewind(point["entryId"], "conversation")
        assert mem.session.leaf_id is not None  # back to before the first user message
        await mem.close()

    run(go())


def test_conflicting_manual_change_is_skipped_unless_overwrite(tmp_path: Path, ws: Path) -> None:
    async def go():
        agent, _ = await two_turns(tmp_path)
        (ws / "a.txt").write_text("my own edit\n")
        p2 = agent.rewind_points()[1]["entryId"]
        res = await agent.rewind(p2, "code")
        assert res["code"]["conflicts"] == ["a.txt"] and (ws / "a.txt").read_text() == "my own edit\n"
        res = await agent.rewind(p2, "code", on_conflict="overwrite")
        assert "a.txt" in res["code"]["restored"] and (ws / "a.txt").read_text() == "A1\n"
        await agent.close()

    run(go())


def test_summaries(tmp_path: Path, ws: Path) -> None:
    async def go():
        model = write_script(tmp_path / "s.json", ["one", "two", "SUMMARY OF BRANCH", "SUMMARY UP TO"], mode="sequence")
        agent, _ = await make_agent(ws, model)
        await agent.prompt("first")
        await agent.prompt("second")
        p = agent.rewind_points()
        res = await agent.summarize_from(p[1]["entryId"])
        assert res["summary"] == "SUMMARY OF BRANCH" and res["draft"]["text"] == "second"
        bs = agent.session.tree.get(res["leafId"])
        assert isinstance(bs, BranchSummaryEntry) and agent.session.tree.parent[bs.id] == agent.session.tree.parent[p[1]["entryId"]]
        ctx = agent.session.context()
        assert type(ctx.messages[-1]).__name__ == "BranchSummaryMessage"
        res = await agent.summarize_up_to(agent.rewind_points()[0]["entryId"])
        comp = agent.session.tree.get(res["entryId"])
        assert isinstance(comp, CompactionEntry) and comp.first_kept_entry_id == p[0]["entryId"]
        assert agent.session.leaf_id == comp.id
        with pytest.raises(AmaError) as err:
            await agent.summarize_up_to(agent.session.entries[0].id)
        assert err.value.code == "invalid_arguments"
        await agent.close()

    run(go())


class Recorder(BaseHTTPRequestHandler):
    bodies: list[bytes] = []

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        Recorder.bodies.append(body)
        n = len(Recorder.bodies)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        delta = json.dumps({"choices": [{"index": 0, "delta": {"content": f"answer {n}"}, "finish_reason": "stop"}]})
        self.wfile.write(f"data: {delta}\n\ndata: [DONE]\n\n".encode())


def test_first_request_after_rewind_is_byte_identical_up_to_the_point(tmp_path: Path, ws: Path, ama_home: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Recorder.bodies = []
    (ama_home / "config.json").write_text(json.dumps({"providers": {"rec": {
        "api": "openai-completions", "baseUrl": f"http://127.0.0.1:{server.server_address[1]}/v1", "apiKey": "k",
        "models": [{"id": "m", "contextWindow": 100000, "maxTokens": 1000}]}}}))  # fmt: skip

    async def go():
        agent, _ = await make_agent(ws, "rec/m")
        await agent.prompt("first question")
        await agent.prompt("second question")
        await agent.rewind(agent.rewind_points()[1]["entryId"], "conversation")
        await agent.prompt("second question, rephrased")
        await agent.close()

    try:
        run(go())
    finally:
        server.shutdown()
    before, after = Recorder.bodies[1], Recorder.bodies[2]
    common = 0
    while common < min(len(before), len(after)) and before[common] == after[common]:
        common += 1
    shared = before[:common]
    # everything up to the rewound message is byte-identical (system, tools, earlier messages)
    assert b"first question" in shared and b"answer 1" in shared
    assert json.loads(before)["messages"][:-1] == json.loads(after)["messages"][:-1]
    # the first differing byte is inside the rewritten user message, the last one sent
    assert shared.endswith(b'{"content":"second question') and after[common:].startswith(b", rephrased")


def test_shadow_git_rewinds_bash_changes(tmp_path: Path, ws: Path, ama_home: Path) -> None:
    (ama_home / "config.json").write_text(json.dumps({"checkpoints": {"mode": "shadow-git"}}))
    (ws / "keep.txt").write_text("original\n")
    model = write_script(
        tmp_path / "s.json",
        [
            {"toolCalls": [{"name": "bash", "arguments": {"command": "echo new > made.txt && echo changed > keep.txt && rm -f gone.txt"}}]},
            "done with bash",
            "second turn",
        ],
        mode="sequence",
    )
    (ws / "gone.txt").write_text("to be deleted\n")

    async def go():
        agent, _ = await make_agent(ws, model, permission_mode="full-auto")
        await agent.prompt("shuffle files with bash")
        await agent.prompt("anything")  # a new turn: its snapshot holds bash's changes
        point = agent.rewind_points()[0]["entryId"]
        res = await agent.rewind(point, "both")
        await agent.close()
        return res

    res = run(go())
    assert not (ws / "made.txt").exists()
    assert (ws / "keep.txt").read_text() == "original\n" and (ws / "gone.txt").read_text() == "to be deleted\n"
    assert sorted(res["code"]["restored"]) == ["gone.txt", "keep.txt"] and res["code"]["deleted"] == ["made.txt"]
    assert res["code"]["conflicts"] == []
