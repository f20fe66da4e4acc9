"""RPC start-up answers ``hello``, ``session_start`` and a first ``get_state`` before the event
loop and the agent's parts load (rpc/start.py, the two steps of agent/compose.py): see the RPC
section of docs/performance.md.  The same runs show that the first other command loads them,
and a prompt the turn loop."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.agent.helpers import write_script

#: runs the CLI in RPC mode and writes to stderr, after each response line, the ama modules
#: and the watched modules loaded at that moment
DRIVER = """
import io, sys
WATCH = %r
class Tap(io.RawIOBase):
    def __init__(self, raw):
        self.raw = raw
    def writable(self):
        return True
    def write(self, b):
        n = self.raw.write(b)
        self.raw.flush()
        for line in bytes(b).splitlines():
            if line.startswith(b'{"type":"response"'):
                import json
                rid = json.loads(line).get("id")
                mods = [m for m in sys.modules if m.startswith("ama.") or m in WATCH]
                sys.stderr.write("LOADED " + json.dumps([rid, sorted(mods)]) + "\\n")
        return n
sys.stdout = io.TextIOWrapper(io.BufferedWriter(Tap(sys.stdout.buffer), 1 << 20), write_through=True)
from ama.cli.main import main
sys.exit(main(sys.argv[1:]))
"""

#: what the first answers may load: argument parsing, the config, the model registry, the
#: session store, the first step of the build, and the start-up of RPC mode
FIRST_ANSWER = frozenset(
    """
    ama.agent ama.agent.compose ama.agent.limits ama.agent.options ama.agent.snapshot
    ama.ai ama.ai.cost ama.ai.errors ama.ai.events ama.ai.models ama.ai.registry ama.ai.types
    ama.cli ama.cli.agent ama.cli.main
    ama.config ama.config.external_agents ama.config.loader ama.config.paths ama.config.schema
    ama.errors ama.messages ama.modes ama.permission_modes
    ama.rpc ama.rpc.broker ama.rpc.jsonl ama.rpc.start
    ama.session ama.session.entries ama.session.layout ama.session.lease ama.session.projection
    ama.session.store ama.session.tree ama.session.writer
    """.split()
)

#: loaded only once the agent is finished (the first command other than get_state)
FINISHED = ("asyncio", "ama.rpc.server", "ama.agent.session", "ama.tools", "ama.agent.catalog", "ama.sandbox")
#: loaded only by a prompt, a tool call, or a lookup of an existing session
LATE = (
    "ama.permissions._pipeline",
    "ama.permissions._dangerous",
    "ama.secret_patterns",
    "ama.hooks._runner",
    "ama.agent.run",
    "ama.session.catalog",
    "ama.session.reader",
)


def _loaded(cwd: Path, *args: str, lines: list[dict]) -> dict[str, set[str]]:
    stdin = "".join(json.dumps(x) + "\n" for x in lines)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER % (FINISHED + LATE,), "--mode", "rpc", *args],
        input=stdin, capture_output=True, text=True, cwd=cwd, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = {}
    for line in proc.stderr.splitlines():
        if line.startswith("LOADED "):
            rid, mods = json.loads(line[len("LOADED ") :])
            out[rid] = set(mods)
    return out


def _http_model(home: Path) -> str:
    """A model of a declared OpenAI-compatible provider (nothing is requested from it here)."""
    models = [{"id": "m", "contextWindow": 100000, "maxTokens": 4096}]
    provider = {"api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1", "apiKey": "x", "models": models}
    (home / "config.json").write_text(json.dumps({"providers": {"local": provider}}))
    return "local/m"


def test_first_get_state_loads_only_the_first_step(tmp_path: Path, ama_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    loaded = _loaded(
        ws, "--model", _http_model(ama_home),
        lines=[{"type": "get_state", "id": "s0"}, {"type": "get_state", "id": "s1"},
               {"type": "get_commands", "id": "c0"}, {"type": "get_state", "id": "s2"}],
    )  # fmt: skip
    # a new persisted session: no event loop, no tools, no session file read or looked up
    for rid in ("s0", "s1"):
        assert loaded[rid] <= FIRST_ANSWER, sorted(loaded[rid] - FIRST_ANSWER)
        assert not loaded[rid] & set(FINISHED + LATE)
    assert set(FINISHED) <= loaded["c0"]  # the first other command finishes the agent
    assert not loaded["s2"] & set(LATE)


def test_prompt_loads_the_turn_loop(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    model = write_script(
        tmp_path / "s.json",
        [{"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo hi"}}]}, "done"],
        mode="sequence",
    )
    loaded = _loaded(
        ws, "--model", model, "--permission-mode", "full-auto", "--no-session",
        lines=[{"type": "get_state", "id": "s0"}, {"type": "prompt", "id": "p1", "message": "go"},
               {"type": "get_state", "id": "s1"}],
    )  # fmt: skip
    assert not loaded["s0"] & set(LATE)
    assert "ama.agent.run" in loaded["p1"]
    # an in-memory session loads no checkpoint code
    assert "ama.checkpoints.tracker" not in loaded["s1"]
