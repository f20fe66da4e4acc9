"""Long commands on an idle agent (``compact``, ``summarize_*``) run while the RPC loop keeps
reading: ``abort`` reaches them, reads are answered, and anything that would change the
session meanwhile is refused as ``busy``."""

from __future__ import annotations

from pathlib import Path

from tests.agent.helpers import write_script
from tests.rpc.helpers import Rpc


def test_abort_reaches_a_running_compaction(tmp_path: Path) -> None:
    turns = ["one", "two", {"text": "never", "delayMs": 20_000}]
    model = write_script(tmp_path / "s.json", turns, mode="sequence")
    ws = tmp_path / "ws"
    ws.mkdir()
    rpc = Rpc(ws, "--model", model)
    try:
        rpc.event("session_start")
        for text in ("first", "second"):
            rpc.call("prompt", message=text)
            rpc.event("agent_settled")
        before = rpc.call("get_entries")["data"]
        rid = rpc.send("compact")
        rpc.event("compaction_start")
        state = rpc.call("get_state")  # answered while the summary request streams
        refused = rpc.call("prompt", message="not now")
        aborted = rpc.call("abort")
        compact = next(m for m in rpc.seen if m.get("type") == "response" and m.get("id") == rid)
        end = next(m for m in rpc.seen if m.get("type") == "compaction_end")
        after = rpc.call("get_entries")["data"]
        again = rpc.call("prompt", message="third")  # idle again: prompts run
    finally:
        assert rpc.close() == 0
    assert state["success"] is True
    assert refused["success"] is False and refused["error"]["code"] == "busy"
    assert "compact is in progress" in refused["error"]["message"]
    assert aborted["data"]["aborted"] is True
    assert compact["success"] is False and compact["error"]["code"] == "aborted"
    assert end["aborted"] is True
    # the abort answers after the compaction's own response
    order = [m.get("id") for m in rpc.seen if m.get("type") == "response"]
    assert order.index(rid) < order.index(aborted["id"])
    kinds = [e.get("type") for e in after["entries"]]
    assert "compaction" not in kinds and again["success"] is True
    assert [e["id"] for e in after["entries"]][: len(before["entries"])] == [e["id"] for e in before["entries"]]
