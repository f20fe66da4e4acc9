"""Plain command lines of ``ama stats``, ``ama sessions list`` and ``ama sessions search``,
read without argparse.

These commands answer from the index in a few tens of milliseconds, and loading argparse
(with ``gettext``, and ``locale`` for its message lookups) and building the command's parser
took ~4-6 ms of that.  :func:`parse` reads a command line made only of the command's own
options written in full (``--opt value``, ``--opt=value``, flags) and its positional
arguments, each option at most once, and gives what argparse would give: the command's
function and its arguments.  Anything else -- ``-h``, an abbreviated or unknown option, a
value that starts with ``-``, a repeated option, a value argparse would refuse, ``--`` --
gives None, and argparse reads the line as before (with its help and its errors).

:data:`SPECS` repeats what the commands' parsers declare (``cli/stats.py``,
``cli/sessions.py``, ``cli/search.py``); tests/cli/test_quick.py checks it against the
parsers themselves and compares both readings of random command lines.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import SimpleNamespace

#: an option's kind: a flag (``store_true``), a text, an integer (``type=int``); a tuple of
#: texts: a text among these choices
FLAG, TEXT, INT = "flag", "text", "int"


class Spec:
    """A command's arguments as its argparse parser declares them."""

    __slots__ = ("func", "positionals", "options", "exclusive")

    def __init__(
        self,
        func: tuple[str, str],
        positionals: tuple[str, ...],
        options: dict[str, tuple[str, str | tuple[str, ...], object]],
        exclusive: tuple[str, ...] = (),
    ) -> None:
        self.func = func  # (module, name) of the function the parser sets as ``func``
        self.positionals = positionals  # their destinations, in order (each required)
        self.options = options  # "--name" -> (destination, kind, default)
        self.exclusive = exclusive  # options of one mutually exclusive group


SPECS: dict[tuple[str, ...], Spec] = {
    ("stats",): Spec(
        ("ama.cli.stats", "stats"),
        (),
        {
            "--since": ("since", TEXT, None),
            "--until": ("until", TEXT, None),
            "--by": (
                "by",
                ("day", "week", "month", "provider", "channel", "model", "project", "agent"),
                None,
            ),
            "--project": ("project", TEXT, None),
            "--all": ("all", FLAG, False),
            "--top": ("top", INT, 5),
            "--json": ("json", FLAG, False),
            "--no-cache": ("no_cache", FLAG, False),
            "--session-dir": ("session_dir", TEXT, None),
        },
        exclusive=("--project", "--all"),
    ),
    ("sessions", "list"): Spec(
        ("ama.cli.sessions", "sessions_list"),
        (),
        {
            "--session-dir": ("session_dir", TEXT, None),
            "--all": ("all", FLAG, False),
            "--archived": ("archived", FLAG, False),
            "--include-subagents": ("include_subagents", FLAG, False),
            "--limit": ("limit", INT, 50),
            "--cursor": ("cursor", TEXT, None),
            "--json": ("json", FLAG, False),
            "--no-cache": ("no_cache", FLAG, False),
        },
    ),
    ("sessions", "search"): Spec(
        ("ama.cli.search", "sessions_search"),
        ("pattern",),
        {
            "--all": ("all", FLAG, False),
            "--role": ("role", TEXT, None),
            "--since": ("since", TEXT, None),
            "--limit": ("limit", INT, 20),
            "--json": ("json", FLAG, False),
            "--no-cache": ("no_cache", FLAG, False),
            "--session-dir": ("session_dir", TEXT, None),
        },
    ),
}


def parse(argv: list[str]) -> tuple[Callable[[SimpleNamespace], int | None], SimpleNamespace] | None:
    """``(function, arguments)`` as argparse would give them for ``ama <argv>``, when the
    line is plain (see the module's docstring); None: let argparse read it."""
    words = 2 if argv[:1] == ["sessions"] else 1
    spec = SPECS.get(tuple(argv[:words]))
    if spec is None:
        return None
    values = _values(spec, argv[words:])
    if values is None:
        return None
    import importlib
    from types import SimpleNamespace

    module, name = spec.func
    func = getattr(importlib.import_module(module), name)
    return func, SimpleNamespace(**values, func=func)


def _values(spec: Spec, args: list[str]) -> dict[str, object] | None:
    """The destinations' values (defaults included), or None."""
    given: dict[str, object] = {}
    seen: set[str] = set()
    positionals = iter(spec.positionals)
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if not a.startswith("-"):
            dest = next(positionals, None)
            if dest is None:  # (argparse: unrecognized arguments)
                return None
            given[dest] = a
            continue
        name, eq, explicit = a.partition("=")
        opt = spec.options.get(name)
        if opt is None or name in seen:
            return None
        seen.add(name)
        dest, kind, _default = opt
        if kind == FLAG:
            if eq:
                return None
            given[dest] = True
            continue
        if eq:
            value = explicit
        elif i < len(args):
            value = args[i]
            i += 1
        else:
            return None
        if not value or value.startswith("-"):
            return None
        if kind == INT:
            try:
                given[dest] = int(value)
            except ValueError:
                return None
        elif isinstance(kind, tuple) and value not in kind:
            return None
        else:
            given[dest] = value
    if next(positionals, None) is not None:  # (argparse: the arguments are required)
        return None
    if sum(o in seen for o in spec.exclusive) > 1:
        return None
    out = {dest: default for dest, _kind, default in spec.options.values()}
    out.update(given)
    return out
