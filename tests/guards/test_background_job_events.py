"""`background_job` events over RPC: every start, exit and stop reaches the client."""

from __future__ import annotations

from pathlib import Path

from tests.agent.helpers import write_script
from tests.rpc.helpers import Rpc


def bash(command: str) -> dict:
    return {"toolCalls": [{"name": "bash", "arguments": {"command": command, "background": True}}]}


def test_started_exited_and_stopped_over_rpc(tmp_path: Path) -> None:
    turns = [
        bash("sleep 0.2; echo done; exit 3"),
        {"toolCalls": [{"name": "bash_output", "arguments": {"job_id": "bg1", "wait": 10}}]},
        bash("sleep 60"),
        {"toolCalls": [{"name": "bash_kill", "arguments": {"job_id": "bg2"}}]},
        bash("sleep 60"),
        {"text": "three jobs"},
    ]
    rpc = Rpc(tmp_path, "--model", write_script(tmp_path / "s.json", turns), "--permission-mode", "full-auto")
    assert rpc.call("prompt", message="jobs")["success"] is True
    rpc.event("agent_settled")
    assert rpc.close() == 0  # closing the session stops the third job
    jobs = [m for m in rpc.seen if m.get("type") == "background_job"]
    phases = [(j["jobId"], j["phase"], j.get("exitCode")) for j in jobs]
    assert phases == [
        ("bg1", "started", None),
        ("bg1", "exited", 3),
        ("bg2", "started", None),
        ("bg2", "stopped", phases[3][2]),
        ("bg3", "started", None),
        ("bg3", "stopped", phases[5][2]),
    ]
    for j in jobs:
        assert j["command"] in ("sleep 0.2; echo done; exit 3", "sleep 60")
        assert isinstance(j["pid"], int) and j["outputPath"].endswith(".log")
    assert {j["pid"] for j in jobs if j["jobId"] == "bg2"} == {jobs[2]["pid"]}
    assert Path(jobs[1]["outputPath"]).read_text() == "done\n"
    # a stop reports how the process ended (a signal is 128 + its number)
    assert jobs[3]["exitCode"] is not None and jobs[5]["exitCode"] is not None
