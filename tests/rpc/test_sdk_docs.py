"""Every Python example of docs/sdk.md runs (in an empty directory) and its asserts hold."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOC = (ROOT / "docs" / "sdk.md").read_text()
EXAMPLES = re.findall(r"```python\n(.*?)```", DOC, re.S)


def test_the_doc_has_examples() -> None:
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_example_runs(index: int, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(EXAMPLES[index])
    p = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"example {index + 1} failed:\n{p.stdout}\n{p.stderr}"
    assert p.stdout.strip()
