"""Where ama keeps its data and configuration.

* ``AMA_HOME=DIR`` puts everything in DIR: ``DIR/config.json``, ``DIR/sessions/``, ...
* otherwise data lives in ``$XDG_DATA_HOME/ama`` (default ``~/.local/share/ama``) and the
  user config in ``$XDG_CONFIG_HOME/ama/config.json`` (default ``~/.config/ama``).
* the sessions directory is ``--session-dir`` if given, else ``$AMA_SESSION_DIR``,
  else ``<data dir>/sessions``.
"""

from __future__ import annotations

import os

from ama.errors import InvalidArguments

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:
    from pathlib import Path


def data_dir() -> Path:
    from pathlib import Path

    return Path(data_dir_str())


def config_dir() -> Path:
    from pathlib import Path

    return Path(_home_dir_str("XDG_CONFIG_HOME", ".config"))


def user_config_path() -> Path:
    return config_dir() / "config.json"


def sessions_dir(override: str | os.PathLike[str] | None = None) -> Path:
    from pathlib import Path

    return Path(sessions_dir_str(os.fspath(override) if override else None))


def data_dir_str() -> str:
    """``str(data_dir())``, without importing :mod:`pathlib` (~5 ms of a command's start
    with what it imports): the commands that only pass the directory on call this."""
    return _home_dir_str("XDG_DATA_HOME", ".local/share")


def sessions_dir_str(override: str | None = None) -> str:
    """``str(sessions_dir(override))``, without importing :mod:`pathlib`."""
    if override:
        return _absolute(_expanduser(override))
    env = os.environ.get("AMA_SESSION_DIR")
    if env:
        return _absolute(_expanduser(env))
    return _join(data_dir_str(), "sessions")


def _home_dir_str(var: str, default: str) -> str:
    """``$AMA_HOME``, else ``$var/ama`` (an absolute ``$var``) or ``~/default/ama``, spelled
    as :mod:`pathlib` spells it (``tests/config/test_paths_str.py``)."""
    home = os.environ.get("AMA_HOME")
    if home:
        return _expanduser(home)
    value = os.environ.get(var)
    base = value if value and os.path.isabs(value) else _join(_expanduser("~"), default)
    return _join(base, "ama")


def _pure(p: str) -> str:
    """``str(PurePosixPath(p))``: empty and ``.`` parts dropped, a root of exactly two
    slashes kept (POSIX leaves its meaning to the system), ``.`` for nothing."""
    root = "//" if p[:2] == "//" and p[2:3] != "/" else "/" if p[:1] == "/" else ""
    return root + "/".join(x for x in p.split("/") if x and x != ".") or "."


def _join(a: str, b: str) -> str:
    """``str(PurePosixPath(a) / b)`` for a relative ``b``."""
    a = _pure(a)
    return _pure(a + b if a.endswith("/") else a + "/" + b)


def _expanduser(p: str) -> str:
    """``Path(p).expanduser()``'s text: a first part of ``~`` or ``~user`` replaced by
    the home directory (InvalidArguments when there is none: pathlib raises RuntimeError)."""
    text, p = p, _pure(p)
    if p[:1] != "~":
        return p
    first, _, rest = p.partition("/")
    home = os.path.expanduser(first)
    if home[:1] == "~":
        raise _no_home(text)
    return _join(home, rest)


def _absolute(p: str) -> str:
    """``Path(p).absolute()``'s text (``p`` already pure): joined to the working directory
    unless it has a root."""
    return p if p[:1] == "/" else _join(os.getcwd(), p)


def _no_home(text: str) -> InvalidArguments:
    first = text.split("/", 1)[0]
    return InvalidArguments(
        f"cannot expand {text!r}: {first!r} has no home directory (no such user, or HOME unset)"
    )
