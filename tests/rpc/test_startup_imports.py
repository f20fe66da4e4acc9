"""RPC start-up answers ``get_state`` without loading what only a tool call or a prompt needs
(the permission pipeline, the secret rules, the hook runner, the turn loop): see the RPC
section of docs/performance.md.  The same run then shows that a tool call loads them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.agent.helpers import write_script

#: runs the CLI in RPC mode and writes, after each response, which of these modules are loaded
DRIVER = """
import sys
WATCH = %r
import ama.rpc.server as server
write = server.RpcServer.write
def traced(self, obj):
    write(self, obj)
    if obj.get("type") == "response":
        sys.stderr.write("LOADED " + obj.get("id", "") + " " + " ".join(m for m in WATCH if m in sys.modules) + "\\n")
server.RpcServer.write = traced
from ama.cli.main import main
sys.exit(main(sys.argv[1:]))
"""

LATE = (
    "ama.permissions._pipeline",
    "ama.permissions._dangerous",
    "ama.secret_patterns",
    "ama.hooks._runner",
    "ama.agent.run",
    "ama.session.catalog",
    "ama.session.reader",
)


def _loaded(tmp_path: Path, *args: str, lines: list[dict]) -> dict[str, set[str]]:
    stdin = "".join(json.dumps(x) + "\n" for x in lines)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER % (LATE,), "--mode", "rpc", *args],
        input=stdin, capture_output=True, text=True, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = {}
    for line in proc.stderr.splitlines():
        if line.startswith("LOADED "):
            rid, *mods = line.split()[1:]
            out[rid] = set(mods)
    return out


def test_first_response_loads_no_tool_machinery(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    model = write_script(
        tmp_path / "s.json",
        [{"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo hi"}}]}, "done"],
        mode="sequence",
    )
    loaded = _loaded(
        ws, "--model", model, "--permission-mode", "full-auto",
        lines=[{"type": "get_state", "id": "s0"}, {"type": "prompt", "id": "p1", "message": "go"},
               {"type": "get_state", "id": "s1"}],
    )  # fmt: skip
    # a new persisted session: no session file is read or looked up either
    assert loaded["s0"] == set()
    assert "ama.agent.run" in loaded["p1"]  # the prompt loads the turn loop
