from __future__ import annotations

import pytest

from ama.ai import reset_scripted

from .server import LocalServer


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def _server():
    server = LocalServer().start()
    yield server
    server.stop()


@pytest.fixture
def server(_server: LocalServer):
    _server.reset()
    yield _server
    _server.release.set()


@pytest.fixture(autouse=True)
def _fresh_scripts():
    reset_scripted()
    yield
    reset_scripted()
