"""``ama sessions search`` without the index: the hits by reading the session files.

Three passes, each over what the one before let through:

1. **Which files may hold a hit**: every file, on every core worth using
   (``index/fanout.py``), its raw bytes against the keyword (:meth:`Pattern.may_match`:
   a few ``memchr`` tests, one lowercasing and one ``find``, the check for escapes that
   could hide a match).  Nothing beyond the standard library is needed for it: a keyword
   found nowhere answers without loading msgspec or the session reader.  A worker sends
   back file numbers.  A sample is probed here first (the first files listed, or a
   workspace's own directory); when it holds no candidate and ripgrep is installed, only
   the files ripgrep lists are probed (``index/rg_probe.py``: a superset of the answer).
2. **Their order**: newest first, by the timestamp of the last message line (then
   workspace, session id and path), read from the candidate files only.  When a regular
   expression makes every file a candidate, or the first files this process probes show
   the keyword to be common, pass 1 computes the order in the same read.
3. **Their hits**, newest first: the first files in this process, until they give
   ``limit + 1`` hits or ``SEQUENTIAL_BYTES`` are read; the rest over the cores, each
   worker taking the next files in order and stopping at ``limit + 1`` hits of its own.

The answer does not depend on how the work was split: the order is decided before pass 3,
and pass 3 keeps hits in that order.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from ama.index import fanout
from ama.session.layout import encode_cwd, iter_session_files

if TYPE_CHECKING:
    from ama.index import rg_probe
    from ama.index.pattern import Pattern
    from ama.index.search import Hit, SearchQuery

SAMPLE_BYTES = 1 << 20  # probed here before forking, to tell a common keyword
SAMPLE_FILES = 256  # (at most so many files: those of other workspaces are not counted above)
SEQUENTIAL_BYTES = 2 << 20  # pass 3 reads this much newest-first before going parallel
BIG = 32 << 20  # a larger file is probed a chunk at a time
CHUNK = 8 << 20
SCOPE_BYTES = 4096  # with a workspace, a bigger file's scope is read from this much first
HEAD = TAIL = 64 * 1024  # the order key of a big file: its first and last bytes, if enough

#: what pass 1 gives per candidate file: its order key (``(-last_ms, cwd, session_id)``),
#: or None when it is still to be read (pass 2)
Found = list[tuple[int, Any]]


def _preload() -> None:
    """Load the decoder (msgspec, the session reader) here, before forking: once, not once
    per worker."""
    from ama.index import msgspec_light  # noqa: F401  (first: see its docstring)

    # isort: split
    import ama.index.extract  # noqa: F401


def _budget() -> int:
    v = os.environ.get("AMA_SCAN_SEQUENTIAL_BYTES", "")
    return int(v) if v.isdigit() else SEQUENTIAL_BYTES


# --- reading --------------------------------------------------------------------------------


def _open(path: str) -> tuple[int, int] | None:
    """``(fd, size)`` of a regular file, or None (without waiting on a FIFO)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        return None
    if (st.st_mode & 0o170000) != 0o100000:
        os.close(fd)
        return None
    return fd, st.st_size


def _read(path: str) -> bytes | None:
    """The whole file, or None when it cannot be read."""
    opened = _open(path)
    if opened is None:
        return None
    fd, size = opened
    try:
        return fanout.read_whole(fd, size)
    except OSError:
        return None
    finally:
        os.close(fd)


def _header_end(data: Any) -> int:
    """Where the lines after the header start (the first line that is not blank, as
    ``extract.start`` reads it), or -1 when no header line is complete (no hits then)."""
    pos, n = 0, len(data)
    while pos < n:
        e = data.find(b"\n", pos)
        if e < 0:
            return -1
        if data[pos:e].strip():
            return e + 1
        pos = e + 1
    return -1


# --- pass 1: which files may hold a hit --------------------------------------------------------


class _Probe:
    """What pass 1 asks of each file (plain data: it is used in forked workers too)."""

    def __init__(self, q: SearchQuery, *, keyed: bool, raw_first: bool, big: int = BIG, chunk: int = CHUNK) -> None:
        self.pattern: Pattern = q.pattern
        self.big, self.chunk = big, chunk  # a file above ``big`` bytes is read ``chunk`` at a time
        self.project = q.project
        self.keyed = keyed  # give the order key of a candidate (msgspec is loaded)
        self.read = 0  # bytes of the files it read past their first bytes
        self.raw_first = raw_first
        #: the workspace as its header spells it when it holds no escape: a header line
        #: without a backslash and without this is another workspace's
        self.cwd_json: bytes | None = None
        if q.project is not None:
            try:
                self.cwd_json = b'"' + q.project.encode() + b'"'
            except UnicodeEncodeError:
                self.cwd_json = None

    def file(self, path: str) -> tuple[bool, Any]:
        """``(candidate, order key or None)`` of one file."""
        opened = _open(path)
        if opened is None:
            return False, None
        fd, size = opened
        try:
            if self.cwd_json is not None and size > SCOPE_BYTES and not self._head_in_scope(fd):
                return False, None  # another workspace's: told by its first bytes
            self.read += size
            if size > self.big:
                return self._big(fd, size)
            return self.data(fanout.read_whole(fd, size))
        except OSError:
            return False, None
        finally:
            os.close(fd)

    def data(self, data: bytes) -> tuple[bool, Any]:
        pos = _header_end(data)
        if pos < 0 or not self._in_scope(data, pos):
            return False, None
        if not self.pattern.may_match(data, pos, raw_first=self.raw_first):
            return False, None
        if not self.keyed:
            return True, None
        key = _key(data, self.project)
        return key is not None, key

    def _head_in_scope(self, fd: int) -> bool:
        """False when the file's first bytes hold its whole header and it is out of scope
        (the offset stays at 0)."""
        head = os.pread(fd, SCOPE_BYTES, 0)
        pos = _header_end(head)
        return pos < 0 or self._in_scope(head, pos)

    def _in_scope(self, data: Any, pos: int) -> bool:
        if self.project is None or self.cwd_json is None:
            return True
        head = data[:pos]
        return b"\\" in head or self.cwd_json in head

    def _big(self, fd: int, size: int) -> tuple[bool, Any]:
        """A big file a chunk at a time: chunks overlap by more than any match spans, so
        that one of them holds each match whole."""
        overlap = 64 + 4 * len(self.pattern.raw_bytes)
        step = max(self.chunk, 2 * overlap)
        chunk = os.pread(fd, step, 0)
        start = _header_end(chunk)
        if start < 0:  # no header, or one longer than a chunk: pass 2 decides
            return len(chunk) < size, None
        if not self._in_scope(chunk, start):
            return False, None
        at = 0
        while not self.pattern.may_match(chunk, start, raw_first=self.raw_first):
            end = at + len(chunk)
            if end >= size or len(chunk) <= overlap:
                return False, None
            at, start = end - overlap, 0
            chunk = os.pread(fd, step, at)
        return True, None


def _probe_all(probe: _Probe, paths: Sequence[str], idxs: Sequence[int]) -> Found:
    out: Found = []
    for i in idxs:
        maybe, key = probe.file(paths[i])
        if maybe:
            out.append((i, key))
    return out


# --- pass 2: the order ----------------------------------------------------------------------


def _key(data: Any, project: str | None) -> tuple | None:
    """``(-last_ms, cwd, session_id)`` of a file's bytes (None: not a session in scope)."""
    from ama.index.extract import FileState, last_message_ms, start

    state, pos = start(data)
    if not isinstance(state, FileState) or (project is not None and state.cwd != project):
        return None
    ms = last_message_ms(data, pos, len(data))
    return (-(ms or state.last_ms), state.cwd, state.session_id)


def _key_of(path: str, project: str | None) -> tuple | None:
    """The order key of a file, from its first and last bytes when the file is big."""
    opened = _open(path)
    if opened is None:
        return None
    fd, size = opened
    try:
        if size <= BIG:
            return _key(fanout.read_whole(fd, size), project)
        from ama.index.extract import FileState, last_message_ms, start

        state, pos = start(os.pread(fd, HEAD, 0))
        if not isinstance(state, FileState):
            return _key(fanout.read_whole(fd, size), project)  # a header beyond the first bytes
        if project is not None and state.cwd != project:
            return None
        tail = os.pread(fd, TAIL, size - TAIL)
        ms = last_message_ms(tail, tail.find(b"\n") + 1, len(tail))
        if not ms:
            whole = fanout.read_whole(fd, size)  # (pread leaves the offset at 0)
            ms = last_message_ms(whole, pos, len(whole))
        return (-(ms or state.last_ms), state.cwd, state.session_id)
    except OSError:
        return None
    finally:
        os.close(fd)


def _keys(paths: Sequence[str], idxs: list[int], sizes: Sequence[int], project: str | None) -> list:
    """The order keys of ``paths[i] for i in idxs``, over the cores when they are many."""
    _preload()
    return [
        key
        for part in _parallel(lambda g: [_key_of(paths[idxs[r]], project) for r in g], [sizes[i] for i in idxs])
        for key in part
    ]


# --- pass 3: the hits -------------------------------------------------------------------------


def _file_hits(path: str, data: bytes, q: SearchQuery, hits: list[Hit]) -> None:
    """Append the hits of one file (stopping once there are more than ``q.limit``)."""
    from ama.index.extract import FileState, extract, start
    from ama.index.search import _FileView, _hit, _ident_of

    state, pos = start(data)
    if not isinstance(state, FileState):
        return
    cand = q.pattern.candidate_lines(data, pos)
    if cand is not None and not cand:
        return
    chunk = extract(data, pos, state, facts=False, runs=False, doc_lines=cand)
    view = _FileView(
        path,
        state.session_id,
        state.cwd,
        state.version,
        chunk.parents,
        chunk.offs,
        chunk.lens,
        chunk.users,
        state.leaf,
    )
    for k, part, role, text in chunk.docs:
        o, n = chunk.offs[k - 1], chunk.lens[k - 1]
        h = _hit(view, k, part, role, text, q, partial(_ident_of, data[o : o + n]))
        if h is not None:
            hits.append(h)
            if len(hits) > q.limit:
                return


_FIELDS = ("session_id", "path", "cwd", "k", "part", "n", "entry_id", "timestamp", "role", "text", "span", "on_branch")


def _hits_of(paths: Sequence[str], q: SearchQuery, group: list[int]) -> list[tuple]:
    """The hits of ``paths[i] for i in group`` in order, at most ``limit + 1``, as plain
    tuples (they may come from a forked worker)."""
    hits: list[Hit] = []
    for i in group:
        path = paths[i]
        data = _read(path)
        if data is not None:
            _file_hits(path, data, q, hits)
        if len(hits) > q.limit:
            break
    return [tuple(getattr(h, f) for f in _FIELDS) for h in hits]


def _hit_of(t: Sequence[Any]) -> Hit:
    from ama.index.search import Hit

    kw = dict(zip(_FIELDS, t, strict=True))
    kw["span"] = tuple(kw["span"])
    return Hit(**kw)


# --- the scan ---------------------------------------------------------------------------------


def _parallel(work: Callable[[list[int]], Any], weights: Sequence[int]) -> list:
    """``work`` over ``range(len(weights))`` split in groups of about equal weight, in order."""
    return fanout.run(work, fanout.split(weights, weights, fanout.workers_for(sum(weights))))


def scan(root: str, q: SearchQuery) -> list[Hit]:
    """Hits by reading the files under ``root``: at most ``limit + 1``, so that callers
    can tell there are more; the same hits in the same order as the index gives."""
    root = os.path.abspath(root)
    links: set[str] = set()
    walk = iter_session_files(root, links=links)
    keyed = not q.pattern.prefilters  # every file is a candidate: read its order at once
    if keyed:
        _preload()
    # pass 1, a sample here: the first files listed, or with a workspace the files of its
    # directory (a name is only a hint: every file is probed, but these first).  When one
    # is a candidate, the keyword may be common.
    probe = _Probe(q, keyed=keyed, raw_first=False)
    head: list[str] = []  # the walk's first paths, when the sample took them
    sample = walk if q.project is None else iter_session_files(os.path.join(root, encode_cwd(q.project)), max_depth=0)
    sampled: dict[str, bool] = {}
    budget = min(SAMPLE_BYTES, _budget())
    while not keyed and probe.read < budget and len(sampled) < SAMPLE_FILES and (path := next(sample, None)):
        if sample is walk:
            head.append(path)
        sampled[path] = maybe = probe.file(path)[0]
        if maybe:
            keyed = True
            _preload()
    # a rare keyword: ripgrep, when installed, reads the rest while they are listed
    rg = None
    if not keyed:
        from ama.index import rg_probe

        rg = rg_probe.start(q.pattern, root)
    try:
        return _scan(head + list(walk), links, q, sampled, keyed, rg)
    finally:
        if rg is not None:
            rg.cancel()


def _scan(
    paths: list[str], links: set[str], q: SearchQuery, sampled: dict[str, bool], keyed: bool, rg: rg_probe.Run | None
) -> list[Hit]:
    if not paths:
        return []
    probe = _Probe(q, keyed=keyed, raw_first=keyed)
    found: Found = [(j, None) for j, p in enumerate(paths) if sampled.get(p)]
    rest = [j for j, p in enumerate(paths) if p not in sampled]
    if not keyed and rest and rg is not None:
        listed = rg.listed(paths, links)
        if listed is not None:
            rest = [j for j in rest if j in listed]
    # the sizes (the weights of the work split over the cores) of the files read from here
    sizes = [0] * len(paths)
    need = rest + [j for j, _key in found]
    for j, size in zip(need, fanout.file_sizes([paths[j] for j in need]), strict=True):
        sizes[j] = size
    for part in _parallel(lambda g: _probe_all(probe, paths, [rest[r] for r in g]), [sizes[j] for j in rest]):
        found.extend((j, key) for j, key in part)
    if not found:
        return []
    # pass 2: the order of the candidates whose order pass 1 did not read
    todo = [j for j, key in found if key is None]
    if todo:
        keys = dict(zip(todo, _keys(paths, todo, sizes, q.project), strict=True))
        found = [(j, key if key is not None else keys[j]) for j, key in found]
    order = [j for _key, j in sorted((tuple(key) + (paths[j],), j) for j, key in found if key is not None)]
    # pass 3: newest first, here, then over the cores
    hits: list[Hit] = []
    done, budget, n = 0, _budget(), 0
    while n < len(order) and len(hits) <= q.limit and done < budget:
        path = paths[order[n]]
        data = _read(path)
        n += 1
        if data is not None:
            done += len(data)
            _file_hits(path, data, q, hits)
    if len(hits) <= q.limit and n < len(order):
        later = order[n:]
        work = partial(_hits_of, [paths[j] for j in later], q)
        for part in _parallel(work, [sizes[j] for j in later]):
            hits.extend(_hit_of(t) for t in part)
            if len(hits) > q.limit:
                break
    return hits[: q.limit + 1]
