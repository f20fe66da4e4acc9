"""ama's files stay readable by pi: every kind of ama file (navigate, rewind, labels,
compaction, branch summary, fork) gives pi the same conversation as ama's projection.

Always checked against a Python re-implementation of pi's context building
(tests/session/pi_context.py); also against pi itself when ``AMA_TEST_PI_DIR`` names a
directory where ``npm install @mariozechner/pi-coding-agent`` was run (Node on PATH).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from ama.messages import SystemMessage
from ama.session.entries import LEAF_MARK
from ama.session.fork import fork_session
from ama.session.store import Session
from tests.session.helpers import assistant, simple_session, user
from tests.session.pi_context import comparable, pi_context

CWD = "/work/proj"


def ama_context(path: Path) -> list[tuple]:
    msgs = msgspec.to_builtins(Session.load(path).context().messages)
    return comparable(msgs)


def navigated(d: Path) -> Path:
    s = simple_session(d)  # two turns
    s.navigate(s.entries[3].id)  # back to the first answer: the file ends with the move
    s.close()
    return Path(s.path)


def navigated_then_continued(d: Path) -> Path:
    s = simple_session(d)
    s.navigate(s.entries[3].id)
    s.append_message(user("another way"))
    s.append_message(assistant("the other answer"))
    s.close()
    return Path(s.path)


def navigated_before_the_first_entry(d: Path) -> Path:
    s = simple_session(d, turns=1)
    s.navigate(None)
    s.close()
    return Path(s.path)


def labelled(d: Path) -> Path:
    s = simple_session(d)
    s.set_label(s.entries[0].id, "start")
    s.navigate(s.entries[3].id)
    s.set_label(s.entries[4].id, "abandoned")
    s.close()
    return Path(s.path)


def compacted(d: Path) -> Path:
    s = Session.create(CWD, d)
    s.append_message(SystemMessage(content="sys"))
    s.append_message(user("u1"))
    s.append_message(assistant("a1"))
    kept = s.append_message(user("u2"))
    s.append_message(assistant("a2"))
    s.append_compaction("what happened in u1", kept.id, 1000)
    s.append_message(user("u3"))
    s.append_message(assistant("a3"))
    s.navigate(kept.id)  # and a move after the compaction
    s.close()
    return Path(s.path)


def branch_summarized(d: Path) -> Path:
    s = simple_session(d)
    old_leaf = s.leaf_id
    s.navigate(s.entries[3].id)
    s.append_branch_summary(old_leaf, "tried question 2, gave up")
    s.append_message(user("new question"))
    s.close()
    return Path(s.path)


def forked(d: Path) -> Path:
    s = simple_session(d)
    s.navigate(s.entries[3].id)
    s.append_message(user("on the new branch"))
    s.close()
    _, child = fork_session(s.path, str(d))
    return Path(child)


def rewound(d: Path) -> Path:
    """A real conversation rewind by the agent, with the rewind note of the next prompt,
    then a second rewind that leaves the file ending in the move."""
    from tests.agent.helpers import make_agent, write_script

    ws = d / "ws"
    ws.mkdir()
    turns = [{"toolCalls": [{"name": "write", "arguments": {"path": "a.txt", "content": "A\n"}}]}, "wrote a"]
    model = write_script(d / "s.json", turns + ["ok"] * 6, mode="sequence")

    async def go() -> str:
        agent, _ = await make_agent(ws, model, permission_mode="full-auto", session_dir=str(d / "sessions"))
        await agent.prompt("create a")
        await agent.prompt("second")
        await agent.rewind(agent.rewind_points()[0]["entryId"], "conversation")  # a.txt stays: a note
        await agent.prompt("again")
        await agent.prompt("third")
        await agent.rewind(agent.rewind_points()[1]["entryId"], "conversation")
        path = agent.session.path
        await agent.close()
        return path

    return Path(asyncio.run(go()))


KINDS: dict[str, Callable[[Path], Path]] = {
    "navigate": navigated,
    "navigate+continue": navigated_then_continued,
    "navigate-to-root": navigated_before_the_first_entry,
    "labels": labelled,
    "compaction": compacted,
    "branch-summary": branch_summarized,
    "fork": forked,
    "rewind": rewound,
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_pi_reads_the_same_conversation_as_ama(kind: str, tmp_path: Path) -> None:
    path = KINDS[kind](tmp_path)
    ama = ama_context(path)
    pi = comparable(pi_context(path))
    assert pi == ama
    if kind != "navigate-to-root":
        assert any(role == "user" for role, *_ in ama)


def test_a_leaf_move_is_a_custom_entry_parented_on_the_new_leaf(tmp_path: Path) -> None:
    path = navigated(tmp_path)
    last = json.loads(path.read_bytes().splitlines()[-1])
    s = Session.load(path)
    assert last["type"] == "custom" and last["customType"] == LEAF_MARK
    assert last["parentId"] == s.leaf_id == s.entries[3].id
    assert list(last)[:4] == ["type", "id", "parentId", "timestamp"]
    # not a branch of its own, and the next entry is a sibling of the abandoned branch
    assert s.tree.tips() == [s.entries[7].id]
    assert s.tree.children(s.entries[3].id) == [s.entries[4].id]


def test_old_bare_leaf_lines_are_still_read(tmp_path: Path) -> None:
    s = simple_session(tmp_path)
    target = s.entries[3].id
    s.close()
    with open(s.path, "ab") as f:
        f.write(json.dumps({"type": "leaf", "targetId": target, "timestamp": "2026-01-01T00:00:00.000Z"}).encode() + b"\n")
    assert Session.load(s.path).leaf_id == target
    assert [m for m in ama_context(Path(s.path))][-1][0] == "assistant"
    assert pi_context(Path(s.path)) == []  # what pi makes of it: the reason for the ama.leaf entry


def test_ama_continues_a_file_that_pi_continued_after_a_leaf_move(tmp_path: Path) -> None:
    path = navigated(tmp_path)
    mark = json.loads(path.read_bytes().splitlines()[-1])
    line = {"type": "message", "id": "feedbeef", "parentId": mark["id"], "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "from pi"}], "timestamp": 1}}  # fmt: skip
    with open(path, "ab") as f:
        f.write(json.dumps(line).encode() + b"\n")
    s = Session.load(path)
    assert s.leaf_id == "feedbeef"
    assert ama_context(path) == comparable(pi_context(path))
    assert ama_context(path)[-1] == ("user", json.dumps([{"text": "from pi", "type": "text"}]))


PI_DIR = os.environ.get("AMA_TEST_PI_DIR")
PI_SCRIPT = """
import { pathToFileURL } from "node:url";
import { join } from "node:path";
const mod = await import(pathToFileURL(join(process.env.PI_DIR, "node_modules/@mariozechner/pi-coding-agent/dist/index.js")));
const sm = mod.SessionManager.open(process.argv[2], process.argv[3]);
process.stdout.write(JSON.stringify(sm.buildSessionContext().messages));
"""


@pytest.mark.skipif(not PI_DIR or not shutil.which("node"), reason="set AMA_TEST_PI_DIR to a dir with pi installed")
def test_pi_itself_reads_the_same_conversation_as_ama(tmp_path: Path) -> None:
    script = tmp_path / "ctx.mjs"
    script.write_text(PI_SCRIPT)
    for kind, make in KINDS.items():
        d = tmp_path / kind
        d.mkdir()
        path = make(d)
        copy = d / "copy.jsonl"  # pi may rewrite a file it opens: give it a copy
        shutil.copy(path, copy)
        out = subprocess.run(
            ["node", str(script), str(copy), str(d / "pi-sessions")],
            capture_output=True, text=True, env={**os.environ, "PI_DIR": str(PI_DIR)}, timeout=120,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        assert comparable(json.loads(out.stdout)) == ama_context(path), kind
