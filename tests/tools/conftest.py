"""Fixtures for the tool tests: a workspace and a ToolContext with an in-memory session."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ama.tools import ReadFiles, ToolContext
from tests.tools.helpers import MemorySession


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def events() -> list[dict]:
    return []


@pytest.fixture
def ctx(workspace: Path, tmp_path: Path, events: list[dict]) -> ToolContext:
    return ToolContext(
        cwd=str(workspace),
        abort=asyncio.Event(),
        read_files=ReadFiles(),
        output_dir=str(tmp_path / "out"),
        session=MemorySession(),
        emit=events.append,
    )
