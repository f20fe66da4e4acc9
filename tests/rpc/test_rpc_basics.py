"""RPC framing, bad input, exit behaviour, approvals, and rebuilding messages from deltas."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import msgspec

from ama.ai import Rebuilder
from ama.ai.events import Event
from ama.session.reader import read_session
from tests.agent.helpers import write_script
from tests.conftest import ama_cmd
from tests.rpc.helpers import Rpc


def test_pipe_one_prompt_returns_whole_reply_and_exits_zero(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", ["the whole reply"])
    p = subprocess.run(
        ama_cmd("--mode", "rpc", "--model", model), input=b'{"type":"prompt","message":"hi"}\n',
        cwd=tmp_path, capture_output=True, timeout=60,
    )
    assert p.returncode == 0, p.stderr
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    assert lines[0]["type"] == "hello" and lines[0]["protocolVersion"] == 1 and lines[0]["agent"] == "ama"
    assert lines[1]["type"] == "session_start" and lines[1]["reason"] == "startup"
    assert lines[-1]["type"] == "agent_settled"
    ends = [m for m in lines if m["type"] == "message_end" and m["message"]["role"] == "assistant"]
    assert ends[-1]["message"]["content"][0]["text"] == "the whole reply"


def test_bad_input_gets_errors_and_the_stream_goes_on(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", ["ok"])
    rpc = Rpc(tmp_path, "--model", model)
    try:
        rpc.event("session_start")
        rpc.send_raw(b'{"type": "get_state", "id": "a1"\n')  # not JSON, but shows its id
        r = rpc.until(lambda m: m.get("type") == "response")
        assert r["id"] == "a1" and r["error"]["code"] == "parse_error" and r["success"] is False
        rpc.send_raw(b"[1, 2, 3]\n")
        assert rpc.until(lambda m: m.get("type") == "response")["error"]["code"] == "parse_error"
        big = b'{"type":"prompt","id":"big","message":"' + b"x" * (10 * 1024 * 1024) + b'"}\n'
        rpc.send_raw(big)
        r = rpc.until(lambda m: m.get("type") == "response")
        assert r["error"]["code"] == "too_large" and r["id"] == "big"
        assert rpc.call("frobnicate")["error"]["code"] == "unknown_command"
        rpc.send_raw(b'{"id": "noType"}\n')
        r = rpc.until(lambda m: m.get("type") == "response")
        assert r["id"] == "noType" and r["error"]["code"] == "invalid_arguments"
        r = rpc.call("set_thinking_level", level=5)
        assert r["error"]["code"] == "invalid_arguments" and "level" in r["error"]["message"]
        state = rpc.call("get_state")
        assert state["success"] and state["data"]["busy"] is False and "plan_response" not in state["data"]["unsupported"]
    finally:
        assert rpc.close() == 0


def test_prompt_while_busy_is_refused_or_queued(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [{"text": ["a", "b", "c", "d"], "delayMs": 150}, "after"])
    rpc = Rpc(tmp_path, "--model", model)
    try:
        rpc.event("session_start")
        assert rpc.call("prompt", message="one")["success"]
        busy = rpc.call("prompt", message="two")
        assert busy["error"]["code"] == "busy"
        queued = rpc.call("prompt", message="three", streamingBehavior="followUp")
        assert queued["data"] == {"queued": "followUp"}
        rpc.until(lambda m: m.get("type") == "queue_update" and m["followUp"] == [])
        rpc.event("agent_settled")
        assert rpc.call("get_last_assistant_text")["data"]["text"] == "after"
    finally:
        assert rpc.close() == 0


def test_approvals_answered_early_late_and_denied_on_close(tmp_path: Path) -> None:
    call = {"name": "bash", "arguments": {"command": "echo hi > f.txt"}}
    model = write_script(tmp_path / "s.json", [{"toolCalls": [call]}, "done", {"toolCalls": [call]}, "done"])
    rpc = Rpc(tmp_path, "--model", model)
    try:
        rpc.event("session_start")
        assert rpc.call("set_client_capabilities", capabilities=["approvals"])["data"]["capabilities"] == ["approvals"]
        rpc.call("prompt", message="make a file")
        req = rpc.event("permission_request")
        assert req["toolName"] == "bash" and req["reason"] == "mode" and req["timeoutMs"] == 600_000
        r = rpc.call("permission_response", requestId=req["requestId"], decision="allow")
        assert r["data"]["accepted"] is True
        assert rpc.event("permission_resolved")["decision"] == "allow"
        rpc.event("agent_settled")
        assert (tmp_path / "f.txt").exists()
        (tmp_path / "f.txt").unlink()
        rpc.call("prompt", message="again")
        req = rpc.event("permission_request")
        # stdin closes while the ask is pending: denied, the run finishes, exit 0
    finally:
        code = rpc.close()
    assert code == 0
    resolved = [m for m in rpc.seen if m.get("type") == "permission_resolved"]
    assert [m["decision"] for m in resolved] == ["allow", "deny"]
    assert not (tmp_path / "f.txt").exists()
    assert rpc.seen[-1]["type"] == "agent_settled"


def test_early_answer_is_held_until_asked(tmp_path: Path) -> None:
    import asyncio

    from ama.permissions import Answer
    from ama.rpc.broker import RpcBroker

    broker = RpcBroker()
    broker.capabilities = {"approvals"}
    assert broker.respond("req-1", Answer("allow_once")) is False
    assert asyncio.run(broker.ask({"requestId": "req-1"})).kind == "allow_once"


def test_message_updates_rebuild_every_assistant_message_exactly(tmp_path: Path) -> None:
    model = write_script(
        tmp_path / "s.json",
        [
            {"thinking": "plan it", "text": ["Reading ", "the ", "file."], "toolCalls": [{"name": "ls", "arguments": {"path": "."}}]},
            {"text": ["Two ", "parts."], "chunkSize": 2},
        ],
    )
    rpc = Rpc(tmp_path, "--model", model)
    try:
        rpc.event("session_start")
        rpc.call("prompt", message="go")
        rpc.event("agent_settled")
        path = rpc.call("get_state")["data"]["sessionFile"]
    finally:
        rpc.close()
    dec = msgspec.json.Decoder(Event)
    rebuilt = []
    rb = None
    for m in rpc.seen:
        if m["type"] == "message_start" and m["message"]["role"] == "assistant":
            rb = Rebuilder()  # the start message is the partial message the deltas apply to
            rb.apply(dec.decode(json.dumps({"type": "start", "partial": m["message"]})))
        elif m["type"] == "message_update":
            rb.apply(dec.decode(json.dumps(m["assistantMessageEvent"])))
        elif m["type"] == "message_end" and m["message"]["role"] == "assistant":
            rebuilt.append(msgspec.to_builtins(rb.message)["content"])
    stored = [msgspec.to_builtins(e.message)["content"] for e in read_session(path).entries
              if e.type == "message" and type(e.message).__name__ == "AssistantMessage"]  # fmt: skip
    assert rebuilt == stored and len(stored) == 2


def test_unanswered_ask_times_out_and_abort_denies(tmp_path: Path) -> None:
    import os

    call = {"name": "bash", "arguments": {"command": "echo hi > f.txt"}}
    model = write_script(tmp_path / "s.json", [{"toolCalls": [call]}, "after timeout", {"toolCalls": [call]}, "x"], mode="sequence")
    os.environ["AMA_APPROVAL_TIMEOUT_MS"] = "300"
    try:
        rpc = Rpc(tmp_path, "--model", model)
    finally:
        del os.environ["AMA_APPROVAL_TIMEOUT_MS"]
    try:
        rpc.event("session_start")
        rpc.call("set_client_capabilities", capabilities=["approvals"])
        rpc.call("prompt", message="one")
        req = rpc.event("permission_request")
        assert req["timeoutMs"] == 300
        assert rpc.event("permission_resolved")["decision"] == "deny"  # nobody answered in time
        rpc.event("agent_settled")
        rpc.call("prompt", message="two")
        rpc.event("permission_request")
        aborted = rpc.call("abort")
        assert aborted["data"]["aborted"] is True
        late = rpc.call("permission_response", requestId=req["requestId"], decision="allow")
        assert late["data"]["accepted"] is False
    finally:
        rpc.close()
    resolved = [m["decision"] for m in rpc.seen if m.get("type") == "permission_resolved"]
    assert resolved == ["deny", "deny"] and not (tmp_path / "f.txt").exists()
