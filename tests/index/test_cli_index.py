"""The read-side commands: help, light imports, clean errors."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import ama as ama_package
from tests.index.helpers import ama

HEAVY = ("httpx", "rich", "prompt_toolkit", "ama.ai", "ama.agent")

PROBE = """
import io, sys, contextlib
from ama.cli.main import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
# doctor reads the model registry (names, keys, prices); no command may load a transport
transport = {"ama.ai.http", "ama.ai.http11", "ama.ai.streaming", "ama.ai.anthropic", "ama.ai.openai_completions"}
doctor = sys.argv[1:2] == ["doctor"]
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {"httpx", "rich", "prompt_toolkit"}
               or m.startswith("ama.agent") or m in transport or (m.startswith("ama.ai") and not doctor))
print(",".join(heavy))
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["stats", "--all"],
        ["stats", "--all", "--no-cache", "--by", "model"],
        ["sessions", "search", "x", "--all"],
        ["sessions", "search", "/x/", "--all", "--no-cache"],
        ["sessions", "list", "--all"],
        ["sessions", "export", "nope"],
        ["runs", "list", "--all"],
        ["runs", "status", "nope"],
        ["doctor"],
        ["doctor", "--reindex"],
    ],
)
def test_read_commands_do_not_import_the_agent_stack(argv: list[str], sessions_dir: Path) -> None:
    p = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "", f"{argv} imported {p.stdout.strip()}"


LIGHT = (
    "dataclasses", "msgspec", "ama.session.reader", "ama.index.extract", "ama.index.update", "pathlib", "typing",
    "shutil", "argparse", "gettext", "locale",
)  # fmt: skip
LIGHT_PROBE = PROBE.split("# doctor")[0] + f"print(','.join(m for m in {LIGHT!r} if m in sys.modules))\n"


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize(
    "argv",
    [
        ["stats", "--all"],
        ["stats", "--all", "--since", "2026-01-01"],  # a report not in the query cache: computed
        ["sessions", "list", "--all"],
        ["sessions", "search", "parser", "--all"],
    ],
)
def test_a_current_index_answers_without_the_decoders(argv: list[str], workers: str, sessions_dir: Path) -> None:
    """With the index current, these commands read SQLite only: no session reader, no
    msgspec, no ``dataclasses``, not even ``pathlib``, ``typing`` or ``shutil`` (argparse's
    help formatter asks it for the width): each costs milliseconds of the ~20 above the
    interpreter.  Also when the files are stat'ed in two processes, as with thousands of
    sessions (``AMA_SCAN_WORKERS=2``); and when the report is computed from the index's
    rows rather than read from the query cache (the first ``stats`` after a turn).  A plain
    command line is read without argparse (``cli/quick.py``), so not even argparse,
    ``gettext`` and ``locale`` (its messages' lookups) are loaded."""
    from tests.index.helpers import Builder

    for cwd in ("/p", "/q"):
        s = Builder(sessions_dir, cwd)
        s.user("fix the parser", "2026-03-01T10:00:01.000Z")
        s.assistant("2026-03-01T10:00:02.000Z", "done")
    ama(*argv[: argv.index("--all") + 1])  # builds the index (and caches that report)
    # without the site's start-up (``-S``): a ``.pth`` hook may load pathlib and typing
    # before any command (this container's does); the package from its source directory
    src = str(Path(ama_package.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": src, "AMA_SCAN_WORKERS": workers}
    p = subprocess.run([sys.executable, "-S", "-c", LIGHT_PROBE, *argv], capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "", f"{argv} imported {p.stdout.strip()}"


def test_help_of_every_command() -> None:
    for argv in (
        ["stats"],
        ["runs"],
        ["runs", "list"],
        ["runs", "status"],
        ["doctor"],
        ["sessions", "search"],
        ["sessions", "export"],
    ):
        out = ama(*argv, "--help").stdout
        assert out.startswith(f"usage: ama {' '.join(argv)}")


def test_fts_folding_never_loses_a_python_lowercase_match() -> None:
    """For every character whose Python lower case holds ASCII letters or digits, the
    search table's term, lower-cased by Python, holds them too (so term expansion in
    search.fts_query is a superset of what the matcher accepts)."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE f USING fts5(t, tokenize='unicode61 remove_diacritics 0')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')")
    chars = [c for c in map(chr, range(0x80, 0x30000)) if not 0xD800 <= ord(c) < 0xE000]
    chars = [c for c in chars if any(ch.isascii() and ch.isalnum() for ch in c.lower())]
    assert chars  # İ and K at least
    db.executemany("INSERT INTO f (rowid, t) VALUES (?, ?)", ((ord(c), f"q{c}z") for c in chars))
    terms = {doc: term for doc, term in db.execute("SELECT doc, term FROM v")}
    runs = re.compile(r"[a-z0-9]+")
    for c in chars:
        lowered = f"q{c}z".lower()
        term = terms[ord(c)].lower()
        for run in runs.findall(lowered):
            assert run in term, (hex(ord(c)), terms[ord(c)])


def test_user_mistakes_are_one_line_errors(sessions_dir: Path) -> None:
    for argv, rc, needle in (
        (["sessions", "export", "nope"], 5, "no session 'nope'"),
        (["sessions", "export", "ab"], 2, "too short"),
        (["runs", "status", "nope"], 2, "nope"),
        (["stats", "--since", "tomorrow-ish"], 2, "tomorrow-ish"),
        (["sessions", "search", "/[/"], 2, "invalid regular expression"),
    ):
        p = ama(*argv, rc=rc)
        assert needle in p.stderr and len(p.stderr.strip().splitlines()) == 1


FREEZE_PROBE = """
import gc, sys
from ama.cli.main import main
explicit = sys.argv[1] == "explicit"
sys.argv = ["ama", *sys.argv[2:]]
code = main(sys.argv[1:] if explicit else None)
print(f"{code} {gc.get_freeze_count() > 0}", file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("argv", "frozen"),
    [
        (["stats", "--all"], True),
        (["stats", "--all", "--no-cache", "--json"], True),
        (["sessions", "list", "--all"], True),
        (["sessions", "search", "parser", "--all"], True),
        (["runs", "list", "--all"], False),
        (["config", "list"], False),
    ],
)
def test_index_queries_leave_without_the_final_collections(argv: list[str], frozen: bool, sessions_dir: Path) -> None:
    """As this process's command, ``stats`` / ``sessions list`` / ``sessions search`` end by
    freezing the collector (the exit's collections would walk every object loaded, ~3 ms),
    and their output is whole; other commands, and ``main(argv)`` called by a program that
    goes on (the tests), keep the collector as it was."""
    from tests.index.helpers import Builder

    s = Builder(sessions_dir, "/p")
    s.user("fix the parser", "2026-03-01T10:00:01.000Z")
    s.assistant("2026-03-01T10:00:02.000Z", "done")
    want = ama(*argv).stdout
    for how, expect in (("own", frozen), ("explicit", False)):
        p = subprocess.run([sys.executable, "-c", FREEZE_PROBE, how, *argv], capture_output=True, text=True, timeout=60)
        assert p.stderr.splitlines()[-1] == f"0 {expect}", (how, p.stderr)
        assert p.stdout == want
