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
