"""``sessions show`` reads a session in one walk that keeps no entry (session/overview.py)
and the reader has a fast path for well-formed lines: both must give exactly what the
eager path gives -- the reader as it was (tests/session/oracles.py), the tree, the
counts, the user messages, labels, name, and derive's metadata -- on compact, spaced and
key-reordered files, with damaged lines of any bytes."""

from __future__ import annotations

import contextlib
import io
import json
import mmap
import os
import subprocess
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ama.cli.main import main
from ama.messages import (
    AssistantMessage,
    Cost,
    SystemMessage,
    TextContent,
    ToolCall,
    Usage,
    UserMessage,
)
from ama.session.entries import CustomEntry, MessageEntry, is_leaf_mark
from ama.session.history import Counts, user_messages
from ama.session.lineage import lineage_of
from ama.session.meta import derive
from ama.session.overview import overview
from ama.session.projection import project
from ama.session.reader import MAP_BYTES, map_fd, open_regular, parse_session
from ama.session.store import Session
from ama.session.tree import SessionTree
from tests.conftest import ama_cmd
from tests.session.helpers import assistant, result, user
from tests.session.oracles import reference_parse

# --- the files -------------------------------------------------------------------------


def _reversed_keys(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _reversed_keys(v[k]) for k in reversed(list(v))}
    if isinstance(v, list):
        return [_reversed_keys(x) for x in v]
    return v


def restyle(data: bytes, style: str) -> bytes:
    """The same lines in another JSON layout: ``compact`` as ama writes them, ``spaced`` as
    Python's ``json.dumps`` does, ``shuffled`` spaced with every object's keys reversed;
    lines that are not JSON stay as they are."""
    if style == "compact":
        return data
    out = []
    for line in data.split(b"\n"):
        try:
            value = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if style == "shuffled":
            value = _reversed_keys(value)
        out.append(json.dumps(value).encode())
    return b"\n".join(out)


def rich_session(sessions_dir: Path) -> Session:
    """Every kind of entry ``show`` and the metadata look at: branches, leaf moves, labels
    set and cleared, names, an error, run and approval records, a compaction, floats that
    msgspec and ``json`` write differently."""
    s = Session.create("/w/proj", sessions_dir)
    s.append_model_change("anthropic", "claude-sonnet-4-5")
    s.append_message(SystemMessage(content="be brief", timestamp=1_700_000_000_000))
    first = s.append_message(user("fix the parser"))
    s.append_message(assistant("looking", [("c1", "read")]))
    s.append_message(result("c1", "parser.py: 12 lines"))
    s.append_custom("ama.run", {"status": "running"})
    s.append_message(
        AssistantMessage(
            content=[TextContent(text="done"), ToolCall(id="c2", name="grep", arguments={"x": 1e20, "y": 2.5e-7, "z": 0.5})],
            provider="anthropic",
            model="claude-sonnet-4-5",
            usage=Usage(input=3, output=4, cost=Cost(input=1e-05, output=0.003708, total=1e16)),
            stop_reason="toolUse",
            timestamp=1_700_000_000_900,
        )
    )
    s.append_message(result("c2", "no match"))
    s.append_message(assistant("boom", stop="error"))
    s.set_label(first.id, "start")
    s.set_name("parser work")
    mid = s.append_message(user("and the lexer", origin="steer")).id
    s.append_message(assistant("ok"))
    s.append_custom("ama.pending_approval", {"resolved": False, "tool": "bash"})
    s.navigate(first.id)  # a second branch from the first question
    s.append_message(user("try another way"))
    s.append_message(assistant("another", [("c3", "bash")]))
    s.set_label(mid, None)
    s.set_label(first.id, "begin")
    s.append_custom("ama.pending_approval", {"resolved": True})
    s.append_custom("ama.run", {"status": "Failed"})
    s.append_custom("ama.archive", {"archived": True})
    s.append_compaction("summary of it", first.id, 1234)
    s.append_custom_message("ama.rewind-note", "files differ", display=True)
    s.append_thinking_level_change("high")
    s.set_name("")
    s.navigate(mid)
    s.append_message(user("back on the first branch"))
    s.close()
    return s


def _line(obj: dict) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def extra_lines(data: bytes) -> list[bytes]:
    """Lines a damaged or foreign file may hold, about the entries of ``data``."""
    lines = data.split(b"\n")
    ids = [json.loads(x)["id"] for x in lines[1:] if x.strip()]
    err = {"role": "assistant", "content": [], "stopReason": "error", "timestamp": 5}
    return [
        lines[3],  # a duplicate id
        lines[0],  # a second header
        b"",
        b"   \t",
        b"not json at all",
        b'{"a":1} x',
        b"[1, 2]",
        b'"stopReason": "error"',
        b"\xff\xfe\x00junk",
        _line({"type": "leaf", "targetId": ids[2]}),
        _line({"type": "leaf", "targetId": "nowhere"}),
        _line({"type": "leaf", "targetId": None}),
        _line({"type": "future_kind", "id": "f1", "parentId": ids[4], "note": '"stopReason":"error"'}),
        _line({"type": "future_kind", "parentId": ids[4]}),
        _line({"type": "message", "id": "u1", "parentId": ids[5], "message": {"role": "futureRole", "x": 1}}),
        _line({"type": "message", "id": "e1", "parentId": "gone", "message": err}),
        _line({"type": "message", "id": "e2", "parentId": ids[6], "message": {**err, "usage": {"input": "bad"}}}),
        _line({"type": "custom", "id": "k1", "parentId": ids[1], "customType": "ama.leaf"}),
        _line({"type": "custom", "id": "k2", "parentId": "gone", "customType": "ama.leaf"}),
        _line({"type": "custom", "id": "k3", "customType": "ama.run", "data": {"status": "created"}}),
        _line({"type": "custom", "id": "k4", "customType": "ama.run", "data": {"status": "x"}, "message": "no"}),
        _line({"type": "custom", "id": "k5", "customType": "ama.pending_approval", "data": {}}),
        _line({"type": "label", "id": "l1", "parentId": ids[3], "targetId": ids[2], "label": "again"}),
        _line({"type": "session_info", "id": "n1", "name": "renamed"}),
        # repeated keys: msgspec keeps the last one
        b'{"type":"message","id":"d1","message":{"role":"assistant","stopReason":"error","stopReason":"stop"}}',
        b'{"type":"message","id":"d2","message":{"role":"assistant","stopReason":"stop","stopReason":"error"}}',
        b'{"type":"custom","id":"d3","type":"message","message":{"role":"assistant","stopReason":"error"}}',
        b'{"type":"custom","id":"d4","customType":"ama.run","customType":"other","data":{"status":"failed"}}',
        # an escaped key: decoded the same, not matched by derive's byte patterns
        b'{"type":"message","id":"d5","message":{"role":"assistant","stop\\u0052eason":"error"}}',
        b'{"type":"custom","id":"d6","customType":"ama.r\\u0075n","data":{"status":"cancelled"}}',
        b'{"type":"message","id":"d7","message":{"role":"assistant","content":[{"type":"toolCall","id":"q",'
        b'"name":"x","arguments":{"stopReason":"error"}}],"stopReason":"stop"}}',
        b'{"type":"message","id":"d8","message":{"role":"assistant","stopReason":"toolUse","content":[]}}',
    ]


# --- what the eager path gives -----------------------------------------------------------


def _naive_counts(entries: list) -> Counts:
    from ama.messages import ToolResultMessage
    from ama.session.entries import iso_to_ms

    c = Counts(entries=len(entries))
    msgs = [e for e in entries if isinstance(e, MessageEntry)]
    c.messages = len(msgs)
    for e in msgs:
        m = e.message
        if isinstance(m, UserMessage):
            c.user += 1
        elif isinstance(m, AssistantMessage):
            c.assistant += 1
        elif isinstance(m, ToolResultMessage):
            c.tool_results += 1
        elif isinstance(m, SystemMessage):
            c.system += 1
        else:
            c.other_messages += 1
    c.first_ms = next((ms for e in msgs if (ms := iso_to_ms(e.timestamp))), 0)
    c.last_ms = next((ms for e in reversed(msgs) if (ms := iso_to_ms(e.timestamp))), 0)
    return c


def check_parity(buf: bytes | mmap.mmap, data: bytes) -> None:
    """The reader, and show's walk over ``buf`` (the bytes ``data``, or a map of them),
    against the reader as it was and the eager tree, counts and metadata."""
    ref = reference_parse(data)
    got = parse_session(buf)
    assert got.entries == ref.entries
    assert got.damaged == ref.damaged
    assert (got.header, got.header_error, got.partial_tail, got.leaf_id, got.leaf_lines) == (
        ref.header,
        ref.header_error,
        ref.partial_tail,
        ref.leaf_id,
        ref.leaf_lines,
    )
    tree = SessionTree(ref.entries, ref.leaf_id)
    path = tree.path_ids()
    tips = [e.id for e in tree.entries if e.id not in tree.marks and not tree.children(e.id)]
    assert tree.tips() == tips
    ov = overview(buf)
    assert (ov.data.header, ov.data.header_error, ov.data.damaged, ov.data.partial_tail, ov.data.problems) == (
        ref.header,
        ref.header_error,
        ref.damaged,
        ref.partial_tail,
        ref.problems,
    )
    assert ov.data.readonly_reason == ref.readonly_reason
    assert ov.leaf_id == tree.leaf_id
    assert ov.branch_ids == set(path)
    assert ov.branches == len(tips)
    assert ov.counts == _naive_counts(ref.entries)
    assert ov.users == user_messages(ref.entries, set(path))
    assert ov.labels == tree.labels()
    assert ov.name == tree.name
    assert ov.customs == [e for e in ref.entries if isinstance(e, CustomEntry) and not is_leaf_mark(e)]
    assert ov.meta == derive(data)


STYLES = ("compact", "spaced", "shuffled")


def test_a_rich_session_reads_the_same_in_every_layout(sessions_dir: Path) -> None:
    s = rich_session(sessions_dir)
    assert s.path is not None
    raw = Path(s.path).read_bytes()
    for style in STYLES:
        data = restyle(raw, style)
        check_parity(data, data)
        ov = overview(data)
        # the walk sees what the session holds (so the comparison above is not vacuous)
        assert ov.branches == 3 and ov.counts.user == 4 and ov.counts.system == 1
        assert ov.labels == {s.entries[2].id: "begin"} and ov.name is None
        assert ov.meta.error_count == 1 and ov.meta.task_status == "failed"
        assert [u.on_branch for u in ov.users] == [True, True, False, True]


def test_damaged_and_foreign_lines_read_the_same_in_every_layout(sessions_dir: Path) -> None:
    s = rich_session(sessions_dir)
    assert s.path is not None
    raw = Path(s.path).read_bytes().rstrip(b"\n")
    extra = extra_lines(raw)
    lines = raw.split(b"\n")
    for style in STYLES:
        for at in (1, 5, len(lines)):
            data = restyle(b"\n".join([*lines[:at], *extra, *lines[at:]]) + b"\n", style)
            check_parity(data, data)
        data = restyle(raw + b"\n" + b"\n".join(extra), style)  # the last line without its newline
        check_parity(data, data)
    ov = overview(b"\n".join([*lines, *extra]) + b"\n")
    assert ov.meta.error_count == 5  # the session's, e1, e2, d2 and d3 (the last key counts)


def test_headers_of_older_formats_and_damaged_headers(sessions_dir: Path) -> None:
    fixtures = Path(__file__).parent.parent / "fixtures" / "pi"
    for f in sorted(fixtures.glob("*.jsonl")):
        data = f.read_bytes()
        for style in STYLES:
            check_parity(restyle(data, style), restyle(data, style))
    s = rich_session(sessions_dir)
    assert s.path is not None
    raw = Path(s.path).read_bytes()
    for data in (b"", b"\n\n", b"junk\n" + raw, raw.split(b"\n", 1)[1], b"1 x\n" + raw, raw[:-40]):
        check_parity(data, data)


def test_the_leaf_after_each_kind_of_leaf_move(sessions_dir: Path) -> None:
    raw = _rich_bytes(sessions_dir)
    ids = [json.loads(x)["id"] for x in raw.split(b"\n")[1:] if x.strip()]
    moves = [
        {"type": "custom", "id": "m1", "parentId": "gone", "customType": "ama.leaf"},  # to the entry before
        {"type": "custom", "id": "m2", "parentId": None, "customType": "ama.leaf"},  # before the first entry
        {"type": "custom", "id": "m3", "parentId": "m3", "customType": "ama.leaf"},  # its own parent
        {"type": "custom", "id": "m4", "parentId": ids[3], "customType": "ama.leaf"},
        {"type": "leaf", "targetId": ids[5]},
        {"type": "leaf", "targetId": None},
        {"type": "leaf", "targetId": "gone"},
    ]
    seen = set()
    for move in moves:
        for style in STYLES:
            data = restyle(raw + _line(move) + b"\n", style)
            check_parity(data, data)
            seen.add(parse_session(data).leaf_id)
    assert None in seen and ids[3] in seen and ids[5] in seen and ids[-1] in seen and "m3" in seen


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    picks=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 10_000)), max_size=12),
    junk=st.lists(st.binary(max_size=30), max_size=3),
    style=st.sampled_from(STYLES),
    cut=st.integers(0, 400),
)
def test_property_any_mix_of_lines_reads_the_same(
    sessions_dir: Path, picks: list[tuple[int, int]], junk: list[bytes], style: str, cut: int
) -> None:
    raw = _rich_bytes(sessions_dir)
    lines = raw.rstrip(b"\n").split(b"\n")
    pool = extra_lines(raw.rstrip(b"\n")) + lines[1:] + junk
    for where, what in picks:
        lines.insert(1 + where % len(lines), pool[what % len(pool)])
    data = restyle(b"\n".join(lines) + b"\n", style)
    if cut % 3 == 0:
        data = data[: max(0, len(data) - cut)]  # a partial tail, or less
    check_parity(data, data)


_RICH: dict[str, bytes] = {}


def _rich_bytes(sessions_dir: Path) -> bytes:
    if "raw" not in _RICH:
        s = rich_session(sessions_dir)
        assert s.path is not None
        _RICH["raw"] = Path(s.path).read_bytes()
    return _RICH["raw"]


def test_a_mapped_file_reads_the_same_as_its_bytes(sessions_dir: Path) -> None:
    """A file of MAP_BYTES or more is walked through a map whose pages are given back."""
    s = rich_session(sessions_dir)
    assert s.path is not None
    raw = Path(s.path).read_bytes().rstrip(b"\n")
    lines = raw.split(b"\n")
    big = [*lines]
    pad = "p" * 7600
    for i in range(4600):  # about 36 MB
        big.append(_line({"type": "message", "id": f"x{i}", "parentId": f"x{i - 1}" if i else None,
                          "message": {"role": "toolResult", "toolCallId": "c", "content": [{"type": "text", "text": pad}]}}))  # fmt: skip
        if i % 1000 == 7:
            big += extra_lines(raw)
    big.append(_line({"type": "message", "id": "last", "message": {"role": "assistant", "stopReason": "error"}}))
    data = b"\n".join(big) + b"\n"
    Path(s.path).write_bytes(data)
    assert len(data) > MAP_BYTES
    with open_regular(s.path) as f, map_fd(f.fileno()) as mm:
        assert isinstance(mm, mmap.mmap)
        check_parity(mm, data)
    assert overview(data).counts.tool_results == 4602


# --- the command's output ----------------------------------------------------------------


def _cli(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(list(argv)) == 0
    return out.getvalue()


def _expected_json(path: str, data: bytes, sessions_dir: Path) -> dict:
    """``show --json`` computed the eager way, from the parsed entries."""
    d = parse_session(data, path=path)
    tree = SessionTree(d.entries, d.leaf_id)
    branch = set(tree.path_ids())
    meta = derive(data)
    lineage = lineage_of(str(sessions_dir), d)
    h = d.header
    return {
        "id": d.id,
        "path": path,
        "cwd": h.cwd if h else None,
        "version": h.version if h else None,
        "created": h.timestamp if h else None,
        "name": tree.name,
        "parentSession": lineage["parent"],
        "lineage": {k: lineage[k] for k in ("parentId", "parentPath", "rootId", "relationType")},
        "forks": lineage["children"],
        "archived": lineage["archived"],
        "archivedOwn": lineage["archivedOwn"],
        "leafId": tree.leaf_id,
        "branchLength": len(branch),
        "branches": len(tree.tips()),
        "counts": _naive_counts(d.entries).to_json(),
        "labels": tree.labels(),
        "problems": d.problems,
        "readonly": d.readonly_reason,
        "errorCount": meta.error_count,
        "pendingInteraction": meta.pending_interaction,
        "taskStatus": "interrupted" if meta.task_status == "running" else meta.task_status,
        "userMessages": [u.to_json() for u in user_messages(d.entries, branch)],
    }


def test_show_text_and_json_are_the_eager_answers_in_every_layout(sessions_dir: Path) -> None:
    s = rich_session(sessions_dir)
    assert s.path is not None
    raw = Path(s.path).read_bytes().rstrip(b"\n")
    lines = raw.split(b"\n")
    for style in STYLES:
        for body in (raw + b"\n", b"\n".join([*lines[:4], *extra_lines(raw), *lines[4:]]) + b"\n"):
            data = restyle(body, style)
            Path(s.path).write_bytes(data)
            got = json.loads(_cli("sessions", "show", "--session-dir", str(sessions_dir), s.path, "--json"))
            want = _expected_json(s.path, data, sessions_dir)
            assert got == want
            text = _cli("sessions", "show", "--session-dir", str(sessions_dir), s.path)
            c = want["counts"]
            assert f"{want['branchLength']} of {c['entries']} entries · {want['branches']} branches" in text
            assert f"Messages  {c['messages']} (user {c['user']}, assistant {c['assistant']}" in text
            assert f"{want['errorCount']} error" in text
            for p in want["problems"]:
                assert f"Damaged   {p}" in text
            numbered = [ln.split()[0] for ln in text.splitlines() if ln.startswith("  #")]
            assert numbered == [f"#{u['n']}" for u in want["userMessages"]]
            assert text.count("[off branch]") == sum(not u["onBranch"] for u in want["userMessages"])


def test_show_context_json_is_print_json_of_the_projection_in_every_layout(sessions_dir: Path) -> None:
    """Written one message at a time, byte for byte what ``print_json`` wrote: floats that
    msgspec writes otherwise (1e-05, 1e+16, 2.5e-07, 1e+20) included."""
    s = rich_session(sessions_dir)
    assert s.path is not None
    raw = Path(s.path).read_bytes().rstrip(b"\n")
    lines = raw.split(b"\n")
    for style in STYLES:
        for body in (raw + b"\n", b"\n".join([*lines[:4], *extra_lines(raw), *lines[4:]]) + b"\n"):
            data = restyle(body, style)
            Path(s.path).write_bytes(data)
            for leaf in (None, lines[7]):
                if leaf is not None:  # another leaf: the branch through the floats
                    data = data + _line({"type": "leaf", "targetId": json.loads(leaf)["id"]}).replace(b"\n", b"") + b"\n"
                    Path(s.path).write_bytes(data)
                d = parse_session(data)
                tree = SessionTree(d.entries, d.leaf_id)
                ctx = project(tree.branch())
                want = json.dumps({"id": d.id, "leafId": tree.leaf_id, **ctx.to_json()}, ensure_ascii=False, indent=2)
                got = _cli("sessions", "show", "--session-dir", str(sessions_dir), s.path, "--json", "--context")
                assert got == want + "\n"
    assert "1e-05" in got and "1e+20" in got


def test_show_never_writes_the_file(sessions_dir: Path) -> None:
    s = rich_session(sessions_dir)
    assert s.path is not None
    before = Path(s.path).read_bytes()
    st = os.stat(s.path)
    for extra in ((), ("--json",), ("--json", "--context")):
        _cli("sessions", "show", "--session-dir", str(sessions_dir), s.path, *extra)
    assert Path(s.path).read_bytes() == before and os.stat(s.path).st_mtime_ns == st.st_mtime_ns


def test_show_context_into_a_reader_that_stops_early_is_not_a_damaged_file(sessions_dir: Path) -> None:
    """`ama sessions show --json --context F | head -c 100`: the output's closed pipe is not
    an error reading the session (it once said so, and offered to move the file to the trash)."""
    s = Session.create("/w/proj", sessions_dir)
    for i in range(200):  # ~1 MB of context: more than a pipe holds
        s.append_message(user(f"question {i} " + "word " * 1000))
    s.close()
    assert s.path is not None
    cmd = ama_cmd("sessions", "show", "--session-dir", str(sessions_dir), s.path, "--json", "--context")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout is not None and p.stderr is not None
    head = p.stdout.read(100)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 0
    assert head.startswith(b"{") and err == ""
