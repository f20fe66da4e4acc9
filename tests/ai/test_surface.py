"""The public surface of ama.ai and its import cost."""

from __future__ import annotations

import importlib
import subprocess
import sys

import ama.ai


def test_exported_names_are_exactly_all():
    importlib.import_module("ama.ai.streaming")  # a submodule must not shadow a function
    assert callable(ama.ai.stream) and callable(ama.ai.complete)
    public = sorted(n for n in vars(ama.ai) if not n.startswith("_") and not isinstance(getattr(ama.ai, n), type(ama)))
    public = [n for n in public if n not in ("annotations", "TYPE_CHECKING")]
    assert sorted(ama.ai.__all__) == public
    assert ama.ai.__all__ == sorted(ama.ai.__all__, key=str.casefold)


def test_import_does_not_load_httpx_or_yaml():
    code = "import sys, ama.ai; print(sorted(m for m in ('httpx', 'yaml', 'asyncio', 'ama.ai.http') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
