"""Golden RPC transcripts (ids, times and paths normalized); UPDATE_GOLDEN=1 regenerates them."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.agent.helpers import normalize, write_script
from tests.conftest import FIXTURES
from tests.rpc.helpers import Rpc


def compare(name: str, lines: list[dict], root: Path, home: Path, ws: Path) -> None:
    from ama.session.layout import encode_cwd

    path = FIXTURES / "rpc" / name
    text = "\n".join(json.dumps(x, sort_keys=True, ensure_ascii=False) for x in normalize(lines, root=str(root))) + "\n"
    text = text.replace(str(home), "<home>").replace(encode_cwd(str(ws)), "--<ws>--")
    if os.environ.get("UPDATE_GOLDEN") == "1" or not path.exists():
        path.write_text(text)
    assert text.splitlines() == path.read_text().splitlines()


def test_prompt_transcript(tmp_path: Path, ama_home: Path) -> None:
    model = write_script(tmp_path / "s.json", [{"text": "Hello! How can I help?", "usage": {"input": 12, "output": 7}}])
    ws = tmp_path / "ws"
    ws.mkdir()
    rpc = Rpc(ws, "--model", model)
    try:
        rpc.event("session_start")
        rpc.call("prompt", message="hi")
        rpc.event("agent_settled")
        rpc.call("get_last_assistant_text")
    finally:
        assert rpc.close() == 0
    compare("prompt.out.jsonl", rpc.seen, tmp_path, ama_home, ws)


def test_rewind_transcript(tmp_path: Path, ama_home: Path) -> None:
    """get_rewind_points -> rewind both dryRun -> rewind both (session_rewound before its
    RewindResult; c.txt deleted) -> summarize_up_to on a non-point -> invalid_arguments ->
    points again.  entry_appended and message_update are left out, as in the seed."""
    ws = tmp_path / "ws"
    ws.mkdir()
    model = write_script(
        tmp_path / "s.json",
        [
            "first reply",
            {"toolCalls": [{"name": "write", "arguments": {"path": "c.txt", "content": "c\n"}}]},
            "wrote c.txt",
        ],
        mode="sequence",
    )
    rpc = Rpc(ws, "--model", model, "--permission-mode", "full-auto")
    try:
        rpc.event("session_start")
        rpc.call("prompt", message="first")
        rpc.event("agent_settled")
        rpc.call("prompt", message="create c.txt")
        rpc.event("agent_settled")
        mark = len(rpc.seen)
        points = rpc.call("get_rewind_points")["data"]["points"]
        second = points[1]["entryId"]
        dry = rpc.call("rewind", entryId=second, mode="both", dryRun=True)
        assert dry["data"]["code"]["deleted"] == ["c.txt"] and (ws / "c.txt").exists()
        done = rpc.call("rewind", entryId=second, mode="both")
        assert not (ws / "c.txt").exists()
        entries = rpc.call("get_entries")["data"]["entries"]
        not_a_point = next(e["id"] for e in entries if e.get("type") == "model_change")
        bad = rpc.call("summarize_up_to", entryId=not_a_point)
        assert bad["error"]["code"] == "invalid_arguments"
        again = rpc.call("get_rewind_points")["data"]["points"]
        assert [p["entryId"] for p in again] == [points[0]["entryId"]]
        assert done["data"]["conversation"]["draft"]["text"] == "create c.txt"
    finally:
        assert rpc.close() == 0
    kept = [m for m in rpc.seen[mark:] if m["type"] not in ("entry_appended", "message_update")]
    kept = [m for m in kept if not (m["type"] == "response" and m["command"] == "get_entries")]
    types = [m["type"] if m["type"] != "response" else f"response:{m['command']}" for m in kept]
    assert types.index("session_rewound") < types.index("response:rewind", types.index("response:rewind") + 1)
    compare("rewind.out.jsonl", kept, tmp_path, ama_home, ws)
