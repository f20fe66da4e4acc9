"""The ``ama`` entry point.

``ama <command> ...`` dispatches to a command-group module, imported only when used, so
that ``ama --version`` and ``ama stats`` stay fast.  Anything else is the agent itself.
Errors are mapped to exit codes here and only here.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

#: command name -> (module, one-line summary).  Each module defines ``build_parser(prog)``
#: returning an ``argparse.ArgumentParser`` whose parsed namespace carries ``func``.
COMMANDS: dict[str, tuple[str, str]] = {
    "sessions": ("ama.cli.sessions", "list, show, fork, archive, rename, delete and restore sessions"),
    "sandbox": ("ama.cli.sandbox", "show the OS sandbox and run commands under the bash tool's policy"),
}


def _agent_parser() -> argparse.ArgumentParser:
    from ama import __version__

    lines = [f"  {name:<10} {summary}" for name, (_, summary) in COMMANDS.items()]
    parser = argparse.ArgumentParser(
        prog="ama",
        description="ama: a terminal coding agent with durable, searchable, rewindable sessions.",
        epilog="commands:\n" + "\n".join(lines) + "\n\nRun 'ama <command> --help' for a command's options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ama {__version__}")
    parser.add_argument("--session-dir", metavar="DIR", help="sessions directory (default: <data dir>/sessions)")
    return parser


def run(func: Callable[[argparse.Namespace], int | None], args: argparse.Namespace) -> int:
    """Call a command function, mapping ama errors to messages and exit codes."""
    from ama.errors import AmaError, exit_code

    try:
        return int(func(args) or 0)
    except AmaError as err:
        if getattr(args, "json", False):
            import json

            print(json.dumps({"error": err.to_json()}, ensure_ascii=False), file=sys.stderr)
        else:
            print(f"ama: error: {err.message}", file=sys.stderr)
        return exit_code(err)
    except KeyboardInterrupt:
        print("ama: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # e.g. `ama sessions list | head`; silence the interpreter's flush error too.
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        name = argv[0]
        module = importlib.import_module(COMMANDS[name][0])
        parser = module.build_parser(f"ama {name}")
        args = parser.parse_args(argv[1:])
        if not hasattr(args, "func"):
            parser.print_help()
            return 2
        return run(args.func, args)
    parser = _agent_parser()
    args = parser.parse_args(argv)
    parser.print_help()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
