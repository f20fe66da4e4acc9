"""`--from <id>[#n]` resolution (ama.index.reuse.resolve_from)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ama.errors import InvalidArguments, NotFound, exit_code
from ama.index.reuse import compose_prompt, resolve_from
from tests.index.helpers import Builder


@pytest.fixture
def sess(sessions_dir: Path) -> Builder:
    s = Builder(sessions_dir, "/p")
    s.user("fix the parser", "2026-03-01T10:00:00.000Z")
    s.assistant("2026-03-01T10:00:05.000Z", "done")
    s.user("and this too", "2026-03-01T10:01:00.000Z", origin="steer")
    s.user("look at the screenshot", "2026-03-01T10:02:00.000Z", images=2)
    return s


def test_numbered_and_last(sessions_dir: Path, sess: Builder) -> None:
    text, images, sid, n = resolve_from(str(sessions_dir), f"{sess.sid[:8]}#1")
    assert (text, images, sid, n) == ("fix the parser", [], sess.sid, 1)
    assert (
        resolve_from(str(sessions_dir), f"{sess.sid}#2").text == "and this too"
    )  # steer messages are numbered
    last = resolve_from(str(sessions_dir), sess.sid[:6])
    assert (last.text, last.n, len(last.images)) == ("look at the screenshot", 3, 2)
    assert last.images[0].mime_type == "image/png" and last.images[0].data == "iVBORw0KGgo="
    assert resolve_from(str(sessions_dir), f"{sess.path}#1").text == "fix the parser"


@pytest.mark.parametrize("suffix", ["#0", "#4", "#x", "#", "#-1", "#1.5"])
def test_bad_numbers_exit_2(sessions_dir: Path, sess: Builder, suffix: str) -> None:
    with pytest.raises(InvalidArguments) as e:
        resolve_from(str(sessions_dir), sess.sid[:8] + suffix)
    assert exit_code(e.value) == 2 and suffix[1:] in e.value.message


def test_missing_session_exits_5(sessions_dir: Path, sess: Builder) -> None:
    with pytest.raises(NotFound) as e:
        resolve_from(str(sessions_dir), "deadbeef#1")
    assert exit_code(e.value) == 5
    with pytest.raises(InvalidArguments):
        resolve_from(str(sessions_dir), "")


def test_a_session_without_user_messages(sessions_dir: Path) -> None:
    s = Builder(sessions_dir, "/p")
    s.assistant("2026-03-01T10:00:05.000Z", "hello")
    with pytest.raises(InvalidArguments, match="no user messages"):
        resolve_from(str(sessions_dir), s.sid)


def test_compose_prompt() -> None:
    assert compose_prompt("original", None) == "original"
    assert compose_prompt("original", "  only the tests ") == "original\n\nonly the tests"
    assert compose_prompt("", "extra") == "extra"
