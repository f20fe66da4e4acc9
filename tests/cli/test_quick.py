"""cli/quick.py: the plain command lines of the index's queries, read without argparse,
give what argparse gives (or are left to it)."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ama.cli import quick
from ama.cli.quick import FLAG, INT, SPECS, TEXT


def _parser(key: tuple[str, ...]) -> argparse.ArgumentParser:
    """The argparse parser that reads what follows ``ama <key>``."""
    if key == ("stats",):
        from ama.cli.stats import build_parser

        return build_parser("ama stats")
    from ama.cli.sessions import build_parser as sessions_parser

    top = sessions_parser("ama sessions", only=key[1])
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[key[1]]


def _argparse(key: tuple[str, ...], args: list[str]) -> dict | None:
    """What argparse gives for ``ama <key> <args>`` (None: it refuses the line)."""
    if key == ("stats",):
        parser, line = _parser(key), args
    else:
        from ama.cli.sessions import build_parser as sessions_parser

        parser, line = sessions_parser("ama sessions", only=key[1]), [key[1], *args]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            return vars(parser.parse_args(line))
    except SystemExit:
        return None


@pytest.mark.parametrize("key", list(SPECS))
def test_the_specs_say_what_the_parsers_declare(key: tuple[str, ...]) -> None:
    parser = _parser(key)
    spec = SPECS[key]
    options, positionals = {}, []
    for a in parser._actions:
        if isinstance(a, argparse._HelpAction):
            continue
        if not a.option_strings:
            assert a.nargs is None and a.required
            positionals.append(a.dest)
            continue
        assert len(a.option_strings) == 1 and a.option_strings[0].startswith("--"), a.option_strings
        if isinstance(a, argparse._StoreTrueAction):
            kind: object = FLAG
        else:
            assert type(a) is argparse._StoreAction and a.nargs is None and a.const is None
            kind = INT if a.type is int else TEXT
            assert a.type in (None, int)
            if a.choices is not None:
                assert a.type is None
                kind = tuple(a.choices)
        options[a.option_strings[0]] = (a.dest, kind, a.default)
    assert options == spec.options
    assert tuple(positionals) == spec.positionals
    groups = [
        tuple(o for a in g._group_actions for o in a.option_strings)
        for g in parser._mutually_exclusive_groups
    ]
    assert groups == ([spec.exclusive] if spec.exclusive else [])
    module, name = spec.func
    import importlib

    assert parser.get_default("func") is getattr(importlib.import_module(module), name)


PLAIN = [
    ["stats"],
    ["stats", "--all"],
    ["stats", "--all", "--session-dir", "/tmp/s", "--json"],
    [
        "stats",
        "--since=7d",
        "--until",
        "today",
        "--by",
        "model",
        "--top",
        "3",
        "--project",
        "/p",
        "--no-cache",
    ],
    ["sessions", "list", "--all", "--limit", "10", "--cursor", "abc", "--archived", "--include-subagents"],
    ["sessions", "list", "--session-dir=/x", "--json", "--no-cache"],
    ["sessions", "search", "parser", "--all"],
    ["sessions", "search", "--role", "user,tool", "/re.x/i", "--since", "2026-01-01", "--limit=5", "--json"],
    ["sessions", "search", ""],  # an empty keyword is argparse's to judge, but plain
]


@pytest.mark.parametrize("argv", PLAIN)
def test_plain_lines_are_read_here_as_argparse_reads_them(argv: list[str]) -> None:
    words = 2 if argv[0] == "sessions" else 1
    got = quick.parse(argv)
    assert got is not None
    func, ns = got
    want = _argparse(tuple(argv[:words]), argv[words:])
    assert want is not None
    assert vars(ns) == want and func is want["func"]


LEFT = [
    ["stats", "--al"],  # abbreviated
    ["stats", "-h"],
    ["stats", "--help"],
    ["stats", "--all", "--all"],  # repeated
    ["stats", "--project", "/p", "--all"],  # exclusive
    ["stats", "--top", "-1"],  # a value that starts with "-"
    ["stats", "--top", "x"],  # not a number
    ["stats", "--by", "week2"],  # not a choice
    ["stats", "--json=yes"],  # a flag with a value
    ["stats", "--since"],  # no value
    ["stats", "--since="],  # an empty value
    ["stats", "extra"],  # a positional it does not take
    ["stats", "--", "--all"],
    ["sessions", "search"],  # the keyword is required
    ["sessions", "search", "a", "b"],
    ["sessions", "search", "-x"],
    ["sessions", "show", "abc"],  # not one of the three commands
    ["sessions"],
    ["doctor"],
]


@pytest.mark.parametrize("argv", LEFT)
def test_other_lines_are_left_to_argparse(argv: list[str]) -> None:
    assert quick.parse(argv) is None


def _lines(key: tuple[str, ...]) -> st.SearchStrategy[list[str]]:
    """Command lines of mostly plain items (an option and its value, ``--opt=value``, a
    flag, a word) with odd ones among them."""
    spec = SPECS[key]
    names = list(spec.options)
    values = [
        "5",
        " 7",
        "1_0",
        "0",
        "-1",
        "x",
        "",
        "model",
        "day",
        "agent",
        "/p",
        "a=b",
        "-",
        "--",
        "-h",
        "--al",
    ]
    value = st.sampled_from(values)
    proper = {
        n: [n] if kind == FLAG else [n, "day" if isinstance(kind, tuple) else "5"]
        for n, (_d, kind, _v) in spec.options.items()
    }
    plain = st.one_of(
        st.sampled_from(list(proper.values())),
        st.sampled_from([proper[n] for n in spec.exclusive] or [[]]),  # (both: argparse refuses)
        st.builds(lambda n, v: [n, v], st.sampled_from(names), value),
        st.builds(lambda n, v: [f"{n}={v}"], st.sampled_from(names), value),
    )
    odd = st.one_of(
        st.builds(lambda n: [n], st.sampled_from(names)),
        st.builds(lambda v: [v], value),
        st.builds(lambda t: [t], st.text(max_size=4)),
    )

    def line(
        items: list[list[str]], words: list[tuple[str, int]], extra: list[str] | None, at: int
    ) -> list[str]:
        for word, i in words:  # the positional arguments, anywhere
            items.insert(min(i, len(items)), [word])
        if extra is not None:
            items.insert(min(at, len(items)), extra)
        return [t for it in items for t in it]

    word = st.tuples(st.sampled_from(["parser", "/p.r/i", "a b", "", "7"]), st.integers(0, 5))
    return st.builds(
        line,
        st.lists(plain, max_size=5, unique_by=lambda it: it[0].split("=")[0] if it else ""),
        st.lists(word, min_size=len(spec.positionals), max_size=len(spec.positionals)),
        st.one_of(st.none(), odd),
        st.integers(0, 5),
    )


@pytest.mark.parametrize("key", list(SPECS))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_whatever_is_read_here_argparse_reads_the_same(key: tuple[str, ...], data: st.DataObject) -> None:
    args = data.draw(_lines(key))
    got = quick.parse([*key, *args])
    if got is None:
        return
    want = _argparse(key, args)
    assert want is not None, args
    func, ns = got
    assert vars(ns) == want, args
    assert func is want["func"]


def test_both_ways_print_the_same(sessions_dir) -> None:
    """A plain line (read here) and the same line with abbreviated options (argparse's to
    read) run the same command with the same arguments, errors included."""
    from tests.index.helpers import Builder, ama

    for cwd in ("/p", "/q"):
        s = Builder(sessions_dir, cwd)
        s.user("fix the parser", "2026-03-01T10:00:01.000Z")
        s.assistant("2026-03-01T10:00:02.000Z", "done")
    for plain, abbreviated in (
        (["stats", "--all", "--by", "model"], ["stats", "--al", "--by", "model"]),
        (["stats", "--all", "--json", "--no-cache"], ["stats", "--all", "--js", "--no-cache"]),
        (["sessions", "list", "--all", "--limit", "1"], ["sessions", "list", "--all", "--lim", "1"]),
        (
            ["sessions", "search", "parser", "--all", "--json"],
            ["sessions", "search", "parser", "--al", "--json"],
        ),
    ):
        assert quick.parse(plain) is not None and quick.parse(abbreviated) is None
        a, b = ama(*plain), ama(*abbreviated)
        assert a.stdout == b.stdout and a.stdout.strip()
    for plain, abbreviated, needle in (
        (["stats", "--top", "x"], ["stats", "--to", "x"], "invalid int value: 'x'"),
        (["stats", "--since", "someday"], ["stats", "--sinc", "someday"], "someday"),
        (["sessions", "list", "--limit", "0"], ["sessions", "list", "--lim", "0"], ""),
    ):
        a, b = ama(*plain, rc=None), ama(*abbreviated, rc=None)
        assert a.returncode == b.returncode != 0 and a.stderr == b.stderr and needle in a.stderr
