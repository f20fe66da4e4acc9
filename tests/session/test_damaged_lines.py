"""A damaged line is one damaged line for every reader: counted, reported, skipped.

JSON followed by junk (``1 x``, ``{"a":1} x``, ``null x``) used to pass the typed decoder's
shape check and then raise from the plain decoder (``msgspec.DecodeError`` out of
``sessions show``, ``export``, ``--resume``).  The property test appends or inserts any
bytes and runs every reader over the file.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ama.cli.main import main
from ama.errors import AmaError
from ama.export import export_session
from ama.index import extract as X
from ama.index import runs as R
from ama.index import search as S
from ama.index import stats as ST
from ama.index.pattern import parse
from ama.index.reuse import resolve_from
from ama.session import catalog
from ama.session.projection import project
from ama.session.reader import parse_session, read_session
from ama.session.store import Session
from ama.session.summary import summarize_bytes, summarize_file
from ama.session.tree import SessionTree
from tests.session.helpers import simple_session

JUNK = [b"1 x", b'{"a":1} x', b"null x", b'{"type":"message","id":"zz"} x', b"[" * 5000, b"\xff\xfe\x00junk"]


def _valid(sessions_dir: Path) -> tuple[Session, bytes]:
    s = simple_session(sessions_dir)
    assert s.path is not None
    return s, Path(s.path).read_bytes()


def _cli(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue() + err.getvalue()


def every_reader(path: str, sessions_dir: str, sid: str) -> None:
    """Run each reader of session files over ``path``; any exception but ama's own fails."""
    data = read_session(path, keep_raw=True)
    Session.load(path).context()
    summarize_file(path)
    catalog.scan(sessions_dir)
    raw = Path(path).read_bytes()
    state, pos = X.start(raw)
    if isinstance(state, X.FileState):
        X.extract(raw, pos, state)
    S.scan(sessions_dir, S.SearchQuery(parse("question")))
    ST.scan(sessions_dir, ST.StatsQuery())
    R.scan(sessions_dir, steps=3)
    if data.header is not None:
        for fmt in ("md", "jsonl", "json"):
            export_session(path, fmt)
        try:
            resolve_from(sessions_dir, sid)
        except AmaError:
            pass
    old = os.environ.get("AMA_SESSION_DIR")
    os.environ["AMA_SESSION_DIR"] = sessions_dir
    try:
        for argv in (
            ("sessions", "show", sid),
            ("sessions", "show", sid, "--json"),
            ("sessions", "list", "--all", "--json"),
            ("sessions", "search", "question", "--all"),
            ("stats", "--json"),
            ("runs", "list", "--all"),
        ):
            code, out = _cli(*argv)  # the index path: the first command builds the index
            assert "Traceback" not in out and code in (0, 1, 2, 5), (argv, code, out)
    finally:
        if old is None:
            os.environ.pop("AMA_SESSION_DIR", None)
        else:
            os.environ["AMA_SESSION_DIR"] = old


def _projection(data: bytes) -> list:
    d = parse_session(data)
    return list(project(SessionTree(d.entries, d.leaf_id).branch()).messages)


def test_json_with_trailing_junk_is_one_damaged_line_in_show_and_export(sessions_dir: Path) -> None:
    s, raw = _valid(sessions_dir)
    assert s.path is not None
    Path(s.path).write_bytes(raw + b"\n".join([b"1 x", b'{"a":1} x', b"null x"]) + b"\n")
    data = read_session(s.path)
    assert [d.reason for d in data.damaged] == ["not valid JSON"] * 3
    code, out = _cli("sessions", "show", s.id[:8])
    assert code == 0, out
    assert "line 10: not valid JSON" in out and "line 12: not valid JSON" in out
    assert b"answer 2" in export_session(s.path, "md")


def test_trailing_junk_on_the_header_line_is_a_damaged_header(tmp_path: Path) -> None:
    d = parse_session(b'{"type":"session","version":3,"id":"a","timestamp":"","cwd":"/"} x\n1 x\n')
    assert d.header is None and d.header_error == "line 1 is not valid JSON"
    assert summarize_bytes(b"1 x\n", "p").header_error == "line 1 is not valid JSON"


def test_every_reader_survives_each_kind_of_junk(sessions_dir: Path) -> None:
    s, raw = _valid(sessions_dir)
    assert s.path is not None
    lines = raw.split(b"\n")
    for junk in JUNK:
        for at in (1, 4, len(lines) - 1):
            Path(s.path).write_bytes(b"\n".join([*lines[:at], junk, *lines[at:]]))
            every_reader(s.path, str(sessions_dir), s.id)
            d = read_session(s.path)
            assert len(d.entries) == 8 and len(d.damaged) == 1, (junk, at, d.damaged)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(junk=st.binary(max_size=80), where=st.integers(min_value=0, max_value=100), tail=st.booleans())
def test_property_any_bytes_never_raise_and_keep_the_lines_before(
    sessions_dir: Path, junk: bytes, where: int, tail: bool
) -> None:
    work = Path(tempfile.mkdtemp(dir=sessions_dir.parent))
    try:
        sub = work / "sessions"
        sub.mkdir()
        s, raw = _valid(sub)
        assert s.path is not None
        lines = raw.rstrip(b"\n").split(b"\n")
        at = len(lines) if tail else 1 + where % len(lines)  # after the header at least
        before = b"\n".join(lines[:at]) + b"\n"
        damaged = before + junk + (b"" if tail else b"\n" + b"\n".join(lines[at:]) + b"\n")
        Path(s.path).write_bytes(damaged)
        every_reader(s.path, str(sub), s.id)
        full = parse_session(damaged)
        ids_before = [e.id for e in parse_session(before).entries]
        assert [e.id for e in full.entries][: len(ids_before)] == ids_before
        if tail:
            assert _projection(damaged) == _projection(before)
    finally:
        shutil.rmtree(work)
