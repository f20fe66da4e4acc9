"""``ama sessions``: list, show, search, export, rewind, compact, fork, archive, unarchive, rename, rm,
restore, prune."""

from __future__ import annotations

import os
import sys

from ama.cli.util import (
    OnlyVerb,
    add_session_dir,
    local_time,
    one_line,
    parse_duration,
    print_json,
    sessions_dir,
)
from ama.errors import AmaError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from ama.session.projection import ProjectedContext


def sessions_list(args: argparse.Namespace) -> int:
    from ama.cli.sessions_list import sessions_list as run

    return run(args)


#: the verbs of ``ama sessions`` (``build_parser(only=...)`` builds one of them)
VERBS = (
    "list", "show", "search", "export", "rewind", "compact", "fork", "archive", "unarchive", "rename", "rm",
    "restore", "prune",
)  # fmt: skip


def build_parser(prog: str, only: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``ama sessions``; ``only``: build just this verb (the one about to run)."""
    import argparse

    from ama.index.helpfmt import Wrapping

    parser = argparse.ArgumentParser(
        prog=prog,
        formatter_class=Wrapping,
        description="Manage sessions: the append-only conversation files under the sessions directory.",
    )
    sub = OnlyVerb(parser.add_subparsers(metavar="COMMAND"), only if only in VERBS else None)

    def cmd(name: str, func, help_: str, description: str | None = None) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=description or help_, formatter_class=Wrapping)
        add_session_dir(p)
        p.set_defaults(func=func)
        return p

    p = cmd(
        "list",
        sessions_list,
        "list sessions, newest first",
        "List sessions of the current directory (or --all), newest last message first. "
        "Archived sessions are hidden unless --archived.",
    )
    p.add_argument("--all", action="store_true", help="sessions of every workspace")
    p.add_argument("--archived", action="store_true", help="list archived sessions instead of active ones")
    p.add_argument("--include-subagents", action="store_true", help="include task sub-agent sessions")
    p.add_argument("--limit", type=int, default=50, metavar="N", help="page size (default 50)")
    p.add_argument("--cursor", metavar="C", help="continue a listing from the cursor a previous page printed")
    p.add_argument("--json", action="store_true", help="print one JSON object {sessions, nextCursor, damaged}")
    p.add_argument("--no-cache", action="store_true", help="scan the session files instead of using the session index")

    p = cmd("show", sessions_show, "show a session: header, lineage, branch, counts, numbered user messages")
    p.add_argument("id", help="session id, unique id prefix (4+ chars), or path to a session file")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--context", action="store_true", help="print the projected model context of the current branch (with --json)"
    )

    import importlib

    for verb in ("search", "export", "rewind", "compact"):  # verbs with a module of their own
        if sub.wants(verb):
            importlib.import_module(f"ama.cli.{verb}").add_parser(sub, add_session_dir)

    p = cmd(
        "fork",
        sessions_fork,
        "copy a session's current branch into a new session",
        "Create a new session in the same workspace holding the effective history of the current branch "
        "(or up to --at ENTRY); prints the new id.",
    )
    p.add_argument("id", help="session id, prefix, or path")
    p.add_argument("--at", metavar="ENTRY", help="end the copied branch at this entry id")
    p.add_argument("--json", action="store_true", help="print {id, path}")

    for name, archived in (("archive", True), ("unarchive", False)):
        p = cmd(
            name,
            sessions_archive if archived else sessions_unarchive,
            f"{name} a session and (by lineage) its forks and sub-agent sessions",
        )
        p.add_argument("id", help="session id, prefix, or path")
        p.add_argument("--json", action="store_true", help="print JSON")

    p = cmd("rename", sessions_rename, "set a session's display name (empty string clears it)")
    p.add_argument("id", help="session id, prefix, or path")
    p.add_argument("name", help="the new name")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = cmd("rm", sessions_rm, "move a session to the trash (<sessions>/.trash/)")
    p.add_argument("id", help="session id, prefix, or path")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = cmd("restore", sessions_restore, "move a session back from the trash")
    p.add_argument("id", help="id or prefix of a trashed session")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = cmd("prune", sessions_prune, "delete trashed sessions older than a cutoff")
    p.add_argument("--older-than", default="30d", metavar="AGE", help="age in the trash, e.g. 30d, 12h (default 30d)")
    p.add_argument("--dry-run", action="store_true", help="only report what would be deleted")
    p.add_argument("--json", action="store_true", help="print JSON")
    return parser


# --- show -------------------------------------------------------------------------------


def sessions_show(args: argparse.Namespace) -> int:
    from ama.cli.sessions_list import settled_status
    from ama.session.catalog import resolve
    from ama.session.lineage import lineage_of
    from ama.session.overview import overview
    from ama.session.reader import map_fd, open_regular
    from ama.session.shortid import short_session_ids

    root = sessions_dir(args)
    if os.path.isfile(args.id):
        path = os.path.abspath(args.id)
    else:
        path = resolve(root, args.id, damaged=True).path
    try:  # (only reading: an error writing the output, e.g. `| head`, is not the file's)
        with open_regular(path) as f, map_fd(f.fileno()) as raw:
            if args.context:
                context = _context(raw, path)
            else:
                ov = overview(raw, path=path)  # gives a mapped file's pages back as it goes
    except OSError as e:
        raise AmaError(
            "corrupt",
            f"cannot read session file {path}: {e.strerror or e}; 'ama sessions rm {path}' moves it to the trash",
            data={"path": path},
        ) from None
    if args.context:
        from ama.cli.json_stream import write_json_stream

        head, ctx = context
        write_json_stream(head, "messages", ctx.messages, ctx.to_json(messages=False))
        return 0
    data, meta = ov.data, ov.meta  # meta: what the catalog lists (derive's answers)
    meta.task_status = settled_status(meta.task_status, path)
    users = ov.users
    counts = ov.counts
    data.entries = ov.customs  # (the overview keeps no other entries) lineage reads the archive marks
    lineage = lineage_of(root, data)
    leaves = ov.branches
    h = data.header
    info = {
        "id": data.id,
        "path": path,
        "cwd": h.cwd if h else None,
        "version": h.version if h else None,
        "created": h.timestamp if h else None,
        "name": ov.name,
        "parentSession": lineage["parent"],
        "lineage": {k: lineage[k] for k in ("parentId", "parentPath", "rootId", "relationType")},
        "forks": lineage["children"],
        "archived": lineage["archived"],
        "archivedOwn": lineage["archivedOwn"],
        "leafId": ov.leaf_id,
        "branchLength": len(ov.branch_ids),
        "branches": leaves,
        "counts": counts.to_json(),
        "labels": ov.labels,
        "problems": data.problems,
        "readonly": data.readonly_reason,
        "errorCount": meta.error_count,
        "pendingInteraction": meta.pending_interaction,
        "taskStatus": meta.task_status,
        "userMessages": [u.to_json() for u in users],
    }
    if args.json:
        from ama.cli.json_stream import indented

        sys.stdout.write(indented(info) + "\n")  # print_json's text, laid out by msgspec
        return 0
    sid = data.id or "(unknown)"
    rows = [
        ("Session", sid),
        ("File", path),
        ("Project", info["cwd"] or "-"),
        ("Created", local_time(info["created"] or "")),
    ]
    if ov.name:
        rows.append(("Name", ov.name))
    if lineage["parent"]:
        found = lineage["parentId"] or f"{lineage['parent']} (not found)"
        rows.append(("Parent", f"{found} · {lineage['relationType']} · root {lineage['rootId']}"))
    short = short_session_ids(root, [data.id, *lineage["children"]])
    if lineage["children"]:
        rows.append(("Forks", ", ".join(short[c] for c in lineage["children"])))
    if info["archived"]:
        rows.append(("Archived", "yes" if info["archivedOwn"] else "yes (inherited from an ancestor)"))
    rows.append(
        (
            "Branch",
            f"leaf {ov.leaf_id or '(before the first entry)'} · {len(ov.branch_ids)} of {counts.entries} entries · "
            f"{leaves} branch{'es' if leaves != 1 else ''}",
        )
    )
    kinds = [("user", counts.user), ("assistant", counts.assistant), ("tool results", counts.tool_results)]
    kinds += [(k, n) for k, n in (("system", counts.system), ("other", counts.other_messages)) if n]
    rows.append(("Messages", f"{counts.messages} ({', '.join(f'{k} {n}' for k, n in kinds)})"))
    status = [f"task {meta.task_status}", f"{meta.error_count} error{'s' if meta.error_count != 1 else ''}"]
    if meta.pending_interaction:
        status.append(f"pending {meta.pending_interaction.replace('_', ' ')}")
    rows.append(("Status", " · ".join(status)))
    out = [f"{label:<9} {value}" for label, value in rows]
    if data.readonly_reason and h is not None and h.version != 3:
        out.append(f"{'Read-only':<9} {data.readonly_reason}")
    out += [f"{'Damaged':<9} {p}" for p in data.problems]
    out.append("")
    if not users:
        out.append("No user messages.")
    else:
        out.append(f"User messages (reuse with ama --from {short.get(data.id) or path}#<n>):")
        for u in users:
            marks = []
            if u.origin:
                marks.append(f"[{u.origin}]")
            if u.images:
                marks.append(f"[{u.images} image{'s' if u.images > 1 else ''}]")
            if not u.on_branch:
                marks.append("[off branch]")
            prefix = f"  #{u.n:<4} {local_time(u.timestamp)}  "
            text = (" ".join(marks) + " " if marks else "") + (u.text or "")
            out.append(prefix + one_line(text, max(30, 100 - len(prefix))))
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def _context(raw: Any, path: str) -> tuple[dict, ProjectedContext]:
    """``show --json --context``: the head of the document and the projected context of
    the current branch, which the caller writes one message at a time (the text
    ``print_json`` would write, without building it whole)."""
    from ama.session.projection import project
    from ama.session.reader import parse_session
    from ama.session.tree import SessionTree

    data = parse_session(raw, path=path)  # gives a mapped file's pages back as it goes
    tree = SessionTree(data.entries, data.leaf_id)
    return {"id": data.id, "leafId": tree.leaf_id}, project(tree.branch())


# --- fork / archive / rename ---------------------------------------------------------------


def _short(root: str, sid: str, *, trash: bool = False) -> str:
    from ama.session.shortid import short_session_id

    return short_session_id(root, sid, trash=trash)


def sessions_fork(args: argparse.Namespace) -> int:
    from ama.session.catalog import resolve
    from ama.session.fork import fork_session

    root = sessions_dir(args)
    r = resolve(root, args.id)
    sid, path = fork_session(r.path, root, expected_id=r.id, at=args.at)
    if args.json:
        print_json({"id": sid, "path": path, "parentSession": r.id})
    else:
        print(sid)
        print(f"forked {_short(root, r.id)} -> {path}", file=sys.stderr)
    return 0


def _archive(args: argparse.Namespace, archived: bool) -> int:
    from ama.session.archive import set_archived

    res = set_archived(sessions_dir(args), args.id, archived)
    if args.json:
        print_json(res)
        return 0
    verb = "archived" if archived else "unarchived"
    short = _short(sessions_dir(args), res["id"])
    if not res["changed"]:
        print(f"session {short} was already {verb}")
    else:
        extra = f" (and by lineage {len(res['lineage'])} descendant session(s))" if res["lineage"] and archived else ""
        print(f"{verb} session {short}{extra}")
    return 0


def sessions_archive(args: argparse.Namespace) -> int:
    return _archive(args, True)


def sessions_unarchive(args: argparse.Namespace) -> int:
    return _archive(args, False)


def sessions_rename(args: argparse.Namespace) -> int:
    from ama.session.catalog import resolve, verify
    from ama.session.store import Session

    r = resolve(sessions_dir(args), args.id)
    with Session.open(r.path) as s:
        verify(r.path, r)
        s.set_name(args.name)
    if args.json:
        print_json({"id": r.id, "path": r.path, "name": args.name or None})
    else:
        short = _short(sessions_dir(args), r.id)
        print(f"renamed {short}: {args.name}" if args.name else f"cleared the name of {short}")
    return 0


# --- trash ------------------------------------------------------------------------------


def sessions_rm(args: argparse.Namespace) -> int:
    from ama.session.trash import trash_session

    res = trash_session(sessions_dir(args), args.id)
    if args.json:
        print_json(res)
    else:
        if not res["id"]:
            print(f"moved {res['path']} to the trash: {res['trashPath']}")
            return 0
        print(f"moved session {_short(sessions_dir(args), res['id'])} to the trash: {res['trashPath']}")
        print(f"undo with: ama sessions restore {_short(sessions_dir(args), res['id'], trash=True)}", file=sys.stderr)
    return 0


def sessions_restore(args: argparse.Namespace) -> int:
    from ama.session.trash import restore_session

    res = restore_session(sessions_dir(args), args.id)
    if args.json:
        print_json(res)
    else:
        print(f"restored session {_short(sessions_dir(args), res['id'])}: {res['path']}")
    return 0


def sessions_prune(args: argparse.Namespace) -> int:
    from ama.checkpoints import collect_garbage
    from ama.config.paths import data_dir
    from ama.session.trash import prune_trash

    age = parse_duration(args.older_than, option="--older-than")
    root = sessions_dir(args)
    res = prune_trash(root, older_than_s=age, dry_run=args.dry_run)
    # then the file-history backups no session file (trash included) refers to any more
    res["fileHistory"] = collect_garbage(data_dir(), [root], dry_run=args.dry_run)
    if args.json:
        print_json(res)
        return 0
    verb = "would delete" if args.dry_run else "deleted"
    for p in res["removed"]:
        print(f"{verb} {p}")
    print(f"{verb} {len(res['removed'])} trashed session(s), {res['bytes']} bytes; {res['kept']} newer kept")
    fh = res["fileHistory"]
    if fh["unreadable"]:
        for p in fh["unreadable"]:
            print(f"ama: cannot read session file {p}", file=sys.stderr)
        print(
            f"kept all {fh['kept']} backup blob(s): {len(fh['unreadable'])} session file(s) could not be read,"
            " and a backup they name cannot be told from an unused one"
        )
        return 0
    print(f"{verb} {fh['removed']} unreferenced backup blob(s), {fh['bytes']} bytes; {fh['kept']} kept")
    return 0
