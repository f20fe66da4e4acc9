"""`ama sessions search`: matching, filters, order, locators, and index/scan parity."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ama.session.history import user_messages
from ama.session.reader import read_session
from tests.conftest import FIXTURES, ama_cmd
from tests.index.helpers import Builder, ama, restyle

PATTERNS = [
    "parser",
    "PARSER",
    "arse",
    "crash fix",
    "src/lexer.py",
    "read {",
    '"path"',
    "Ünïcode",
    "tabs",
    "zzz-no-such-thing",
    "/pars(er|ing)/i",
    "/^Fix/",
    "/lexer\\.py/",
    "e",
]


@pytest.fixture
def corpus(sessions_dir: Path, tmp_path: Path) -> dict:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    s1 = Builder(sessions_dir, str(a), created="2026-03-01T09:00:00.000Z")
    s1.user("Fix the PARSER crash fix on empty input", "2026-03-01T10:00:00.000Z")
    s1.assistant(
        "2026-03-01T10:00:05.000Z",
        "Looking at the parser",
        stop="toolUse",
        tools=[("read", {"path": "src/parser.py"})],
    )
    s1.result("2026-03-01T10:00:06.000Z", "def parse(text):\n    raise ValueError('empty')\n")
    s1.assistant("2026-03-01T10:00:10.000Z", "The parsing fails on empty input; fixed.")
    s1.raw(
        b'{"type":"message","id":"t1","parentId":"00000004","timestamp":"2026-03-01T10:00:11.000Z",'
        b'"message":{"role":"assistant","content":[{"type":"thinking","thinking":"secret parser musings"}],'
        b'"api":"x","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0},'
        b'"stopReason":"stop","timestamp":0}}\n'
    )
    s1.raw(
        b'{"type":"custom_message","id":"cm1","parentId":"t1","timestamp":"2026-03-01T10:00:12.000Z",'
        b'"customType":"x","content":"custom parser text","display":true}\n'
    )
    s2 = Builder(sessions_dir, str(a), created="2026-03-02T09:00:00.000Z")
    first = s2.user("rename the lexer", "2026-03-02T10:00:00.000Z")
    s2.assistant(
        "2026-03-02T10:00:05.000Z",
        "ok",
        stop="toolUse",
        tools=[("edit", {"path": "src/lexer.py", "note": "Ünïcode tabs"})],
    )
    s2.result("2026-03-02T10:00:06.000Z", "edited src/lexer.py")
    s2.user("now the parser please", "2026-03-02T10:01:00.000Z")
    s2.assistant("2026-03-02T10:01:05.000Z", "parser renamed too")
    s2.leaf(first)  # rewind to the first message: the parser turn is off the branch now
    s2.assistant("2026-03-02T10:02:00.000Z", "a different reply about tabs")
    s3 = Builder(sessions_dir, str(b), created="2026-03-03T09:00:00.000Z")
    s3.user("parser in another project", "2026-03-03T10:00:00.000Z")
    s3.assistant("2026-03-03T10:00:05.000Z", "sure", stop="error", error="boom")
    return {"a": str(a), "b": str(b), "s1": s1, "s2": s2, "s3": s3}


def search(*args: str, cwd: str | None = None) -> list[dict]:
    indexed = ama("sessions", "search", *args, "--json", cwd=cwd).stdout
    scanned = ama("sessions", "search", *args, "--json", "--no-cache", cwd=cwd).stdout
    assert indexed == scanned
    return [json.loads(line) for line in indexed.splitlines()]


def refs(hits: list[dict]) -> list[str]:
    return [f"{h['ref']}:{h['role']}" for h in hits]


def test_keyword_is_case_insensitive_and_ordered_newest_first(corpus: dict) -> None:
    s1, s2, s3 = corpus["s1"].sid[:8], corpus["s2"].sid[:8], corpus["s3"].sid[:8]
    hits = search("parser", "--all", "--limit", "50")
    assert refs(hits) == [
        f"{s3}#1:user",
        f"{s2}#2:user",
        f"{s2}@5:assistant",
        f"{s1}#1:user",
        f"{s1}@2:assistant",
        f"{s1}@2:tool",
    ]
    assert search("PARSER", "--all", "--limit", "50") == hits
    # thinking and custom messages are not searched
    assert not search("musings", "--all") and not search("custom parser text", "--all")


def test_locators_match_show_numbering_and_file_entries(corpus: dict) -> None:
    hits = search("parser", "--all", "--limit", "50")
    for h in hits:
        data = read_session(h["path"])
        entry = data.entries[h["entry"] - 1]
        assert entry.id == h["entryId"]
        if h["n"] is not None:
            users = user_messages(data.entries)
            assert users[h["n"] - 1].entry_id == h["entryId"]
            assert h["locator"] == f"#{h['n']}"


def test_rewound_away_branches_are_found_and_marked(corpus: dict) -> None:
    hits = search("parser", "--all", "--limit", "50")
    by = {h["ref"]: h for h in hits}
    s2 = corpus["s2"].sid[:8]
    assert by[f"{s2}#2"]["onBranch"] is False and by[f"{s2}@5"]["onBranch"] is False
    assert all(h["onBranch"] for h in hits if not h["ref"].startswith(s2))
    tabs = search("tabs", "--all")
    assert [(h["ref"], h["role"], h["onBranch"]) for h in tabs] == [
        (f"{s2}@2", "tool", False),  # the first reply was rewound away too
        (f"{s2}@6", "assistant", True),
    ]


def test_substrings_tool_calls_and_regexes(corpus: dict) -> None:
    s1 = corpus["s1"].sid[:8]
    assert refs(search("arse", "--all", "--role", "tool")) == [f"{s1}@2:tool", f"{s1}@3:tool"]
    call = search("read {", "--all")
    assert refs(call) == [f"{s1}@2:tool"] and call[0]["snippet"] == 'read {"path":"src/parser.py"}'
    assert len(search('"path"', "--all")) == 2
    assert refs(search("/^Fix/", "--all")) == [f"{s1}#1:user"]
    assert refs(search("/^fix/", "--all")) == []
    assert refs(search("/^fix/i", "--all")) == [f"{s1}#1:user"]
    assert search("Ünïcode", "--all")[0]["snippet"].startswith("edit ")
    assert search("üNÏCODE", "--all") == search("Ünïcode", "--all")


def test_roles_since_limit_and_scope(corpus: dict) -> None:
    users = search("parser", "--all", "--role", "user")
    assert {h["role"] for h in users} == {"user"} and len(users) == 3
    assert {h["role"] for h in search("parser", "--all", "--role", "assistant,tool")} == {"assistant", "tool"}
    assert len(search("parser", "--all", "--since", "2026-03-02", "--limit", "50")) == 3
    p = ama("sessions", "search", "parser", "--all", "--limit", "2")
    assert len(p.stdout.splitlines()) == 2 and "more hits" in p.stderr
    here = search("parser", cwd=corpus["b"])
    assert [h["project"] for h in here] == [corpus["b"]]
    none = ama("sessions", "search", "zzz-no-such-thing", "--all")
    assert none.stdout == "" and "No matches" in none.stderr


def test_index_and_scan_agree_on_every_pattern(corpus: dict) -> None:
    for pattern in PATTERNS:
        for extra in ([], ["--role", "tool"], ["--limit", "3"]):
            search(pattern, "--all", *extra)  # asserts equality


def test_bad_patterns_and_options_exit_2(corpus: dict) -> None:
    for args, needle in (
        (["/unclosed(/"], "invalid regular expression"),
        (["/x/q"], "unknown regex flag 'q'"),
        (["/a*/"], "matches the empty string"),
        (["x", "--role", "robot"], "robot"),
        (["x", "--limit", "0"], "--limit"),
        (["x", "--since", "soon"], "soon"),
    ):
        p = ama("sessions", "search", *args, rc=2)
        assert needle in p.stderr


def test_pi_v3_fixture(sessions_dir: Path) -> None:
    shutil.copy(FIXTURES / "pi" / "v3-session.jsonl", sessions_dir / "v3.jsonl")
    hits = search("parser", "--all")
    assert [(h["ref"], h["role"]) for h in hits] == [
        ("1a6f6bc4#1", "user"),
        ("1a6f6bc4@4", "tool"),
        ("1a6f6bc4@6", "assistant"),
    ]
    test = search("add a test", "--all")
    assert [(h["ref"], h["onBranch"]) for h in test] == [("1a6f6bc4#2", False)]
    assert [h["ref"] for h in search("npm test", "--all")] == ["1a6f6bc4@7"]  # pi's bashExecution


def test_highlight_on_a_terminal_unless_no_color(corpus: dict) -> None:
    def run(env_extra: dict) -> bytes:
        master, slave = pty.openpty()
        env = {**os.environ, **env_extra}
        p = subprocess.Popen(
            ama_cmd("sessions", "search", "lexer", "--all"), stdout=slave, stderr=subprocess.DEVNULL, env=env
        )
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        p.wait(timeout=60)
        os.close(master)
        return out

    assert b"\x1b[1;31mlexer\x1b[0m" in run({})
    plain = run({"NO_COLOR": "1"})
    assert b"\x1b[" not in plain and b"lexer" in plain


APPENDER = """
import sys, time
from ama.messages import TextContent, ToolResultMessage
from ama.session.store import Session
s = Session.open(sys.argv[1])
for i in range(int(sys.argv[2])):
    s.append_message(ToolResultMessage(tool_call_id="c", tool_name="bash", content=[TextContent(text=f"needle line {i}")]))
    time.sleep(0.005)
s.close()
"""


def test_search_while_the_file_is_appended_to(corpus: dict) -> None:
    path = corpus["s3"].path
    writer = subprocess.Popen([sys.executable, "-c", APPENDER, path, "150"], env=dict(os.environ))
    seen = []
    try:
        while writer.poll() is None:
            p = ama("sessions", "search", "needle", "--all", "--json", "--limit", "1000")
            seen.append(len(p.stdout.splitlines()))
            time.sleep(0.05)
    finally:
        writer.wait(timeout=120)
    assert writer.returncode == 0
    assert seen == sorted(seen)  # never loses hits it had
    final = search("needle", "--all", "--limit", "1000")
    assert [h["snippet"] for h in final] == [f"needle line {i}" for i in range(150)]


def test_the_parallel_scan_gives_the_same_hits(corpus: dict) -> None:
    env = {"AMA_SCAN_WORKERS": "3", "AMA_SCAN_SEQUENTIAL_BYTES": "0"}
    for pattern in PATTERNS:
        want = ama("sessions", "search", pattern, "--all", "--json", "--limit", "50").stdout
        got = ama(
            "sessions", "search", pattern, "--all", "--json", "--limit", "50", "--no-cache", env=env
        ).stdout
        assert got == want, pattern


@pytest.mark.parametrize("style", ["spaced", "shuffled"])
def test_index_and_scan_agree_on_any_json_layout(corpus: dict, sessions_dir: Path, style: str) -> None:
    """Other layouts of the same lines: the same entries are found (a tool call's arguments
    are searched as stored, so only patterns that do not touch their layout compare)."""
    layout_free = [p for p in PATTERNS if p not in ('"path"', "read {", "e", "Ünïcode")]
    want = {p: refs(search(p, "--all")) for p in layout_free}
    restyle(sessions_dir, style)
    for pattern in PATTERNS:
        search(pattern, "--all")  # asserts index == scan
    assert {p: refs(search(p, "--all")) for p in layout_free} == want
