"""The ``ama`` entry point.

``ama <command> ...`` dispatches to a command-group module, imported only when used, so
that ``ama --version`` and ``ama stats`` stay fast.  Anything else is the agent itself.
Errors are mapped to exit codes here and only here.
"""

from __future__ import annotations

import importlib
import sys

from ama.permission_modes import PERMISSION_MODES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from types import SimpleNamespace
    from typing import Any

#: command name -> (module, one-line summary).  Each module defines ``build_parser(prog)``
#: returning an ``argparse.ArgumentParser`` whose parsed namespace carries ``func``.
COMMANDS: dict[str, tuple[str, str]] = {
    "sessions": ("ama.cli.sessions", "list, show, fork, archive, rename, delete and restore sessions"),
    "sandbox": ("ama.cli.sandbox", "show the OS sandbox and run commands under the bash tool's policy"),
    "stats": ("ama.cli.stats", "requests, turns, tokens, cache hit rate, cost, errors and tools of your sessions"),
    "runs": ("ama.cli.runs", "list agent runs and show a run's status"),
    "doctor": ("ama.cli.doctor", "check ama's setup; --reindex rebuilds the session index"),
    "config": ("ama.cli.config", "list, get, set and unset configuration keys"),
    "skills": ("ama.cli.skills", "list the skills the agent finds (SKILL.md folders)"),
    "templates": ("ama.cli.templates", "list the prompt templates (/name slash commands)"),
    "plans": ("ama.cli.plans", "list, show and remove this project's plans (.ama/plans/)"),
    "agents": ("ama.cli.agents", "list the agent types a task can run and the external agents"),
}


def _json_error(error: dict, code: int) -> None:
    """The one JSON object ``-p --output-format json|stream-json`` prints (on stdout) when the
    run could not start, so a consumer always reads a JSON reply."""
    import json

    sys.stdout.write(json.dumps({"type": "error", "error": error, "exitCode": code}, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _wants_json(argv: Sequence[str]) -> bool:
    for i, a in enumerate(argv):
        if a in ("--output-format=json", "--output-format=stream-json"):
            return True
        if a == "--output-format" and i + 1 < len(argv) and argv[i + 1] in ("json", "stream-json"):
            return True
    return False


def _agent_parser(*, json_errors: bool = False) -> argparse.ArgumentParser:
    """The agent's own parser (argparse is loaded here, not with the module: a command's
    walk starts before it, ``main``).  Bad options exit 2 as usual; with ``json_errors`` (a
    JSON output format) they also print the JSON error."""
    import argparse

    from ama import __version__

    class _AgentParser(argparse.ArgumentParser):
        def error(self, message: str):  # type: ignore[override]
            if json_errors:
                _json_error({"code": "invalid_arguments", "message": message}, 2)
            super().error(message)

    lines = [f"  {name:<10} {summary}" for name, (_, summary) in COMMANDS.items()]
    parser = _AgentParser(
        prog="ama",
        usage="ama [options] [PROMPT ...]\n       ama <command> ...",
        description="ama: a terminal coding agent with durable, searchable, rewindable sessions. "
        "Without -p it starts the interactive agent (PROMPT, if given, is sent first).",
        epilog="commands:\n" + "\n".join(lines) + "\n\nRun 'ama <command> --help' for a command's options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("prompt", nargs="*", metavar="PROMPT", help="the prompt (joined with spaces)")
    parser.add_argument("--version", action="version", version=f"ama {__version__}")
    parser.add_argument(
        "-p", "--print", action="store_true", help="print mode: run the prompt (args and/or stdin), print the reply, exit"
    )
    parser.add_argument(
        "--output-format",
        choices=("text", "json", "stream-json"),
        default="text",
        help="-p output: the final text, one JSON result object, or the event stream as JSON lines",
    )
    parser.add_argument("-m", "--model", metavar="PROVIDER/ID", help="model, e.g. anthropic/claude-sonnet-4-5")
    parser.add_argument(
        "--thinking", metavar="LEVEL", choices=("off", "minimal", "low", "medium", "high", "xhigh"), help="thinking level"
    )
    parser.add_argument(
        "--permission-mode",
        choices=PERMISSION_MODES,
        help="how tool calls are approved (default: config permissionMode, else default)",
    )
    parser.add_argument("-r", "--resume", nargs="?", const="", metavar="ID", help="resume a session (id, prefix or path)")
    parser.add_argument("-c", "--continue", dest="continue_", action="store_true", help="continue the latest session here")
    parser.add_argument("--no-session", action="store_true", help="do not write a session file")
    parser.add_argument("--session-dir", metavar="DIR", help="sessions directory (default: <data dir>/sessions)")
    parser.add_argument("--max-turns", type=int, metavar="N", help="stop a run after N model calls")
    parser.add_argument("--max-cost", type=float, metavar="USD", help="stop a run once its model requests cost USD dollars")
    parser.add_argument("--max-tokens", type=int, metavar="N", help="stop a run once its model requests used N tokens")
    parser.add_argument("--max-wall-time", type=float, metavar="SECONDS", help="stop a run after SECONDS (fails: timeout)")
    parser.add_argument(
        "--fallback-model", metavar="PROVIDER/ID", help="model answering one request when the model is overloaded"
    )
    parser.add_argument(
        "--from", dest="from_", metavar="ID[#N]", help="reuse user message #N (default: the last) of a session as the prompt"
    )
    parser.add_argument(
        "--image",
        action="append",
        metavar="FILE",
        help="-p: attach an image (PNG, JPEG, GIF or WebP, at most 5 MiB) to the prompt; repeatable",
    )
    parser.add_argument("--mode", choices=("interactive", "rpc", "acp"), default="interactive", help="interface mode")
    parser.add_argument("--line", action="store_true", help="interactive mode for plain terminals (no full-screen input)")
    return parser


def run(func: Callable[[Any], int | None], args: argparse.Namespace | SimpleNamespace) -> int:
    """Call a command function, mapping ama errors to messages and exit codes (``args``:
    argparse's, or what ``cli/quick.py`` read from a plain command line)."""
    from ama.errors import AmaError, exit_code

    try:
        return int(func(args) or 0)
    except AmaError as err:
        if getattr(args, "output_format", "text") != "text":
            _json_error(err.to_json(), exit_code(err))
            print(f"ama: error: {err.message}", file=sys.stderr)
        elif getattr(args, "json", False):
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
    """``ama``'s entry point (the console script and ``python -m ama`` call it with no
    arguments: this process's command line)."""
    own = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        from ama.cli.early import early_walk, reads_index

        with early_walk(argv):
            code = _command(argv)
        if own and reads_index(argv):
            # the process ends next: its final garbage collections would walk every object
            # the command loaded only to find nothing the exit does not free (~3 ms of an
            # indexed query).  These commands hold no Python file open for writing (SQLite
            # writes its own files and is closed; stdout and stderr are flushed at exit).
            import gc

            gc.freeze()
        return code
    parser = _agent_parser(json_errors=_wants_json(argv))
    args = parser.parse_args(argv)
    from ama.cli.agent import agent_main

    return run(agent_main, args)


def _command(argv: list[str]) -> int:
    """``ama <command> ...``: the command's module parses the rest and runs (the plain
    command lines of the index's queries without argparse: ``cli/quick.py``)."""
    from ama.cli.early import reads_index

    if reads_index(argv):
        from ama.cli.quick import parse

        quick = parse(argv)
        if quick is not None:
            return run(*quick)
    name = argv[0]
    module = importlib.import_module(COMMANDS[name][0])
    verbs = getattr(module, "VERBS", None)
    if verbs is not None and len(argv) > 1 and argv[1] in verbs:
        parser = module.build_parser(f"ama {name}", only=argv[1])  # the verb about to run only
    else:
        parser = module.build_parser(f"ama {name}")
    args = parser.parse_args(argv[1:])
    if not hasattr(args, "func"):
        parser.print_help()
        return 2
    return run(args.func, args)


if __name__ == "__main__":
    raise SystemExit(main())
