"""``ama sessions export``: a session as Markdown, JSON or JSON lines, made safe to share.

* ``md``: a readable transcript (``markdown.py``);
* ``json``: ``{format: "ama.session-export", version: 1, session, branch, leafId,
  userMessages, usage, entries}`` with the entries as stored;
* ``jsonl``: the header and the chosen entries, the session file's own shapes, readable
  by ama again (no ``leaf`` lines).

Every string is cleaned (``redact.py``): secrets redacted, and unless ``keep_paths`` the
session's workspace replaced by ``<workspace>`` and the home directory by ``~``.  An item
over 64 KiB is cut with a marker and a whole export over 16 MiB fails instead of being
cut.  The session file is read once, from a stable snapshot (``session.fork.stable_read``:
stat, read, stat agree), so an append during the export cannot mix two states.
``write_new`` creates the output file exclusively with mode 0600 and never overwrites.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ama.errors import AmaError
from ama.export.common import check_total, choose, cut, usage_summary
from ama.export.redact import Cleaner, PathMask
from ama.session.fork import stable_read
from ama.session.history import user_messages
from ama.session.reader import parse_session
from ama.session.tree import SessionTree

FORMATS = ("md", "json", "jsonl")
BRANCHES = ("leaf", "all")


def _cut_strings(value: Any) -> Any:
    """Cut every string over the item limit (image data is kept: it is not text)."""
    if isinstance(value, str):
        return cut(value)
    if isinstance(value, list):
        return [_cut_strings(v) for v in value]
    if isinstance(value, dict):
        image = value.get("type") == "image"
        return {k: (v if image and k == "data" else _cut_strings(v)) for k, v in value.items()}
    return value


def _raw_entries(raws: list[bytes], idx: list[int], cl: Cleaner) -> list[dict]:
    return [_cut_strings(cl.json(json.loads(raws[i]))) for i in idx]


def export_session(
    path: str,
    fmt: str = "md",
    branch: str = "leaf",
    *,
    keep_paths: bool = False,
    home: str | None = None,
    open_: Any = open,
) -> bytes:
    """The export of the session file at ``path`` (raises ExportTooLarge over 16 MiB).

    ``keep_paths`` keeps the workspace and ``home`` (default: the user's) as they are;
    ``open_`` opens the file (the snapshot read takes it, for tests)."""
    from ama.export import markdown

    if fmt not in FORMATS:
        raise AmaError("invalid_arguments", f"--format: unknown format {fmt!r} (use {', '.join(FORMATS)})")
    if branch not in BRANCHES:
        raise AmaError("invalid_arguments", f"--branch: unknown value {branch!r} (use leaf or all)")
    raw = stable_read(path, open_=open_)
    data = parse_session(raw, path=path, keep_raw=True)
    if data.header is None:
        raise AmaError(
            "corrupt", f"{path} has no readable session header ({data.header_error}); nothing to export"
        )
    paths = (
        PathMask() if keep_paths else PathMask.for_session(data.header.cwd, home or os.path.expanduser("~"))
    )
    cl = Cleaner(paths)
    idx, leaf_id = choose(data, branch)
    chosen = [data.entries[i] for i in idx]
    tree = SessionTree(data.entries, data.leaf_id)
    users = user_messages(data.entries, set(tree.path_ids()))
    name = tree.name
    if fmt == "md":
        user_n = {u.entry_id: u.n for u in users}
        out = markdown.render(data, chosen, user_n, branch=branch, leaf_id=leaf_id, name=name, cl=cl).encode(
            "utf-8", "surrogatepass"
        )
        check_total(len(out))
        return out
    assert data.raws is not None
    entries = _raw_entries(data.raws, idx, cl)
    header = _cut_strings(cl.json(json.loads(raw.split(b"\n", 1)[0])))
    if fmt == "jsonl":
        lines = [json.dumps(header, ensure_ascii=False, separators=(",", ":"))]
        lines += [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in entries]
        out = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
        check_total(len(out))
        return out
    chosen_ids = {e.id for e in chosen}
    doc = {
        "format": "ama.session-export",
        "version": 1,
        "session": {
            "id": data.id,
            "cwd": cl(data.header.cwd),
            "created": data.header.timestamp,
            "version": data.header.version,
            "name": cl(name) if name else None,
            "parentSession": header.get("parentSession"),
        },
        "branch": branch,
        "leafId": leaf_id,
        "userMessages": [{**u.to_json(), "text": cut(cl(u.text))} for u in users if u.entry_id in chosen_ids],
        "usage": usage_summary(chosen),
        "entries": entries,
    }
    out = (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8", "surrogatepass")
    check_total(len(out))
    return out


def write_new(path: str, content: bytes) -> None:
    """Create ``path`` (never an existing file: exclusive create, mode 0600) holding
    ``content``; a partly written file is removed."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        raise AmaError(
            "exists", f"{path} already exists; ama never overwrites it: choose another --output"
        ) from None
    except OSError as e:
        raise AmaError("io_error", f"cannot create {path}: {e.strerror}") from None
    try:
        os.fchmod(fd, 0o600)
        view = memoryview(content)
        while view:
            n = os.write(fd, view)
            view = view[n:]
    except BaseException:
        os.close(fd)
        try:
            os.unlink(path)
        except OSError:
            pass
        raise
    os.close(fd)
