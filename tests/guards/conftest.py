from __future__ import annotations

import pytest

from tests.ai.server import LocalServer


@pytest.fixture
def server():
    srv = LocalServer().start()
    yield srv
    srv.stop()
