"""`ama --mode acp` driven by the agent-client-protocol package's client side, as an editor would."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from acp.exceptions import RequestError
from acp.helpers import text_block
from acp.schema import McpServerStdio

from ama.session.catalog import resolve
from tests.acp.driver import Client, ama_acp, of_kind, statuses, text_of, tool_calls
from tests.agent.helpers import write_script
from tests.conftest import ama_cmd

pytestmark = pytest.mark.anyio


def _sessions(ama_home: Path) -> str:
    return str(ama_home / "sessions")


async def test_initialize_and_new_session(tmp_path: Path, ama_home: Path) -> None:
    model = write_script(tmp_path / "s.json", ["hi"])
    client = Client()
    async with ama_acp(client, tmp_path, "--model", model) as conn:
        init = client.init
        assert init.protocol_version == 1
        assert init.agent_info.name == "ama"
        caps = init.agent_capabilities
        assert caps.load_session is True
        assert caps.prompt_capabilities.image is True and caps.prompt_capabilities.audio is False
        work = tmp_path / "work"
        work.mkdir()
        mcp = McpServerStdio(name="x", command="/bin/true", args=[], env=[])
        new = await conn.new_session(cwd=str(work), mcp_servers=[mcp])  # ignored, with a note
        assert new.modes.current_mode_id == "default"
        assert [m.id for m in new.modes.available_modes] == [
            "plan",
            "allowlist",
            "default",
            "auto-edit",
            "auto",
            "full-auto",
        ]
        with pytest.raises(RequestError):
            await conn.new_session(cwd="relative/dir", mcp_servers=[])
        await conn.prompt(session_id=new.session_id, prompt=[text_block("hello")])  # the file is written
    found = resolve(_sessions(ama_home), new.session_id)  # the ACP session is an ama session
    assert found.id == new.session_id and found.cwd == str(work)
    assert "MCP" in (tmp_path / "ama-acp.stderr").read_text()


async def test_prompt_streams_thinking_and_text(tmp_path: Path) -> None:
    model = write_script(
        tmp_path / "s.json", [{"thinking": "Let me think.", "text": ["Hello ", "from ", "ama."]}]
    )
    client = Client()
    async with ama_acp(client, tmp_path, "--model", model) as conn:
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        resp = await conn.prompt(session_id=sid, prompt=[text_block("say hello")])
    assert resp.stop_reason == "end_turn"
    assert {s for s, _ in client.updates} == {sid}
    updates = client.take()
    assert text_of(updates, "agent_thought_chunk") == "Let me think."
    chunks = [u["content"]["text"] for u in of_kind(updates, "agent_message_chunk")]
    assert chunks == ["Hello ", "from ", "ama."]  # one update per streamed delta
    assert not of_kind(updates, "user_message_chunk")  # the client shows its own prompt


async def test_read_edit_bash_tool_calls(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    model = write_script(
        tmp_path / "s.json",
        [
            {"toolCalls": [
                {"id": "r1", "name": "read", "arguments": {"path": "a.txt"}},
                {"id": "e1", "name": "edit", "arguments": {"path": "a.txt", "old_string": "two", "new_string": "zwei"}},
                {"id": "b1", "name": "bash", "arguments": {"command": "echo from-bash"}},
            ]},
            "All done.",
        ],
    )  # fmt: skip
    client = Client(answers=["allow_once", "allow_once"])
    async with ama_acp(client, tmp_path, "--model", model) as conn:
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        resp = await conn.prompt(session_id=sid, prompt=[text_block("edit a.txt")])
    assert resp.stop_reason == "end_turn"
    assert (tmp_path / "a.txt").read_text() == "one\nzwei\n"
    updates = client.take()
    calls = tool_calls(updates)
    assert list(calls) == ["r1", "e1", "b1"]
    target = str(tmp_path / "a.txt")

    read, edit, bash = calls["r1"], calls["e1"], calls["b1"]
    assert [u["sessionUpdate"] for u in read] == ["tool_call", "tool_call_update"]
    assert read[0]["kind"] == "read" and read[0]["title"] == "Read a.txt"
    assert read[0]["locations"] == [{"path": target, "line": 1}]
    assert statuses(read) == ["pending", "completed"]
    assert "two" in read[-1]["content"][0]["content"]["text"]

    assert edit[0]["kind"] == "edit" and edit[0]["locations"][0]["path"] == target
    assert statuses(edit) == ["pending", "in_progress", "completed"]
    diffs = [c for c in edit[-1]["content"] if c["type"] == "diff"]
    assert diffs and diffs[0]["path"] == target
    assert (
        "two" in diffs[0]["oldText"] and "zwei" in diffs[0]["newText"] and "zwei" not in diffs[0]["oldText"]
    )

    assert bash[0]["kind"] == "execute" and bash[0]["rawInput"] == {"command": "echo from-bash"}
    assert (
        statuses(bash)[0] == "pending"
        and statuses(bash)[1] == "in_progress"
        and statuses(bash)[-1] == "completed"
    )
    assert "from-bash" in bash[-1]["content"][0]["content"]["text"]

    # default mode asked for the edit and the command (not the read), each about its tool call
    assert [a["toolCall"]["toolCallId"] for a in client.asks] == ["e1", "b1"]
    assert [o["kind"] for o in client.asks[0]["options"]] == ["allow_once", "allow_always", "reject_once"]
    assert client.asks[0]["toolCall"]["kind"] == "edit"
    assert text_of(updates) == "All done."


async def test_locations_follow_read_edit_write_grep(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("import os\n\n\ndef f():\n    return 1\n")
    (tmp_path / "src" / "b.py").write_text("x = 1\ny = 2\nz = 3\n")
    model = write_script(
        tmp_path / "s.json",
        [
            {"toolCalls": [
                {"id": "r1", "name": "read", "arguments": {"path": "src/a.py", "offset": 3}},
                {"id": "r2", "name": "read", "arguments": {"path": "src/b.py"}},
                {"id": "e1", "name": "edit", "arguments": {"path": "src/a.py", "old_string": "return 1",
                                                           "new_string": "return 2"}},
                {"id": "w1", "name": "write", "arguments": {"path": "src/b.py", "content": "x = 1\ny = 2\nz = 4\n"}},
                {"id": "w2", "name": "write", "arguments": {"path": "src/new.py", "content": "print(1)\n"}},
                {"id": "g1", "name": "grep", "arguments": {"pattern": "return|z =", "path": "src", "output_mode": "content"}},
            ]},
            "Done.",
        ],
    )  # fmt: skip
    client = Client(answers=["allow_once"] * 3)
    async with ama_acp(client, tmp_path, "--model", model) as conn:
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        resp = await conn.prompt(session_id=sid, prompt=[text_block("go")])
    assert resp.stop_reason == "end_turn"
    calls = tool_calls(client.take())
    a, b, new = (str(tmp_path / "src" / n) for n in ("a.py", "b.py", "new.py"))
    assert calls["r1"][0]["locations"] == [{"path": a, "line": 3}]
    assert calls["r2"][0]["locations"] == [{"path": b, "line": 1}]
    assert calls["e1"][-1]["locations"] == [{"path": a, "line": 5}]  # the changed line, once known
    assert calls["w1"][-1]["locations"] == [{"path": b, "line": 1}]  # the first hunk's first line
    assert calls["w2"][-1]["locations"] == [{"path": new, "line": 1}]
    assert calls["g1"][-1]["locations"] == [{"path": a, "line": 5}, {"path": b, "line": 3}]
    # the asks show what the call would change, as diff content
    asks = {x["toolCall"]["toolCallId"]: x["toolCall"] for x in client.asks}
    assert list(asks) == ["e1", "w1", "w2"]
    w1 = [c for c in asks["w1"]["content"] if c["type"] == "diff"]
    assert w1 and w1[0]["path"] == b and "z = 3" in w1[0]["oldText"] and "z = 4" in w1[0]["newText"]
    w2 = [c for c in asks["w2"]["content"] if c["type"] == "diff"]
    assert w2 == [{"type": "diff", "path": new, "newText": "print(1)\n"}]
    e1 = [c for c in calls["e1"][-1]["content"] if c["type"] == "diff"]
    assert e1 and "return 1" in e1[0]["oldText"] and "return 2" in e1[0]["newText"]


async def test_permission_rejected_and_allowed_for_the_session(tmp_path: Path) -> None:
    bash = {"name": "bash", "arguments": {"command": "echo hi > made.txt"}}
    model = write_script(
        tmp_path / "s.json",
        [{"toolCalls": [{"id": "b1", **bash}]}, "Not allowed.",
         {"toolCalls": [{"id": "b2", **bash}]}, {"toolCalls": [{"id": "b3", **bash}]}, "Made it twice."],
    )  # fmt: skip
    client = Client(answers=["reject_once", "allow_always"])
    async with ama_acp(client, tmp_path, "--model", model) as conn:
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        resp = await conn.prompt(session_id=sid, prompt=[text_block("make a file")])
        assert resp.stop_reason == "end_turn"
        assert not (tmp_path / "made.txt").exists()
        rejected = tool_calls(client.take())["b1"]
        assert statuses(rejected) == ["pending", "failed"]
        assert "in_progress" not in statuses(rejected)

        resp = await conn.prompt(session_id=sid, prompt=[text_block("again, please")])
        assert resp.stop_reason == "end_turn"
    assert (tmp_path / "made.txt").read_text() == "hi\n"
    calls = tool_calls(client.take())
    assert statuses(calls["b2"])[-1] == "completed" and statuses(calls["b3"])[-1] == "completed"
    # "allow always" is ama's allow-for-this-session: the same command did not ask again
    assert [a["toolCall"]["toolCallId"] for a in client.asks] == ["b1", "b2"]


async def test_cancel_a_slow_reply_and_a_pending_permission(tmp_path: Path) -> None:
    slow = "word " * 200
    model = write_script(
        tmp_path / "s.json",
        [{"text": slow, "chunkSize": 5, "delayMs": 50},
         {"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo no > never.txt"}}]},
         "Still here."],
    )  # fmt: skip
    client = Client(answers=["cancelled"])
    async with ama_acp(client, tmp_path, "--model", model) as conn:
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        first = asyncio.Event()
        client.on_update = lambda u: first.set() if u["sessionUpdate"] == "agent_message_chunk" else None
        task = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("talk")]))
        await first.wait()
        await conn.cancel(session_id=sid)
        assert (await task).stop_reason == "cancelled"
        got = text_of(client.take())
        assert got and slow.startswith(got) and got != slow

        async def cancel_then_answer(ask: dict) -> None:  # as the protocol asks of a client
            await conn.cancel(session_id=sid)

        client.on_update = None
        client.on_ask = cancel_then_answer
        resp = await conn.prompt(session_id=sid, prompt=[text_block("run it")])
        assert resp.stop_reason == "cancelled"
        assert statuses(tool_calls(client.take())["b1"]) == ["pending", "failed"]
        assert not (tmp_path / "never.txt").exists()

        client.on_ask = None
        resp = await conn.prompt(session_id=sid, prompt=[text_block("are you there?")])
        assert resp.stop_reason == "end_turn"
        assert text_of(client.take()) == "Still here."


async def test_load_replays_the_history(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("remember the milk\n")
    model = write_script(
        tmp_path / "s.json",
        [{"text": "Reading it.", "toolCalls": [{"id": "r1", "name": "read", "arguments": {"path": "notes.md"}}]},
         {"toolCalls": [{"id": "t1", "name": "todo", "arguments": {
             "action": "set", "items": [{"id": "1", "text": "buy milk", "status": "in_progress"}]}}]},
         "It says: remember the milk.",
         "Welcome back."],
    )  # fmt: skip
    first = Client()
    async with ama_acp(first, tmp_path, "--model", model) as conn:
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        resp = await conn.prompt(session_id=sid, prompt=[text_block("what is in notes.md?")])
        assert resp.stop_reason == "end_turn"
    live = first.take()
    assert of_kind(live, "plan")[-1]["entries"] == [
        {"content": "buy milk", "priority": "medium", "status": "in_progress"}
    ]

    client = Client()
    async with ama_acp(client, tmp_path, "--model", model) as conn:
        loaded = await conn.load_session(cwd=str(tmp_path), session_id=sid[:8], mcp_servers=[])
        assert loaded.modes.current_mode_id == "default"
        assert {s for s, _ in client.updates} == {sid[:8]}  # the id the client asked for
        history = client.take()
        assert [u["sessionUpdate"] for u in history] == [
            "user_message_chunk", "agent_message_chunk", "tool_call", "tool_call", "agent_message_chunk", "plan",
        ]  # fmt: skip
        assert history[0]["content"]["text"] == "what is in notes.md?"
        read = history[2]
        assert read["toolCallId"] == "r1" and read["kind"] == "read" and read["status"] == "completed"
        assert read["locations"] == [{"path": str(tmp_path / "notes.md"), "line": 1}]
        assert "remember the milk" in read["content"][0]["content"]["text"]
        assert text_of(history) == "Reading it.It says: remember the milk."
        assert history[-1]["entries"][0]["content"] == "buy milk"

        resp = await conn.prompt(session_id=sid[:8], prompt=[text_block("hello again")])
        assert resp.stop_reason == "end_turn"
        assert text_of(client.take()) == "Welcome back."
        await conn.load_session(cwd=str(tmp_path), session_id=sid, mcp_servers=[])  # open here already
        assert {s for s, _ in client.updates} == {sid}
        again = client.take()
        assert text_of(again, "user_message_chunk") == "what is in notes.md?hello again"
        assert text_of(again).endswith("Welcome back.")
        with pytest.raises(RequestError) as err:
            await conn.load_session(cwd=str(tmp_path), session_id="ffffffff-none", mcp_servers=[])
        assert err.value.code == -32002


async def test_stop_reasons_errors_and_modes(tmp_path: Path) -> None:
    model = write_script(
        tmp_path / "s.json",
        [{"text": "cut sh", "stopReason": "length"},
         {"text": "I won't.", "stopReason": "error"},
         {"toolCalls": [{"id": "r1", "name": "ls", "arguments": {}}]},
         {"error": {"status": 400, "type": "invalid_request_error", "message": "bad request"}},
         {"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo auto > auto.txt"}}]},
         "Ran it."],
    )  # fmt: skip
    client = Client()
    async with ama_acp(client, tmp_path, "--model", model, "--max-turns", "1") as conn:
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id

        async def stop(text: str) -> str:
            return (await conn.prompt(session_id=sid, prompt=[text_block(text)])).stop_reason

        assert await stop("one") == "max_tokens"
        assert await stop("two") == "refusal"
        assert await stop("three") == "max_turn_requests"
        with pytest.raises(RequestError) as err:
            await stop("four")
        assert "bad request" in str(err.value)

        await conn.set_session_mode(session_id=sid, mode_id="full-auto")
        assert of_kind(client.take(), "current_mode_update")[-1]["currentModeId"] == "full-auto"
        assert await stop("five") == "max_turn_requests"  # ran without asking, then the turn limit
        assert (tmp_path / "auto.txt").read_text() == "auto\n"
        assert client.asks == []
        await conn.set_session_mode(session_id=sid, mode_id="auto")
        assert of_kind(client.take(), "current_mode_update")[-1]["currentModeId"] == "auto"
        with pytest.raises(RequestError):
            await conn.set_session_mode(session_id=sid, mode_id="yolo")
        with pytest.raises(RequestError):
            await conn.prompt(session_id="no-such-session", prompt=[text_block("hi")])


def test_stdout_carries_only_protocol_and_stdin_close_exits_zero(tmp_path: Path, ama_home: Path) -> None:
    (ama_home / "config.json").write_text(json.dumps({"noSuchKey": 1}))  # a config warning
    model = write_script(tmp_path / "s.json", ["hi there"])
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": str(tmp_path), "mcpServers": []},
        },
    ]
    p = subprocess.Popen(
        ama_cmd("--mode", "acp", "--model", model), cwd=tmp_path,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert p.stdin is not None and p.stdout is not None
    for msg in lines:
        p.stdin.write(json.dumps(msg).encode() + b"\n")
    p.stdin.flush()
    out = [json.loads(p.stdout.readline()) for _ in range(2)]
    sid = out[1]["result"]["sessionId"]
    prompt = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
              "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}}  # fmt: skip
    p.stdin.write(json.dumps(prompt).encode() + b"\n")
    p.stdin.flush()
    rest: list[dict] = []
    while not rest or rest[-1].get("id") != 2:
        line = p.stdout.readline()
        assert line, "ama closed stdout before answering the prompt"
        rest.append(json.loads(line))  # every stdout line is a JSON-RPC message
    stdout, stderr = p.communicate(timeout=30)  # stdin closes: the agent exits
    assert p.returncode == 0, stderr
    assert stdout == b""
    assert all(m["jsonrpc"] == "2.0" for m in out + rest)
    assert rest[-1] == {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}
    assert [m["params"]["update"]["content"]["text"] for m in rest[:-1]] == ["hi there"]
    assert b"noSuchKey" in stderr


def test_without_the_package_exits_2(tmp_path: Path) -> None:
    code = "import sys; sys.modules['acp'] = None; from ama.cli.main import main; sys.exit(main(['--mode', 'acp']))"
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert p.returncode == 2
    assert "install ama[acp]" in p.stderr
    assert p.stdout == ""


async def test_templates_and_skills_are_available_commands_that_expand(tmp_path: Path, ama_home: Path) -> None:
    """ACP reads the same command catalog as the UI and RPC: templates and skills are offered
    as available commands, and a `/name args` prompt expands as it does everywhere."""
    work = tmp_path / "work"
    (work / ".ama" / "prompts").mkdir(parents=True)
    (work / ".ama" / "prompts" / "review.md").write_text(
        "---\ndescription: Review one file\nargument-hint: FILE\n---\nPlease review $1 carefully.\n"
    )
    (work / ".ama" / "skills" / "notes").mkdir(parents=True)
    (work / ".ama" / "skills" / "notes" / "SKILL.md").write_text(
        "---\nname: notes\ndescription: How to write release notes\n---\nKeep them short.\n"
    )
    model = write_script(tmp_path / "s.json", ["reviewed"])
    client = Client()
    async with ama_acp(client, tmp_path, "--model", model) as conn:
        new = await conn.new_session(cwd=str(work), mcp_servers=[])
        res = await conn.prompt(session_id=new.session_id, prompt=[text_block("/review calc.py")])
        assert res.stop_reason == "end_turn"
        updates = client.take()
    offered = of_kind(updates, "available_commands_update")
    assert offered, "no available_commands_update was sent"
    commands = {c["name"]: c for c in offered[0]["availableCommands"]}
    assert set(commands) == {"review", "skill:notes"}  # the terminal-only built-ins are not offered
    assert commands["review"]["description"] == "Review one file"
    assert commands["review"]["input"] == {"hint": "FILE"}
    assert text_of(updates) == "reviewed"
    data = resolve(_sessions(ama_home), new.session_id)
    lines = [json.loads(x) for x in Path(data.path).read_text().splitlines()]
    users = [e["message"]["content"] for e in lines if e.get("type") == "message" and e["message"]["role"] == "user"]
    assert "Please review calc.py carefully." in json.dumps(users)


@pytest.mark.parametrize("out_kind", ["file", "pipe"])
def test_requests_from_a_file_and_replies_to_a_file(tmp_path: Path, ama_home: Path, out_kind: str) -> None:
    """``ama --mode acp < requests.jsonl > replies.jsonl``: regular files, which the event
    loop cannot watch, are read and written directly (it was a traceback)."""
    model = write_script(tmp_path / "s.json", ["hi"])
    requests = tmp_path / "requests.jsonl"
    requests.write_text(
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
        + "\n"
        + json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/new",
                      "params": {"cwd": str(tmp_path), "mcpServers": []}})  # fmt: skip
        + "\n"
    )
    replies = tmp_path / "replies.jsonl"
    with requests.open("rb") as fin, replies.open("wb") as fout:
        p = subprocess.run(
            ama_cmd("--mode", "acp", "--model", model), cwd=tmp_path, stdin=fin,
            stdout=fout if out_kind == "file" else subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
        )  # fmt: skip
    assert p.returncode == 0, p.stderr.decode()
    text = replies.read_text() if out_kind == "file" else p.stdout.decode()
    out = [json.loads(line) for line in text.splitlines()]
    assert [m.get("id") for m in out] == [0, 1]
    assert out[0]["result"]["protocolVersion"] == 1
    assert out[1]["result"]["sessionId"]
    assert b"Traceback" not in p.stderr
