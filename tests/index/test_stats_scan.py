"""The cold ``ama stats`` scan (index/stats_scan.py): the header read as the index reads it,
whole files read even when they grow, the same report as the index on damaged and odd
lines in every layout, and the timestamps' days independent of the order they come in."""

from __future__ import annotations

import os
import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ama.index import stats_scan
from ama.index.extract import FileState, start
from ama.index.timeutil import Days, ts_ms
from tests.index.helpers import Builder, ama, ama_json, restyle, usage

UTC = {"TZ": "UTC"}
HEADER = b'{"type":"session","version":3,"id":"s1","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/p"}'


def _as_start(data: bytes) -> tuple:
    """extract.start's answer in header()'s terms."""
    state, pos = start(data)
    if isinstance(state, FileState):
        return state.cwd, pos
    return (None, pos) if state is None else (False, pos)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                HEADER,
                HEADER[:-1] + b',"cwd":"/q"}',
                HEADER.replace(b'"version":3', b'"version":"3"'),
                HEADER.replace(b'"session"', b'"message"'),
                HEADER[:20],
                b"",
                b"   ",
                b"\r",
                b"not json",
                b"[]",
                b'{"type":"session"}',
            ]
        ),
        max_size=4,
    ),
    st.booleans(),
)
def test_the_header_is_read_as_the_index_reads_it(parts: list[bytes], newline_at_end: bool) -> None:
    data = b"\n".join(parts) + (b"\n" if newline_at_end and parts else b"")
    assert stats_scan.header(data) == _as_start(data)


def test_a_file_is_read_whole_even_when_it_grew_or_shrank(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    body = os.urandom(300_000)
    p.write_bytes(body)
    for seen in (0, 10, 299_999, 300_000, 400_000):  # the size scan() saw, before the file changed
        assert stats_scan.read_file(str(p), seen) == body
    p.write_bytes(b"")
    assert stats_scan.read_file(str(p), 5) == b""


def test_days_do_not_depend_on_the_order_timestamps_come_in() -> None:
    """The day of a timestamp is cached per minute: it must be the minute's day whatever
    came first (an odd seconds field once made it depend on that)."""
    stamps = [
        f"2026-03-01T23:59:{s}Z"
        for s in ("10.000", "59.999", "75.000", "1x.000", "10.5", "10.000000", "00.000+01:00")
    ] + ["2026-03-02T00:00:00.000Z", "2026-03-01T23:59", "x" * 24, "2026-03-01T25:00:00.000Z"]
    for tz in ("UTC", "Asia/Kolkata", "America/St_Johns"):
        os.environ["TZ"] = tz
        try:
            import time

            time.tzset()
            want = [Days().of_ts(s) for s in stamps]  # each one first
            for seed in range(20):
                order = stamps[:]
                random.Random(seed).shuffle(order)
                days = Days()
                got = {s: days.of_ts(s) for s in order}
                assert [got[s] for s in stamps] == want
        finally:
            os.environ.pop("TZ", None)
            time.tzset()
    assert want[0] == want[1] == want[2]  # the minute's day, even for seconds out of range
    assert ts_ms("2026-03-01T23:59:75.000Z") == 0  # which is no time


def _odd_corpus(sessions_dir: Path, cwd: str) -> None:
    """Sessions with lines the fast ways cannot take: each must count as the index counts it."""
    s = Builder(sessions_dir, cwd, created="2026-03-01T09:00:00.000Z")
    s.model_change("2026-03-01T09:00:00.000Z", "anthropic", "claude", channel="main")
    s.user("go", "2026-03-01T10:00:00.000Z")
    s.assistant("2026-03-01T10:00:05.000Z", u=usage(100, 20, 1000, 0, 0.01), tools=[("read", {})])
    s.result("2026-03-01T10:00:06.000Z", "file a")
    t = "2026-03-01T10:00:07.000Z"
    head = b'{"type":"message","id":"x%d","parentId":null,"timestamp":"' + t.encode() + b'","message":'
    odd = [
        b'{"role":"assistant","provider":"anthropic","model":"claude","usage":{"input":1e400}}',
        b'{"role":"assistant","provider":"anthropic","model":"claude","usage":{"input":100000000000000000000}}',
        b'{"role":"assistant","provider":"anthropic","model":"claude","usage":{"input":3,"cost":{"total":1e300}}}',
        b'{"role":"assistant","provider":"anthropic","model":"claude","usage":{"input":3,"cost":{"total":'
        + b"9" * 400
        + b"}}}",
        b'{"role":"assistant","provider":"anthropic","model":"claude","usage":{"input":2.5,"output":true}}',
        b'{"role":"assistant","content":[{"type":null,"name":"x"},{"type":"toolCall","name":"grep"}]}',
        b'{"role":"toolResult","content":[]},"message":{"role":"assistant","model":"m"}',
        b'{"role":"assistant","model":"m"},"type":"label"',
        b'{"role":"user","content":[7]}',
        b'{"role":"user","content":"again","origin":"steer"}',
    ]
    for i, m in enumerate(odd):
        s.raw(head.replace(b"%d", str(i).encode()) + m + b"}\n")
    s.raw(
        b'{"type":"message","id":"cut","parentId":null,"timestamp":"'
        + t.encode()
        + b'","message":{"role":"ass\n'
    )
    s.raw(b"\xff\xfe garbage \x00\n")
    s.raw(
        head.replace(b"%d", b"late").replace(b"10:00:07", b"23:59:75")
        + b'{"role":"user","content":"odd time"}}\n'
    )
    s.assistant("2026-03-02T00:00:01.000Z", u=usage(5, 5))
    for amount in (0.25, 1e300, 10**30):  # an external agent's usage, then damaged ones
        s.custom(
            "2026-03-02T00:00:02.000Z",
            "ama.agent-usage",
            {"agent": "claude", "unit": "usd", "amount": amount},
        )


def test_odd_and_damaged_lines_give_the_index_s_report_in_every_layout(
    sessions_dir: Path, tmp_path: Path
) -> None:
    _odd_corpus(sessions_dir, str(tmp_path))
    reports = []
    for style in ("compact", "spaced", "shuffled"):
        if style != "compact":
            restyle(sessions_dir, style)
        for by in ("model", "day"):
            indexed = ama_json("stats", "--all", "--by", by, env=UTC)
            scanned = ama_json("stats", "--all", "--by", by, "--no-cache", env=UTC)
            forked = ama_json(
                "stats", "--all", "--by", by, "--no-cache", env={**UTC, "AMA_SCAN_WORKERS": "2"}
            )
            for r in (indexed, scanned, forked):
                r.pop("files")
            assert indexed == scanned == forked
            reports.append(indexed)
    # (restyling goes through json.loads, which keeps the last of repeated keys: those lines
    # change meaning with the layout, and each layout is compared with the index on its own)
    assert all(r["requests"] > 0 and r["tools"] for r in reports)
    assert all(r["external"]["cost"] == 0.25 for r in reports)  # the damaged records count nowhere
    out = ama("stats", "--all", "--by", "week", "--no-cache", env=UTC).stdout
    assert "2026-W09" in out


COLD_PROBE = """
import io, sys, contextlib
from ama.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    main(sys.argv[1:])
loaded = ("sqlite3", "ama.index.extract", "ama.index.lines", "ama.session.reader", "typing_extensions")
print(",".join(m for m in loaded if m in sys.modules))
"""


def test_a_cold_scan_loads_neither_sqlite_nor_the_index_extraction(
    sessions_dir: Path, tmp_path: Path
) -> None:
    """What a cold ``ama stats`` loads is time before its first byte is read."""
    import subprocess
    import sys

    _odd_corpus(sessions_dir, str(tmp_path))
    p = subprocess.run(
        [sys.executable, "-c", COLD_PROBE, "stats", "--all", "--no-cache"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == ""


LIGHT = """
import sys
import ama.index.msgspec_light
assert "typing_extensions" not in sys.modules
import msgspec, typing_extensions  # the name works again
from typing import Annotated, Literal
class S(msgspec.Struct):
    a: Literal["x"]
    b: Annotated[int, msgspec.Meta(lt=5)] = 0
print(msgspec.json.decode(b'{"a":"x","b":4}', type=S).b, typing_extensions.__name__)
"""


def test_msgspec_loads_without_typing_extensions_and_gives_the_name_back() -> None:
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-c", LIGHT], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["4", "typing_extensions"]
