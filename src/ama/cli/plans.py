"""``ama plans list|show|rm``: the plans of this project (``.ama/plans/``; docs/plan.md).

Exit codes: 0 done (also an empty list), 2 bad arguments or an ambiguous id, 5 an unknown
plan or version.
"""

from __future__ import annotations

import argparse
import os
import time

from ama.cli.util import print_json
from ama.index.helpfmt import Formatter

EPILOG = (
    "A plan is named by its id (plan-1a2b3c4d), a unique prefix of it, or its file name without -v<n>.md "
    "(the slug of its title). Exit codes: 0 done, 2 bad arguments or ambiguous, 5 unknown plan. See docs/plan.md."
)


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="The plans proposed in plan mode in this project: one Markdown file per version in "
        ".ama/plans/, named after the plan's title.",
        epilog=EPILOG,
        formatter_class=Formatter,
    )
    sub = parser.add_subparsers(metavar="COMMAND")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--cwd", metavar="DIR", help="the project directory (default: the current directory)")
        p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("list", help="list the plans, newest first", formatter_class=Formatter, epilog=EPILOG,
                       description="List this project's plans, the most recently written first: id, latest "
                       "version, title and file.")  # fmt: skip
    common(p)
    p.set_defaults(func=plans_list)

    p = sub.add_parser("show", help="print a plan's Markdown", formatter_class=Formatter, epilog=EPILOG,
                       description="Print the Markdown of a plan's latest version (or --version N).")  # fmt: skip
    p.add_argument("plan", metavar="PLAN", help="plan id, unique id prefix, or file slug")
    p.add_argument("--version", type=int, metavar="N", help="this version instead of the latest")
    common(p)
    p.set_defaults(func=plans_show)

    p = sub.add_parser("rm", help="remove a plan's files", formatter_class=Formatter, epilog=EPILOG,
                       description="Remove the files of every version of a plan (or only --version N) and say "
                       "which. The session entries that recorded the plan stay.")  # fmt: skip
    p.add_argument("plan", metavar="PLAN", help="plan id, unique id prefix, or file slug")
    p.add_argument("--version", type=int, metavar="N", help="remove only this version")
    common(p)
    p.set_defaults(func=plans_rm)
    return parser


def _cwd(args: argparse.Namespace) -> str:
    from ama.errors import InvalidArguments

    cwd = os.path.abspath(args.cwd or os.getcwd())
    if not os.path.isdir(cwd):
        raise InvalidArguments(f"--cwd {args.cwd!r} is not a directory")
    return cwd


def _rel(path: str, cwd: str) -> str:
    rel = os.path.relpath(path, cwd)
    return path if rel.startswith("..") else rel


def plans_list(args: argparse.Namespace) -> int:
    from ama.agent.plan_files import plans_dir, scan

    cwd = _cwd(args)
    plans = scan(cwd)
    if args.json:
        print_json({"plans": [p.to_json() for p in plans], "dir": plans_dir(cwd)})
        return 0
    if not plans:
        print(f"no plans in {plans_dir(cwd)}")
        return 0
    for p in plans:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(p.latest.mtime))
        versions = f"v{p.latest.version}" + (f" ({len(p.versions)} files)" if len(p.versions) > 1 else "")
        print(f"{p.id}  {versions:<14} {when}  {p.title}  {_rel(p.latest.path, cwd)}")
    return 0


def plans_show(args: argparse.Namespace) -> int:
    from ama.agent.plan_files import match, pick_version, scan

    cwd = _cwd(args)
    plan = match(scan(cwd), args.plan, cwd)
    v = pick_version(plan, args.version)
    if args.json:
        print_json({**plan.to_json(), "version": v.version, "filePath": v.path, "markdown": v.markdown})
        return 0
    print(v.markdown)
    return 0


def plans_rm(args: argparse.Namespace) -> int:
    from ama.agent.plan_files import match, pick_version, scan
    from ama.errors import AmaError

    cwd = _cwd(args)
    plan = match(scan(cwd), args.plan, cwd)
    gone = [pick_version(plan, args.version)] if args.version is not None else list(plan.versions)
    removed = []
    for v in gone:
        try:
            os.remove(v.path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise AmaError("io_error", f"cannot remove {v.path}: {exc.strerror or exc}") from None
        removed.append(v)
    if args.json:
        print_json({"id": plan.id, "removed": [v.to_json() for v in removed]})
        return 0
    for v in removed:
        print(f"removed {_rel(v.path, cwd)} (plan {plan.id} version {v.version})")
    return 0
