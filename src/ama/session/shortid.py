"""Short ids, abbreviated the way git abbreviates commits.

pi's session ids (UUIDv7) are time-ordered: sessions started in the same minute share their
first eight characters, so a fixed-width cut prints the same short id for all of them and
the catalog then refuses it as ambiguous.  :func:`abbreviate` gives each id the shortest
prefix of at least ``MIN_SHOWN`` characters that no other known id starts with; every
place that prints a session or run id uses it.
"""

from __future__ import annotations

import os
from bisect import bisect_left
from collections.abc import Iterable

from ama.session.layout import iter_session_files, name_id

MIN_SHOWN = 8


def common_prefix(a: str, b: str) -> int:
    """The length of the common prefix of ``a`` and ``b``."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def abbreviate(ids: Iterable[str], *, among: Iterable[str] = (), min_len: int = MIN_SHOWN) -> dict[str, str]:
    """``id -> prefix`` for each of ``ids``: the shortest prefix of at least ``min_len``
    characters that no other id of ``ids`` or ``among`` starts with (case-insensitively,
    as ids are resolved).  An id that is a prefix of another one is shown whole."""
    wanted = [i for i in ids if i]
    known = sorted({i.lower() for i in (*wanted, *among) if i})
    out: dict[str, str] = {}
    for i in wanted:  # only the wanted ids' neighbours in sorted order (a page among 10,000)
        k = i.lower()
        n = bisect_left(known, k)
        left = common_prefix(k, known[n - 1]) if n else 0
        right = common_prefix(k, known[n + 1]) if n + 1 < len(known) else 0
        out[i] = i[: max(min_len, max(left, right) + 1)]
    return out


def known_session_ids(sessions_dir: str | os.PathLike[str], *, trash: bool = False) -> set[str]:
    """The ids the file names of a sessions directory carry (a directory walk, no file is
    opened): what a printed prefix has to stay unique against.  Names are only a hint,
    so callers add the header ids they know."""
    return {i for i in (name_id(p) for p in iter_session_files(os.fspath(sessions_dir), trash=trash)) if i}


def short_session_ids(
    sessions_dir: str | os.PathLike[str], ids: Iterable[str], *, trash: bool = False
) -> dict[str, str]:
    """:func:`abbreviate` ``ids`` against every session of ``sessions_dir`` (or its trash)."""
    return abbreviate(list(ids), among=known_session_ids(sessions_dir, trash=trash))


def short_session_id(sessions_dir: str | os.PathLike[str], sid: str, *, trash: bool = False) -> str:
    return short_session_ids(sessions_dir, [sid], trash=trash).get(sid, sid)
