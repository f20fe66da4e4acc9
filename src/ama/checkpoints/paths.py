"""Where checkpoint data lives under the data dir (``<dataDir>/file-history``)."""

from __future__ import annotations

import hashlib
import os


def file_history_dir(data_dir: str | os.PathLike[str]) -> str:
    return os.path.join(os.fspath(data_dir), "file-history")


def shadow_root(data_dir: str | os.PathLike[str]) -> str:
    return os.path.join(file_history_dir(data_dir), "shadow")


def shadow_repo_dir(data_dir: str | os.PathLike[str], cwd: str) -> str:
    """The shadow repository of workspace ``cwd``: ``shadow/<sha256(realpath cwd)[:16]>``."""
    key = hashlib.sha256(os.path.realpath(cwd).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return os.path.join(shadow_root(data_dir), key)
