"""The bypass corpus (tests/fixtures/permissions/corpus.json) through ``decide()``.

Every dangerous shape must ask in ``full-auto``, in ``default`` and under sandbox auto-allow
(``default`` + an active sandbox that denies network); every everyday command must stay
allowed in ``full-auto`` and under sandbox auto-allow (fail closed must not make them ask).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ama.permissions import PermissionContext, SandboxInfo, decide

CORPUS = json.loads((Path(__file__).parents[1] / "fixtures" / "permissions" / "corpus.json").read_text())
HOME, CWD = "/home/u", "/home/u/ws"  # the workspace lies under the home directory
CONTEXTS = {
    "full-auto": PermissionContext(mode="full-auto", cwd=CWD, home=HOME),
    "default": PermissionContext(mode="default", cwd=CWD, home=HOME),
    "sandbox": PermissionContext(mode="default", cwd=CWD, home=HOME, sandbox=SandboxInfo(True, True)),
}
DANGEROUS = [(cat, e) for cat, entries in CORPUS["dangerous"].items() for e in entries]
EVERYDAY = CORPUS["everyday"]


def test_corpus_size() -> None:
    assert len(DANGEROUS) >= 150 and len(CORPUS["dangerous"]) >= 10
    assert len(EVERYDAY) >= 100
    commands = [e["command"] for _c, e in DANGEROUS] + [e["command"] for e in EVERYDAY]
    assert len(commands) == len(set(commands))


@pytest.mark.parametrize(
    ("category", "entry"), DANGEROUS, ids=[f"{c}:{e['command'][:40]}" for c, e in DANGEROUS]
)
def test_dangerous_shape(category: str, entry: dict) -> None:
    for name, ctx in CONTEXTS.items():
        d = decide("bash", {"command": entry["command"]}, ctx)
        assert d.action == entry[name], (name, d)
        if name == "full-auto":
            assert d.source in ("dangerous", "secret"), d


@pytest.mark.parametrize("entry", EVERYDAY, ids=[e["command"][:50] for e in EVERYDAY])
def test_everyday_command(entry: dict) -> None:
    for name, ctx in CONTEXTS.items():
        d = decide("bash", {"command": entry["command"]}, ctx)
        assert d.action == entry[name], (name, d)
