"""``auto`` over the wire: ``set_permission_mode auto``, ``autoDecision`` on
``permission_request`` and ``tool_execution_end``, ``denied``; and ``ama -p --permission-mode
auto`` (unattended: the classifier's "ask" is denied, the model is told why)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.agent.classifier_server import ASK, ClassifierServer
from tests.agent.helpers import write_script
from tests.conftest import ama_cmd
from tests.rpc.helpers import Rpc


def configure(home: Path, server: ClassifierServer) -> None:
    (home / "config.json").write_text(json.dumps({
        "providers": {"judge": server.provider()},
        "permissions": {"classifier": {"model": "judge/judge-small"}},
    }))  # fmt: skip


def bash_turns(*commands: str) -> list:
    return [{"toolCalls": [{"name": "bash", "arguments": {"command": c}}]} for c in commands] + ["done"]


def test_rpc_auto_mode_events(tmp_path: Path, ama_home: Path) -> None:
    server = ClassifierServer()
    configure(ama_home, server)
    ws = tmp_path / "ws"
    ws.mkdir()
    model = write_script(tmp_path / "s.json", bash_turns("rm -r dist", "make all", "make all"))
    rpc = Rpc(ws, "--model", model)
    try:
        rpc.event("session_start")
        rpc.call("set_client_capabilities", capabilities=["approvals"])
        bad = rpc.call("set_permission_mode", mode="automatic")
        assert bad["success"] is False and bad["error"]["code"] == "invalid_arguments"
        assert "auto" in bad["error"]["message"]
        assert rpc.call("set_permission_mode", mode="auto")["data"] == {"mode": "auto"}
        rpc.call("prompt", message="clean and build")
        req = rpc.event("permission_request")
        assert req["autoDecision"]["layer"] == "rule" and req["autoDecision"]["decision"] == "ask"
        assert "deletes files" in req["autoDecision"]["reason"]
        rpc.call("permission_response", requestId=req["requestId"], decision="deny")
        rpc.event("agent_settled")
    finally:
        rpc.close()
        server.close()
    ends = [m for m in rpc.seen if m.get("type") == "tool_execution_end"]
    assert [e["autoDecision"]["layer"] for e in ends] == ["rule", "classifier", "classifier"]
    assert ends[0]["denied"] is True and "denied" not in ends[1]
    assert [e["autoDecision"].get("cached", False) for e in ends] == [False, False, True]
    assert server.requests == 1


def test_print_mode_auto_denies_a_classifier_ask(tmp_path: Path, ama_home: Path) -> None:
    server = ClassifierServer(lambda _p: ASK)
    configure(ama_home, server)
    ws = tmp_path / "ws"
    ws.mkdir()
    model = write_script(tmp_path / "s.json", bash_turns("touch made-by-make && make all"))
    try:
        p = subprocess.run(
            ama_cmd("-p", "build", "--model", model, "--permission-mode", "auto", "--output-format", "stream-json"),
            cwd=ws, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        server.close()
    assert p.returncode == 0, p.stderr
    events = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    end = next(e for e in events if e.get("type") == "tool_execution_end")
    assert end["denied"] is True
    assert end["autoDecision"] == {"layer": "classifier", "decision": "ask", "reason": "this is not what the user asked for"}
    assert "non-interactive" in end["result"]["content"][0]["text"]
    assert not (ws / "made-by-make").exists() and server.requests == 1
    usage = [e for e in events if e.get("type") == "entry_appended" and e["entry"]["type"] == "usage"]
    assert [u["entry"]["kind"] for u in usage] == ["permission_classify"]
    stats = subprocess.run(ama_cmd("stats", "--json"), cwd=ws, capture_output=True, text=True, timeout=60)
    assert json.loads(stats.stdout)["requestsByKind"]["permission_classify"] == 1, stats.stderr


def test_cli_rejects_an_unknown_mode(tmp_path: Path, ama_home: Path) -> None:
    p = subprocess.run(ama_cmd("-p", "x", "--permission-mode", "yolo"), cwd=tmp_path, capture_output=True, text=True,
                       timeout=60)  # fmt: skip
    assert p.returncode == 2 and "auto" in p.stderr and "Traceback" not in p.stderr
