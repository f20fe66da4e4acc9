"""``sessions_dir_str`` / ``data_dir_str`` (no pathlib import; ``sessions_dir`` /
``data_dir`` are their ``Path``) give the text pathlib gives for every spelling of the
overrides and the environment: ``_pathlib_*`` below is the pathlib way, written once here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ama.config import paths
from ama.errors import InvalidArguments

#: path-like text: roots of one, two or three slashes, empty and "." and ".." parts, "~"
SPELLING = st.lists(st.sampled_from(["/", "//", "///", ".", "..", "a", "b c", "~", "~root", "~x", "d."]), max_size=7).map(
    "".join
)
ENV = ("AMA_HOME", "AMA_SESSION_DIR", "XDG_DATA_HOME", "HOME")


def _user(text: str) -> Path:
    try:
        return Path(text).expanduser()
    except RuntimeError:  # a "~user" without a home: the error the text way gives
        raise paths._no_home(text) from None


def _pathlib_data_dir() -> Path:
    home = os.environ.get("AMA_HOME")
    if home:
        return _user(home)
    value = os.environ.get("XDG_DATA_HOME")
    return (Path(value) if value and os.path.isabs(value) else _user("~") / ".local/share") / "ama"


def _pathlib_sessions_dir(override: str | None) -> Path:
    if override:
        return _user(override).absolute()
    env = os.environ.get("AMA_SESSION_DIR")
    if env:
        return _user(env).absolute()
    return _pathlib_data_dir() / "sessions"


def _both(fn_path, fn_str, *args):  # type: ignore[no-untyped-def]
    """``(str(fn_path(*args)), fn_str(*args))``, or the two exceptions' types."""
    out = []
    for fn in (fn_path, fn_str):
        try:
            out.append(str(fn(*args)))
        except InvalidArguments as e:  # a "~user" without a home
            out.append(f"{type(e).__name__}: {e.message}")
    return out


@settings(max_examples=300, deadline=None)
@given(
    override=st.none() | SPELLING,
    env=st.fixed_dictionaries({k: st.none() | SPELLING for k in ENV}),
    cwd=st.sampled_from(["/", "/tmp", "//tmp"]),
)
def test_the_text_is_pathlibs(override: str | None, env: dict[str, str | None], cwd: str) -> None:
    saved = {k: os.environ.get(k) for k in ENV}
    here = os.getcwd()
    try:
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        os.chdir(cwd)
        a, b = _both(_pathlib_sessions_dir, paths.sessions_dir_str, override)
        assert a == b, (override, env)
        assert a == _both(paths.sessions_dir, paths.sessions_dir_str, override)[0]
        a, b = _both(_pathlib_data_dir, paths.data_dir_str)
        assert a == b, env
    finally:
        os.chdir(here)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.mark.parametrize(
    ("text", "pure"),
    [("", "."), (".", "."), ("//a/./b//", "//a/b"), ("///a", "/a"), ("a/../b", "a/../b"), ("/", "/"), ("//", "//")],
)
def test_pure_is_purepath(text: str, pure: str) -> None:
    assert paths._pure(text) == pure == str(Path(text))


def test_a_user_without_a_home_is_a_clear_error() -> None:
    with pytest.raises(InvalidArguments, match="cannot expand '~nosuchuser9/x'"):
        paths.sessions_dir_str("~nosuchuser9/x")
    with pytest.raises(InvalidArguments, match="cannot expand '~nosuchuser9/x'"):
        paths.sessions_dir("~nosuchuser9/x")
