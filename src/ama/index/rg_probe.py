"""Pass 1 of a cold search by ripgrep, when it is installed: the files that may hold a hit.

CPython needs two passes over a file's bytes for the raw prefilter (lowercase, then find)
and a third for the escape check; ripgrep reads the same bytes once, on every core, at
close to the speed of the page cache.  It is asked a *wider* question than the prefilter
(:meth:`Pattern.may_match`), so that every file the prefilter lets through is among the
files ripgrep lists -- the prefilter then decides on those only, and a search gives the
same answer with ripgrep or without it.  A file is listed when it holds any of:

* the keyword, ignoring case: Unicode simple case folding, which folds every ASCII
  letter as ``bytes.lower`` does (and more: ``ſ``, the Kelvin sign);
* an escape that could spell a character of the keyword: the prefilter's own
  alternatives (``pattern.ASCII_ESCAPE``: ``\\u0020``-``\\u007f``, ``\\u0130``,
  ``\\u212a``, ``\\/``);
* ``İ`` or the Kelvin sign, for a keyword with ``i`` or ``k`` (their lower case is
  ASCII);
* ``"toolCall"``, for a keyword with a space (a tool call's text joins its name and
  arguments with one).

The header, which the prefilter skips, is searched too: that only widens the list.  Only
plain ASCII keywords the prefilter can rule files out for are asked (a regular
expression or a non-ASCII keyword is left to Python: ``str.lower`` and case folding
differ outside ASCII).

The scan starts ripgrep on the sessions directory once the first files it probed itself
hold no candidate (``search_scan.scan``), and goes on listing the directory meanwhile.
ripgrep walks what :func:`ama.session.layout.iter_session_files` walks, or more: names
ending in ``.jsonl`` (``-g``), no ignore files (``--no-ignore``), names starting with a
dot skipped (as the layout skips them), four levels deep (the layout's three below the
directory), symbolic links not followed -- so a path of the listing that is a link is
handed to the prefilter whatever ripgrep says.  It runs with ``--no-config`` (a user's
``RIPGREP_CONFIG_PATH`` could add ``--max-filesize`` or globs), ``-a`` (a NUL byte does
not end the search), ``-E none`` (no transcoding after a UTF-16 byte-order mark) and
``-l -0`` (each path once, a NUL after it).  A ripgrep that fails (exit 2: a file or
directory it could not read) or cannot start gives every file to the prefilter, as
if ripgrep were not installed.

``AMA_SCAN_RG=0`` never uses ripgrep; ``AMA_SCAN_RG=PATH`` uses that program.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence

from ama.index.pattern import ASCII_ESCAPE, Pattern

ARGS = ["--no-config", "--no-ignore", "-g", "*.jsonl", "--max-depth", "4", "-a", "-E", "none", "-l", "-0", "--no-messages"]


def find_rg() -> str | None:
    """The ripgrep to run: ``AMA_SCAN_RG`` when it names a program, else ``rg`` on PATH
    (absolute directories only), or None (``AMA_SCAN_RG=0``, or none found)."""
    want = os.environ.get("AMA_SCAN_RG", "")
    if want == "0":
        return None
    if want:
        return want if os.access(want, os.X_OK) else None
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if os.path.isabs(d):
            exe = os.path.join(d, "rg")
            if os.path.isfile(exe) and os.access(exe, os.X_OK):
                return exe
    return None


def regexes(pattern: Pattern) -> list[str] | None:
    """The ripgrep patterns whose union holds every file the prefilter lets through, or
    None when ripgrep is not to be asked for this pattern."""
    kw = pattern.keyword
    if kw is None or not pattern.prefilters or not pattern.ascii:
        return None
    literal = "".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):X}}}" for c in kw)
    out = [f"(?i:{literal})", ASCII_ESCAPE.pattern.decode("ascii")]
    if "i" in kw or "k" in kw:
        out.append("\\x{130}|\\x{212A}")
    if " " in kw:
        out.append('"toolCall"')
    return out


class Run:
    """A ripgrep at work on a sessions directory."""

    def __init__(self, pid: int, out: int) -> None:
        self.pid, self.out = pid, out
        self.done = False

    def listed(self, paths: Sequence[str], links: Collection[str] = ()) -> set[int] | None:
        """The positions in ``paths`` of the files that may hold a hit (a superset of the
        prefilter's: ripgrep's list, and the links), or None when ripgrep failed."""
        got = self._collect()
        if got is None:
            return None
        where = {p: i for i, p in enumerate(paths)}
        found = {where[p] for p in map(os.fsdecode, got.split(b"\0")) if p in where}
        if links:
            found.update(i for i, p in enumerate(paths) if p in links)
        return found

    def cancel(self) -> None:
        """Stop it (its answer is not needed)."""
        if not self.done:
            self._end(kill=True)

    def _collect(self) -> bytes | None:
        parts = []
        try:
            with open(self.out, "rb", buffering=0, closefd=False) as f:
                while chunk := f.read(1 << 16):
                    parts.append(chunk)
            code = self._end(kill=False)
        finally:
            if not self.done:  # interrupted: do not leave it running
                self._end(kill=True)
        return b"".join(parts) if code in (0, 1) else None

    def _end(self, *, kill: bool) -> int:
        """Close its output, kill it if asked, reap it: its exit code (-1 if unknown)."""
        if self.out >= 0:
            os.close(self.out)
            self.out = -1
        if kill:
            try:
                os.kill(self.pid, 9)
            except OSError:
                pass
        try:
            code = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        except OSError:
            code = -1
        self.done = True  # (not when interrupted: the caller's cleanup kills it)
        return code


def start(pattern: Pattern, root: str) -> Run | None:
    """A ripgrep listing the files under ``root`` that may hold a hit, or None when
    ripgrep is not used (not installed, turned off, or not for this pattern)."""
    rx = regexes(pattern)
    rg = find_rg() if rx is not None and hasattr(os, "posix_spawn") else None
    if rg is None or rx is None:
        return None
    argv = [rg, *ARGS]
    for one in rx:
        argv += ["-e", one]
    argv += ["--", root]
    r, w = os.pipe()
    try:
        pid = os.posix_spawn(
            rg,
            argv,
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, w, 1),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_CLOSE, r),
            ],
        )
    except OSError:  # not a program, or no processes left
        os.close(r)
        return None
    finally:
        os.close(w)
    return Run(pid, r)
