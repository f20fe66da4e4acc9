"""The reader walks a file's lines as views into its bytes (no second copy): physical line
numbers, blank lines, the partial tail and the kept raw lines are what a split gives."""

from __future__ import annotations

from pathlib import Path

from ama.session.reader import parse_session
from tests.session.helpers import simple_session


def test_line_numbers_blanks_tail_and_raws(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir)
    assert s.path is not None
    lines = Path(s.path).read_bytes().splitlines()
    body = [lines[0], b"", b"  \t\r", lines[1], b"not json", *lines[2:], b'{"type":"mess']
    data = parse_session(b"\n".join(body), keep_raw=True)
    assert data.header is not None and data.partial_tail
    assert [(d.line, d.reason) for d in data.damaged] == [(5, "not valid JSON")]
    assert data.raws == [lines[1], *lines[2:]]
    assert all(type(r) is bytes for r in data.raws)
    assert len(data.entries) == len(lines) - 1
    whole = parse_session(b"\n".join(body[:-1]) + b"\n")
    assert not whole.partial_tail and whole.damaged == data.damaged and whole.leaf_id == data.leaf_id
    assert parse_session(b"").header_error == "the file is empty"
    assert parse_session(b"\n \n").header_error == "the file is empty"
