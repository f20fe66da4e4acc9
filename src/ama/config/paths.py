"""Where ama keeps its data and configuration.

* ``AMA_HOME=DIR`` puts everything in DIR: ``DIR/config.json``, ``DIR/sessions/``, ...
* otherwise data lives in ``$XDG_DATA_HOME/ama`` (default ``~/.local/share/ama``) and the
  user config in ``$XDG_CONFIG_HOME/ama/config.json`` (default ``~/.config/ama``).
* the sessions directory is ``--session-dir`` if given, else ``$AMA_SESSION_DIR``,
  else ``<data dir>/sessions``.
"""

from __future__ import annotations

import os
from pathlib import Path


def _xdg(var: str, default: str) -> Path:
    value = os.environ.get(var)
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home() / default


def data_dir() -> Path:
    home = os.environ.get("AMA_HOME")
    if home:
        return Path(home).expanduser()
    return _xdg("XDG_DATA_HOME", ".local/share") / "ama"


def config_dir() -> Path:
    home = os.environ.get("AMA_HOME")
    if home:
        return Path(home).expanduser()
    return _xdg("XDG_CONFIG_HOME", ".config") / "ama"


def user_config_path() -> Path:
    return config_dir() / "config.json"


def sessions_dir(override: str | os.PathLike[str] | None = None) -> Path:
    if override:
        return Path(override).expanduser().absolute()
    env = os.environ.get("AMA_SESSION_DIR")
    if env:
        return Path(env).expanduser().absolute()
    return data_dir() / "sessions"
