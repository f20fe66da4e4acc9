"""Every test runs with its own ama home: no test touches the user's real data or config."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"

# `python -m ama` in a subprocess runs the same ama as the tests import (this checkout's src/,
# put on sys.path by pyproject's pytest `pythonpath`), not whatever is installed.
_SRC = str(ROOT / "src")
if _SRC not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_SRC, os.environ.get("PYTHONPATH")) if p)


@pytest.fixture(autouse=True)
def ama_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("ama-home")
    monkeypatch.setenv("AMA_HOME", str(home))
    for var in ("AMA_SESSION_DIR", "AMA_SANDBOX", "AMA_CHECKPOINTS", "AMA_MODEL", "AMA_PERMISSION_MODE", "NO_COLOR"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def sessions_dir(ama_home: Path) -> Path:
    d = ama_home / "sessions"
    d.mkdir(exist_ok=True)
    return d


def ama_cmd(*args: str) -> list[str]:
    """argv that runs the ama CLI of this checkout with the current interpreter."""
    return [sys.executable, "-m", "ama", *args]


def run_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    return env
