"""The reader walks a file's lines as views into its bytes (no second copy): physical line
numbers, blank lines, the partial tail and the kept raw lines are what a split gives."""

from __future__ import annotations

from pathlib import Path

from ama.session.reader import MAP_BYTES, parse_session, read_session
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


def test_a_mapped_file_gives_the_same_session_as_its_bytes(sessions_dir: Path) -> None:
    """Large files are parsed through a read-only map whose pages are given back as the
    walk goes on (every 8 MB): the result is the bytes' result, damage and tail included."""
    import mmap

    s = simple_session(sessions_dir)
    assert s.path is not None
    lines = Path(s.path).read_bytes().splitlines()
    last = lines[-1]
    big = [*lines]
    for i in range(4500):  # about 35 MB: mapped by read_session, several steps of giving pages back
        big.append(last.replace(b'"id":"', f'"id":"x{i}-'.encode(), 1)[:-1] + b', "pad": "' + b"p" * 7600 + b'"}')
    big.append(b"not json")
    big.append(b'{"type":"mess')
    path = Path(s.path)
    path.write_bytes(b"\n".join(big))
    want = parse_session(path.read_bytes(), keep_raw=True)
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        got = parse_session(mm, keep_raw=True)
        mm.close()  # no view of it is left behind
    assert got.raws == want.raws and len(got.entries) == len(want.entries) > 4500
    assert got.damaged == want.damaged and got.partial_tail and got.leaf_id == want.leaf_id
    assert [e.id for e in got.entries] == [e.id for e in want.entries]
    assert path.stat().st_size > MAP_BYTES
    mapped = read_session(path)
    assert mapped.leaf_id == want.leaf_id and mapped.damaged == want.damaged and mapped.partial_tail
    assert [e.id for e in mapped.entries] == [e.id for e in want.entries]
