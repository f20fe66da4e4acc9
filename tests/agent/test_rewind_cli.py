"""`ama sessions rewind` end to end: sessions made by real `ama -p` processes, rewound by the
real command, with the same RewindResult as the agent's (RPC) rewind, and the CLI's exit
codes (bad arguments 2, busy 3, not found 5)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import msgspec
import pytest

from ama.session.store import Session
from tests.agent.helpers import make_agent, write_script
from tests.conftest import ama_cmd
from tests.session.pi_context import comparable, pi_context


def ama(ws: Path, *args: str, rc: int | None = 0) -> subprocess.CompletedProcess:
    p = subprocess.run(ama_cmd(*args), cwd=ws, capture_output=True, text=True, timeout=120)
    if rc is not None:
        assert p.returncode == rc, (p.returncode, p.stdout, p.stderr)
    return p


@pytest.fixture
def made(tmp_path: Path, ama_home: Path) -> tuple[Path, str, str]:
    """A workspace and its session: #1 created a.txt, #2 changed it and created b.txt, #3
    only talked (its checkpoint records what #2 left)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    s1 = write_script(tmp_path / "s1.json", [{"toolCalls": [{"name": "write", "arguments": {"path": "a.txt", "content": "A1\n"}}]}, "wrote a"])
    s2 = write_script(
        tmp_path / "s2.json",
        [
            {"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
            {"toolCalls": [{"name": "write", "arguments": {"path": "a.txt", "content": "A2\n"}}]},
            {"toolCalls": [{"name": "write", "arguments": {"path": "b.txt", "content": "B\n"}}]},
            "changed a, added b",
        ],
        mode="sequence",  # from its first turn, though the session already has replies
    )  # fmt: skip
    ama(ws, "-p", "create a", "--model", s1, "--permission-mode", "full-auto")
    ama(ws, "-p", "-c", "change a, add b", "--model", s2, "--permission-mode", "full-auto")
    assert (ws / "a.txt").read_text() == "A2\n" and (ws / "b.txt").exists()
    ama(ws, "-p", "-c", "thanks", "--model", write_script(tmp_path / "s3.json", ["you are welcome"], mode="sequence"))
    (row,) = json.loads(ama(ws, "sessions", "list", "--json").stdout)["sessions"]
    return ws, row["id"], row["path"]


def test_list_and_rewind_both_match_the_agents_rewind(made, tmp_path: Path) -> None:
    ws, sid, path = made
    points = json.loads(ama(ws, "sessions", "rewind", sid[:8], "--list", "--json").stdout)["points"]
    assert [(p["n"], p["text"], p["hasCheckpoint"]) for p in points] == [
        (1, "create a", True), (2, "change a, add b", True), (3, "thanks", True)
    ]  # fmt: skip
    human = ama(ws, "sessions", "rewind", sid[:8], "--list").stdout
    assert "#1" in human and "#2" in human and "change a, add b" in human

    dry = json.loads(ama(ws, "sessions", "rewind", sid, "2", "--dry-run", "--json").stdout)
    assert (ws / "a.txt").read_text() == "A2\n" and (ws / "b.txt").exists()  # nothing changed

    async def in_process() -> tuple[list, dict]:  # the agent RPC `rewind` calls, same file
        agent, _ = await make_agent(ws, write_script(tmp_path / "x.json", ["x"]), session=path)
        try:
            return agent.rewind_points(), await agent.rewind(points[1]["entryId"], "both", dry_run=True)
        finally:
            await agent.close()

    agent_points, agent_dry = asyncio.run(in_process())
    assert [{k: v for k, v in p.items() if k != "n"} for p in points] == agent_points
    assert dry == agent_dry
    assert dry["code"]["restored"] == ["a.txt"] and dry["code"]["deleted"] == ["b.txt"] and dry["code"]["dryRun"]

    done = json.loads(ama(ws, "sessions", "rewind", sid[:8], "2", "--json").stdout)  # default mode: both
    assert (ws / "a.txt").read_text() == "A1\n" and not (ws / "b.txt").exists()
    assert done["conversation"]["draft"] == {"text": "change a, add b"}
    assert {**done["code"], "dryRun": True} == dry["code"]
    s = Session.load(path)
    assert s.leaf_id == done["conversation"]["leafId"]
    assert [p["text"] for p in json.loads(ama(ws, "sessions", "rewind", sid[:8], "--list", "--json").stdout)["points"]] == ["create a"]
    # a file changed by hand is a conflict, left alone unless --on-conflict overwrite
    (ws / "a.txt").write_text("mine\n")
    conflict = json.loads(ama(ws, "sessions", "rewind", sid[:8], "1", "--mode", "code", "--dry-run", "--json").stdout)
    assert conflict["code"]["conflicts"] == ["a.txt"]
    ama(ws, "sessions", "rewind", sid[:8], "1", "--mode", "code", "--on-conflict", "overwrite")
    assert not (ws / "a.txt").exists()
    after = msgspec.to_builtins(Session.load(path).context().messages)
    assert comparable(pi_context(Path(path))) == comparable(after)  # pi reads the rewound file the same way


def test_code_then_conversation_leaves_only_the_true_note_for_the_next_prompt(made) -> None:
    ws, sid, path = made
    out = ama(ws, "sessions", "rewind", sid[:8], "2", "--mode", "code").stdout
    assert "restored: a.txt" in out and "deleted: b.txt" in out
    assert (ws / "a.txt").read_text() == "A1\n"
    ama(ws, "sessions", "rewind", sid[:8], "1", "--mode", "conversation")  # a.txt exists: it differs from #1
    ctx = json.loads(ama(ws, "sessions", "show", sid[:8], "--context", "--json").stdout)["messages"]
    notes = [m["content"] for m in ctx if m.get("customType") == "ama.rewind-note"]
    assert len(notes) == 1 and notes[0].startswith("The conversation was rewound") and "a.txt" in notes[0]


def test_exit_codes(made) -> None:
    ws, sid, path = made
    bad = ama(ws, "sessions", "rewind", sid[:8], "7", rc=2)
    assert "no rewind point #7" in bad.stderr and "Traceback" not in bad.stderr
    assert "'zz'" in ama(ws, "sessions", "rewind", sid[:8], "zz", rc=2).stderr
    ama(ws, "sessions", "rewind", sid[:8], "--mode", "sideways", rc=2)
    ama(ws, "sessions", "rewind", sid[:8], "1", "--list", rc=2)
    assert "nosuch" in ama(ws, "sessions", "rewind", "nosuch", rc=5).stderr
    err = json.loads(ama(ws, "sessions", "rewind", "nosuch", "--json", rc=5).stderr)
    assert err["error"]["code"] == "not_found"
    with Session.open(path):  # another process is writing it
        busy = ama(ws, "sessions", "rewind", sid[:8], rc=3)
        assert "is being written by process" in busy.stderr
        ama(ws, "sessions", "rewind", sid[:8], "--dry-run")  # a dry run only reads
        ama(ws, "sessions", "rewind", sid[:8], "--list")
    assert (ws / "a.txt").read_text() == "A2\n"  # nothing was restored


def test_the_last_turn_rewinds_from_a_new_process_without_false_conflicts(tmp_path: Path, ama_home: Path) -> None:
    """`ama -p` edits and exits; `ama sessions rewind` in another process restores: the
    edit/write results' `details.sha256` say the files on disk are ama's own work.  A file the
    user changed since is still a conflict."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("orig\n")
    (ws / "keep.txt").write_text("k\n")
    script = write_script(
        tmp_path / "s.json",
        [
            {"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}, {"name": "read", "arguments": {"path": "keep.txt"}}]},
            {"toolCalls": [
                {"name": "edit", "arguments": {"path": "a.txt", "old_string": "orig", "new_string": "changed"}},
                {"name": "edit", "arguments": {"path": "keep.txt", "old_string": "k", "new_string": "k2"}},
                {"name": "write", "arguments": {"path": "new.txt", "content": "new\n"}},
            ]},
            "done",
        ],
    )  # fmt: skip
    ama(ws, "-p", "change", "--model", script, "--permission-mode", "full-auto")
    (ws / "keep.txt").write_text("the user's\n")  # changed by hand after ama's edit
    (row,) = json.loads(ama(ws, "sessions", "list", "--json").stdout)["sessions"]
    res = json.loads(ama(ws, "sessions", "rewind", row["id"][:8], "--json").stdout)["code"]
    assert (res["restored"], res["deleted"], res["conflicts"]) == (["a.txt"], ["new.txt"], ["keep.txt"])
    assert (ws / "a.txt").read_text() == "orig\n" and not (ws / "new.txt").exists()
    assert (ws / "keep.txt").read_text() == "the user's\n"
