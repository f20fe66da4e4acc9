"""Listing the files under a directory, by ripgrep or by a Python walk that agrees with it.

Both give files only (no symlinks), depth first with each directory's entries sorted by
name (``rg --sort path``), hidden names and ignore-file matches left out, ``-g`` globs
applied (see ``_ignore.py``).  Searches run on a worker thread; ``run_cancellable`` stops
them (and kills a running ``rg``) when the call is aborted.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

from ama.tools._ignore import DirRules, Overrides, ancestors_rules, ignored_by_files
from ama.tools.base import ToolError

T = TypeVar("T")
RG_BASE = ["--no-config", "--no-require-git", "--sort", "path", "--no-messages"]


def find_rg() -> str | None:
    return shutil.which("rg")


class Cancelled(Exception):
    pass


class Cancel:
    """Set when the call is aborted; kills the processes registered with it."""

    def __init__(self) -> None:
        self._set = False
        self._lock = threading.Lock()
        self._procs: list[subprocess.Popen] = []

    def check(self) -> None:
        if self._set:
            raise Cancelled

    def cancel(self) -> None:
        with self._lock:
            self._set = True
            procs = list(self._procs)
        for p in procs:
            if p.poll() is None:
                p.kill()

    def popen(self, argv: list[str], *, cwd: str) -> subprocess.Popen:
        with self._lock:
            if self._set:
                raise Cancelled
            proc = subprocess.Popen(
                argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            self._procs.append(proc)
            return proc


async def run_cancellable(fn: Callable[[Cancel], T], abort: asyncio.Event) -> T:
    """Run ``fn(cancel)`` on a worker thread; on ``abort`` cancel it and raise ``ToolError``."""
    cancel = Cancel()
    work = asyncio.ensure_future(asyncio.to_thread(fn, cancel))
    abort_wait = asyncio.ensure_future(abort.wait())
    try:
        await asyncio.wait({work, abort_wait}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        abort_wait.cancel()
        if not work.done():
            cancel.cancel()
    try:
        return await work
    except Cancelled:
        raise ToolError("Aborted.") from None


def walk_files(root: str, globs: list[str], cancel: Cancel, *, hidden: bool = False) -> Iterator[str]:
    """Absolute paths of the files under ``root`` that ``rg --files`` would list, in its order
    (``hidden``: as with ``--hidden``, hidden names are not skipped)."""
    overrides = Overrides(globs)

    def take(path: str, rel: str, name: str, is_dir: bool, stack: list[DirRules]) -> bool:
        decided = overrides.decide(rel, is_dir)
        if decided is not None:
            return decided
        ignored = ignored_by_files(stack, path, is_dir)
        if ignored is not None:
            return not ignored
        return hidden or not name.startswith(".")

    def visit(dir_path: str, rel_dir: str, stack: list[DirRules]) -> Iterator[str]:
        stack = [DirRules.load(dir_path), *stack]
        try:
            with os.scandir(dir_path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        for e in entries:
            cancel.check()
            try:
                is_dir = e.is_dir(follow_symlinks=False)
                is_file = not is_dir and e.is_file(follow_symlinks=False)
            except OSError:
                continue
            if not (is_dir or is_file):
                continue
            rel = f"{rel_dir}{e.name}"
            if not take(e.path, rel, e.name, is_dir, stack):
                continue
            if is_dir:
                yield from visit(e.path, rel + "/", stack)
            else:
                yield e.path

    yield from visit(root, "", ancestors_rules(root))


def rg_lines(rg: str, args: list[str], root: str, cancel: Cancel, sep: bytes = b"\n") -> Iterator[bytes]:
    """Run ``rg`` with ``args`` in ``root``; yield its output records.  Stops (killing rg)
    when the consumer stops; raises ``ToolError`` with rg's message when rg fails."""
    proc = cancel.popen([rg, *RG_BASE, *args], cwd=root)
    assert proc.stdout is not None and proc.stderr is not None
    completed = False
    try:
        pending = b""
        fd = proc.stdout.fileno()
        while chunk := os.read(fd, 1 << 16):
            cancel.check()
            parts = (pending + chunk).split(sep)
            pending = parts.pop()
            yield from parts
        if pending:
            yield pending
        completed = True
    finally:
        if not completed and proc.poll() is None:
            proc.kill()
        err = proc.stderr.read().decode("utf-8", "replace").strip()
        proc.stdout.close()
        proc.stderr.close()
        rc = proc.wait()
    cancel.check()
    if rc == 2 and err:
        raise ToolError(f"ripgrep failed: {err}")


def rg_relative(line: bytes) -> str:
    text = os.fsdecode(line)
    return text[2:] if text.startswith("./") else text


def list_files(
    root: str, globs: list[str], cancel: Cancel, *, use_rg: bool, hidden: bool = False
) -> Iterator[str]:
    """Files under ``root`` (absolute paths), by rg when allowed and installed, else by walking."""
    rg = find_rg() if use_rg else None
    if rg is None:
        yield from walk_files(root, globs, cancel, hidden=hidden)
        return
    args = ["--files", "--null", *(["--hidden"] if hidden else [])]
    for g in globs:
        args += ["-g", g]
    for line in rg_lines(rg, [*args, "."], root, cancel, sep=b"\0"):
        yield os.path.join(root, rg_relative(line))
