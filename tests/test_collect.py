"""Bare ``pytest`` (the console script, which puts nothing on sys.path) collects the suite."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT


def test_bare_pytest_collects_tests_that_import_tests_helpers() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # -P: like the `pytest` script, do not put the current directory on sys.path
    p = subprocess.run(
        [sys.executable, "-P", "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "tests/rpc/test_rpc_stdin.py", "tests/agent/test_from.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    assert "ModuleNotFoundError" not in p.stdout
