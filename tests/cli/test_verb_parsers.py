"""``ama sessions VERB`` builds only VERB's parser (cli/util.OnlyVerb): the same options,
help and errors as the whole group's parser."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from ama.cli import sessions


def _verbs(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


def test_the_verb_list_is_every_verb_of_the_group() -> None:
    assert tuple(_verbs(sessions.build_parser("ama sessions"))) == sessions.VERBS


@pytest.mark.parametrize("verb", sessions.VERBS)
def test_one_verb_is_built_as_the_whole_group_builds_it(verb: str) -> None:
    whole = _verbs(sessions.build_parser("ama sessions"))[verb]
    alone = _verbs(sessions.build_parser("ama sessions", only=verb))
    assert list(alone) == [verb]
    assert alone[verb].format_help() == whole.format_help()
    assert alone[verb].get_default("func") is whole.get_default("func")


def test_an_unknown_verb_still_lists_the_choices() -> None:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit):
        sessions.build_parser("ama sessions", only="lst").parse_args(["lst"])
    assert "choose from 'list', 'show', 'search'" in err.getvalue()
