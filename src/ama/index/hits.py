"""Search from an interface's arguments: role names, ``--since`` dates, and hits from the
index with the scan as the fallback.  ``ama sessions search`` and RPC ``search`` share it."""

from __future__ import annotations

from ama.errors import InvalidArguments

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:
    from typing import Any

ROLES = {"user": 0, "assistant": 1, "tool": 2}


def parse_roles(text: str | None) -> set[int] | None:
    """``user,tool`` -> the role numbers of search hits; None (every role) when empty."""
    if not text:
        return None
    out = set()
    for r in text.split(","):
        r = r.strip().lower()
        if r not in ROLES:
            raise InvalidArguments(f"--role: unknown role {r!r} (use user, assistant, tool)")
        out.add(ROLES[r])
    return out


def since_ms(text: str | None) -> int | None:
    """``today``, ``7d``, ``2024-05-01``, ... -> local midnight of that day in epoch ms."""
    if not text:
        return None
    import time

    from ama.index.timeutil import parse_day

    d = parse_day(text, option="--since")
    return int(time.mktime(d.timetuple())) * 1000


def find_hits(root: str, q: Any, *, no_cache: bool, paths: list[str] | None = None) -> list:
    """The hits of ``q`` (a ``SearchQuery``) in the sessions under ``root``; ``paths``, when
    given, receives the session files the index refresh listed (empty for a scan)."""
    from ama.index import search as S

    if not no_cache:
        from ama.index.access import with_index

        def indexed(db: Any, info: Any) -> Any:
            hits = S.from_index(db, info.root_id, q)
            if paths is not None and hits:  # (no hits: no ids to abbreviate, no list to make)
                paths[:] = info.paths
            return hits

        res = with_index(root, indexed)
        if res is not None and res[0] is not None:
            return res[0]
    if paths is not None:
        paths.clear()
    return S.scan(root, q)


def search_page(root: str, q: Any, *, no_cache: bool) -> tuple[list, bool]:
    """The first ``q.limit`` hits, their session ids abbreviated git-like among the sessions
    of ``root``, and whether there were more: what every interface prints."""
    from ama.index import search as S

    listed: list[str] = []
    hits = find_hits(root, q, no_cache=no_cache, paths=listed)
    page = hits[: q.limit]
    S.abbreviate_hits(page, root, listed or None)
    return page, len(hits) > q.limit
