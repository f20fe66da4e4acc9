"""``ama doctor``: check ama's setup, one section at a time; ``--reindex`` rebuilds the
session index from the session files.

Each section is a function ``section_<name>(args) -> dict`` with ``title``, ``ok`` and
``lines`` (and data for ``--json``), listed in ``_checks()`` (the index here, the others in
``doctor_checks.py``); add a section by adding a function.  Imports stay light (no HTTP client, no terminal toolkit).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

from ama.cli.util import add_session_dir, human_size, print_json, sessions_dir
from ama.index.helpfmt import Formatter


def build_parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Check ama's setup and report problems, section by section. "
        "Exits 1 when any section reports a problem ([PROBLEM]), else 0.",
        epilog="Sections: " + ", ".join(SECTION_NAMES) + ".",
        formatter_class=Formatter,
    )
    p.add_argument(
        "--reindex",
        action="store_true",
        help="rebuild the session index (<data dir>/index.db) from the session files first",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object {sections: {...}}")
    add_session_dir(p)
    p.set_defaults(func=doctor)
    return p


def reindex(root: str) -> dict:
    """Drop every index row and read the session files of ``root`` again."""
    from ama.index import db as D
    from ama.index.indexer import refresh

    t0 = time.monotonic()
    try:
        conn = D.connect()
    except D.IndexUnavailable:
        D.remove()  # a damaged database: start from nothing
        conn = D.connect()
    try:
        try:
            info = refresh(conn, root, progress=sys.stderr.isatty(), force=True)
        except D.IndexUnavailable:
            conn.close()
            D.remove()
            conn = D.connect()
            info = refresh(conn, root, progress=sys.stderr.isatty(), force=True)
    finally:
        conn.close()
    return {"files": info.scanned, "seconds": round(time.monotonic() - t0, 2)}


def section_index(args: argparse.Namespace) -> dict:
    """The session index: where it is, its size, and whether it matches the files."""
    from ama.index import db as D
    from ama.index.indexer import changes, disk_files, meta
    from ama.index.rows import INDEX_FORMAT
    from ama.index.timeutil import tz_key

    root = os.path.abspath(sessions_dir(args))
    path = D.path()
    out: dict = {"title": "Session index", "ok": True, "lines": [], "path": path, "sessionsDir": root}
    if getattr(args, "reindexed", None):
        r = args.reindexed
        out["reindexed"] = r
        out["lines"].append(f"rebuilt from {r['files']} session file(s) in {r['seconds']}s")
    if not os.path.exists(path):
        out["lines"].append(f"{path}: not built yet (built on first use, or with ama doctor --reindex)")
        out["exists"] = False
        return out
    out["exists"] = True
    size = sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s))
    out["bytes"] = size
    try:
        conn = D.connect()
    except D.IndexUnavailable as e:
        out.update(ok=False, error=e.message)
        out["lines"].append(f"{path}: {e.message}")
        return out
    try:
        disk = disk_files(root)
        rid, changed, removed, tz_changed = changes(conn, root, disk)
        (schema,) = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
        files = docs = invalid = 0
        if rid is not None:
            files, docs, invalid = conn.execute(
                "SELECT count(*), coalesce(sum(ndocs), 0), coalesce(sum(valid = 0), 0) FROM files WHERE root_id = ?",
                (rid,),
            ).fetchone()
        (runs,) = conn.execute("SELECT count(*) FROM runs").fetchone()
        dead = int(meta(conn, "fts_dead") or 0)
        (roots,) = conn.execute("SELECT count(*) FROM roots").fetchone()
        stale = len(changed) + len(removed) if rid is not None else len(disk)
        out.update(
            schema=schema,
            roots=roots,
            files=files,
            documents=docs,
            deadDocuments=dead,
            invalidFiles=invalid,
            runs=runs,
            staleFiles=stale,
            timezoneChanged=tz_changed,
        )
        out["lines"].append(
            f"{path}: {human_size(size)}, schema {schema}, {roots} sessions director{'y' if roots == 1 else 'ies'}"
        )
        out["lines"].append(
            f"{root}: {files} file(s) indexed, {docs} searchable document(s), {runs} run(s) in all"
        )
        if invalid:
            out["lines"].append(
                f"{invalid} file(s) with a damaged header (listed by ama sessions list --all)"
            )
        if stale or tz_changed:
            if not tz_changed:
                why = f"{stale} file(s) changed since they were indexed"
            elif meta(conn, "tz") != tz_key():
                why = "the time zone changed"
            else:
                why = f"it has index format {meta(conn, 'format')}, this ama writes {INDEX_FORMAT}"
            out["lines"].append(f"not current: {why}; it is brought up to date on next use")
        else:
            out["lines"].append("current: matches the session files")
    finally:
        conn.close()
    return out


def _checks() -> list[tuple[str, Callable[[argparse.Namespace], dict]]]:
    from ama.cli import doctor_checks as c

    return [
        ("python", c.section_python),
        ("config", c.section_config),
        ("providers", c.section_providers),
        ("data", c.section_data),
        ("index", section_index),
        ("tools", c.section_tools),
        ("sandbox", c.section_sandbox),
    ]


SECTION_NAMES = ("python", "config", "providers", "data", "index", "tools", "sandbox")


def doctor(args: argparse.Namespace) -> int:
    if args.reindex:
        args.reindexed = reindex(os.path.abspath(sessions_dir(args)))
    results = {name: fn(args) for name, fn in _checks()}
    ok = all(r.get("ok", True) for r in results.values())
    if args.json:
        print_json({"sections": results, "ok": ok})
        return 0 if ok else 1
    for r in results.values():
        mark = "ok" if r.get("ok", True) else "PROBLEM"
        print(f"{r['title']} [{mark}]")
        for line in r["lines"]:
            print(f"  {line}")
    return 0 if ok else 1
