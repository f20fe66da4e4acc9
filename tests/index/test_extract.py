"""The per-file extraction: numbering exactly like the session reader, and reading a file in
chunks (as the index does when it grows) giving exactly what reading it at once gives."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ama.index import facts as F
from ama.index.extract import FileState, extract, last_message_ms, start
from ama.index.timeutil import Days, ts_ms
from ama.session.history import user_messages
from ama.session.reader import parse_session
from ama.session.tree import SessionTree
from tests.conftest import FIXTURES

HEADER = b'{"type":"session","version":3,"id":"s1","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/p"}\n'

DAMAGED = (
    HEADER
    + b"\n".join(
        [
            b'{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T10:00:01.000Z","message":{"role":"user","content":"one"}}',
            b"not json at all",
            b"[1, 2, 3]",
            b'{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T10:00:02.000Z","message":{"role":"user","content":"dup"}}',
            b'{"type":"label","parentId":"a1","timestamp":"x","targetId":"a1"}',
            b'{"type":"session","version":3,"id":"s2","cwd":"/q"}',
            b'{"type":"leaf","targetId":"nowhere","timestamp":"2026-03-01T10:00:03.000Z"}',
            b'{"type":"leaf","id":"lf1","parentId":"a1","timestamp":"2026-03-01T10:00:03.000Z"}',
            b'{"type":"weird_future_type","id":"w1","parentId":"gone","timestamp":"2026-03-01T10:00:04.000Z","x":1}',
            b'{"type":"message","id":"","parentId":"w1","timestamp":"2026-03-01T10:00:05.000Z","message":{"role":"user","content":"empty id"}}',
            b'{"type":"message","id":"a2","parentId":"w1","timestamp":"2026-03-01T10:00:06.000Z","message":{"role":"user","content":5}}',
            b"   ",
            b'{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-03-01T10:00:07.000Z","message":{"role":"user","content":[{"type":"text","text":"three"},{"type":"image","data":"AA==","mimeType":"image/png"}]}}',
            b'{"type":"leaf","targetId":"a1","timestamp":"2026-03-01T10:00:08.000Z"}',
            b'{"message":{"role":"user","content":"type last"},"timestamp":"2026-03-01T10:00:09.000Z","parentId":"a1","id":"a4","type":"message"}',
            b'{"type":"message","id":"a5","parentId":"a4","timestamp":"2026-03-01T10:00:10.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"read","arguments":{"p":1}}],"provider":"x","model":"y","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3},"stopReason":"toolUse"}}',
        ]
    )
    + b'\n{"type":"message","id":"partial'
)


def full(data: bytes) -> tuple[FileState, object]:
    state, pos = start(data)
    assert isinstance(state, FileState)
    return state, extract(data, pos, state, days=Days())


def assert_like_reader(data: bytes) -> None:
    state, chunk = full(data)
    ref = parse_session(data)
    assert state.k == len(ref.entries)
    assert [data[o : o + n] for o, n in zip(chunk.offs, chunk.lens)][: len(ref.entries)]
    ids = {e.id: i + 1 for i, e in enumerate(ref.entries)}
    tree = SessionTree(ref.entries, ref.leaf_id)
    assert chunk.parents == [ids[tree.parent[e.id]] if tree.parent[e.id] else 0 for e in ref.entries]
    assert state.leaf == (ids[tree.leaf_id] if tree.leaf_id else 0)
    assert chunk.users == [ids[u.entry_id] for u in user_messages(ref.entries)]
    assert state.n == len(user_messages(ref.entries))


def test_numbering_matches_the_reader_on_a_damaged_file() -> None:
    assert_like_reader(DAMAGED)
    state, chunk = full(DAMAGED)
    assert chunk.end == DAMAGED.rfind(b"\n") + 1  # the write in progress is not read
    assert state.n == 4  # one, dup (damaged: not counted), empty id, 5 (not a message), three, type last


def test_numbering_matches_the_reader_on_pi_fixtures() -> None:
    for name in ("v1-session.jsonl", "v2-session.jsonl", "v3-session.jsonl"):
        assert_like_reader((FIXTURES / "pi" / name).read_bytes())


def _rows(state: FileState, chunks: list) -> dict:
    facts = F.Facts()
    out: dict = {
        "parents": [],
        "offs": [],
        "lens": [],
        "users": [],
        "docs": [],
        "steps": [],
        "tools": {},
        "latency": [],
    }
    for c in chunks:
        for k in ("parents", "offs", "lens", "users", "docs", "steps"):
            out[k] += getattr(c, k)
        for key, vals in c.facts.req.items():
            row = facts.req.setdefault(key, [0] * 9)
            for i, v in enumerate(vals):
                row[i] += v
        for key, vals in c.facts.turns.items():
            row = facts.turns.setdefault(key, [0, 0])
            row[0] += vals[0]
            row[1] += vals[1]
        for key, n in c.facts.tools.items():
            out["tools"][key] = out["tools"].get(key, 0) + n
        out["latency"] += c.facts.latency
    out["req"], out["turns"] = facts.req, facts.turns
    out["open"] = F.open_turn(state.stats)
    out["state"] = (state.k, state.n, state.leaf, state.last_ms, dict(state.runs.runs))
    return out


def _corpus() -> bytes:
    return (
        (FIXTURES / "pi" / "v3-session.jsonl").read_bytes()
        + DAMAGED.split(b"\n", 1)[1].rsplit(b"\n", 1)[0]
        + b"\n"
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=4))
def test_reading_in_chunks_gives_what_reading_at_once_gives(cuts: list[int]) -> None:
    data = _corpus()
    days = Days()
    whole_state, pos = start(data)
    assert isinstance(whole_state, FileState)
    whole = _rows(whole_state, [extract(data, pos, whole_state, days=days)])
    state, pos = start(data)
    assert isinstance(state, FileState)
    chunks = []
    for c in sorted(set(cuts)):
        visible = data[: max(pos, min(len(data), c))]  # the file as it was when it had c bytes
        ch = extract(visible, pos, state, days=days)
        chunks.append(ch)
        pos = ch.end
    chunks.append(extract(data, pos, state, days=days))
    assert _rows(state, chunks) == whole


def test_scan_facts_equals_the_per_line_handler() -> None:
    data = _corpus()
    state, pos = start(data)
    assert isinstance(state, FileState)
    per_line = extract(data, pos, state, days=Days()).facts
    state2, pos = start(data)
    assert isinstance(state2, FileState)
    scanned = F.Facts()
    F.scan_facts(data, pos, len(data), state2.stats, scanned, Days())
    assert (scanned.req, scanned.turns, scanned.tools, scanned.latency) == (
        per_line.req,
        per_line.turns,
        per_line.tools,
        per_line.latency,
    )
    assert F.open_turn(state.stats) == F.open_turn(state2.stats)


def test_the_prefilter_skips_only_lines_that_cannot_matter() -> None:
    rel = F.RELEVANT.match
    skip = [
        b'\n{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"toolResult","content":[',
        b'\n{"type":"label","id":"a"',
        b'\n{"type":"custom","id":"a","parentId":"b","timestamp":"t","customType":"ama.todo","data":{}}',
        b'\n{"type":"leaf","targetId":"a"}',
        # other key orders and Python's spacing, as long as the pairs before are plain scalars
        b'\n{"id":"a","type":"label"}',
        b'\n{"type":"message","message":{"role":"toolResult"},"id":"a"}',
        b'\n{"type": "message", "id": "a", "parentId": null, "message": {"role": "toolResult"',
    ]
    keep = [
        b'\n{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"assistant"',
        b'\n{"type":"custom","id":"a","parentId":"b","timestamp":"t","customType":"ama.request","data":{}}',
        b'\n{"type":"custom","id":"a","parentId":"b","timestamp":"t","customType":"ama\\u002erequest","data":{}}',
        b'\n{"id":{"a":1},"type":"label"}',  # a nested value before the type: parse it
        b'\n{"message":{"role":"toolResult"},"type":"message"}',
        b"\n{broken",
    ]
    assert [bool(rel(x)) for x in skip] == [False] * len(skip)
    assert [bool(rel(x)) for x in keep] == [True] * len(keep)
    # a tool result that is garbage after its prefix is never parsed, so never matters
    garbage = (
        HEADER
        + b'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"toolResult",<<<\n'
    )
    state, pos = start(garbage)
    assert isinstance(state, FileState)
    f = F.Facts()
    F.scan_facts(garbage, pos, len(garbage), state.stats, f, Days())
    assert not f


def test_order_key_read_backwards_equals_forward() -> None:
    for data in (_corpus(), DAMAGED, HEADER):
        state, pos = start(data)
        assert isinstance(state, FileState)
        extract(data, pos, state, days=Days())
        assert (last_message_ms(data, pos, len(data)) or ts_ms("2026-03-01T10:00:00.000Z")) == state.last_ms


def test_damaged_and_pending_headers(tmp_path: Path) -> None:
    assert start(b"not json\n{}\n") == (None, len(b"not json\n{}\n"))
    assert start(b"")[0] == "pending"
    assert start(b'{"type":"session","ver')[0] == "pending"
    state, pos = start(HEADER[:-1])  # a complete header without its newline yet
    assert isinstance(state, FileState) and pos == len(HEADER) - 1


def test_json_read_back_agrees_with_the_extraction_or_declines() -> None:
    from ama.index.lines import docs_of_line
    from ama.index.verify import doc_part

    odd = [
        b'{"type":"message","id":"x1","parentId":null,"timestamp":"t","message":{"role":"assistant","content":['
        b'{"type":"toolCall","id":"c","name":"calc","arguments":{"n":1e100,"s":"caf\\u00e9 \\u2028"}},'
        b'{"type":"toolCall","id":"d","name":"noargs"}],"stopReason":"toolUse"}}',
        b'{"type":"message","id":"x2","parentId":null,"timestamp":"t","message":{"role":"assistant","content":['
        b'{"type":"toolCall","id":"c","name":"read","arguments": {"path": "a b"}}],"stopReason":"toolUse"}}',
        b'{"type":"message","id":"x3","parentId":null,"timestamp":"t","message":{"role":"assistant","content":['
        b'{"type":"toolCall","id":"c","name":"w","arguments":{"t":"tab\\tq\\"uote\\\\ \\u0001 / \xc3\xa9"}}],"stopReason":"toolUse"}}',
    ]
    lines = [*_corpus().split(b"\n"), *odd]
    checked = declined = 0
    for line in lines:
        for part, role, text in docs_of_line(line, 3):
            light = doc_part(line, part)
            if light is None:
                declined += 1
                continue
            checked += 1
            assert light[:2] == (role, text), line
    assert checked > 10 and declined >= 2
