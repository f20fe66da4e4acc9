"""The interfaces ``cli/`` and ``rpc/`` never import each other (ARCHITECTURE.md): what they
share lives below both (``agent/options.py``, ``agent/commands.py``, ``index/hits.py``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

PKG = ROOT / "src" / "ama"


def imported_modules(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


@pytest.mark.parametrize(("layer", "other"), [("cli", "rpc"), ("rpc", "cli")])
def test_interfaces_do_not_import_each_other(layer: str, other: str) -> None:
    modules = sorted((PKG / layer).rglob("*.py"))
    assert modules
    bad = {
        str(p.relative_to(PKG)): sorted(m for m in imported_modules(p) if m == f"ama.{other}" or m.startswith(f"ama.{other}."))
        for p in modules
    }
    assert {k: v for k, v in bad.items() if v} == {}


def test_the_scan_sees_lazy_imports(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from ama.cli.agent import x\n    import ama.rpc.server\n    from ama import cli\n")
    assert {"ama.cli.agent", "ama.rpc.server", "ama.cli"} <= imported_modules(f)


def test_ui_rpc_and_help_read_one_command_catalog() -> None:
    from ama.agent.commands import COMMANDS, all_names
    from ama.cli import slash
    from ama.cli.interactive import help_text

    assert sorted(slash.COMMANDS) == sorted(all_names())  # a handler for every name, no more
    text = help_text()
    assert all(f"/{c.name}" in text and c.description in text for c in COMMANDS)
