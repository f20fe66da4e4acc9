"""The shutil-free help formatters give the width argparse's own would."""

from __future__ import annotations

import argparse
import shutil

import pytest

from ama.index import helpfmt


@pytest.mark.parametrize("columns", [None, "", "0", "-5", "abc", " 90", "100", "7"])
def test_the_width_is_the_one_shutil_gives(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert helpfmt._width() == shutil.get_terminal_size().columns - 2


@pytest.mark.parametrize(("ours", "theirs"), [
    (helpfmt.Wrapping, argparse.HelpFormatter),
    (helpfmt.Formatter, argparse.RawDescriptionHelpFormatter),
])  # fmt: skip
@pytest.mark.parametrize("columns", ["0", "40", "120"])
def test_help_is_the_same_as_with_argparses_formatter(
    ours: type, theirs: type, columns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", columns)

    def text(formatter: type) -> str:
        p = argparse.ArgumentParser(
            prog="ama x",
            formatter_class=formatter,
            description="A description long enough to be wrapped at forty columns,\n  kept as written by the raw one.",
        )
        p.add_argument("--limit", type=int, metavar="N", help="page size (default 50), with a help text that wraps")
        p.add_argument("id", help="session id")
        return p.format_help()

    assert text(ours) == text(theirs)
