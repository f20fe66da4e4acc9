"""What a tool call sees: the ``ToolContext`` and the small protocols behind it.

The agent builds one ``ToolContext`` per call (``sandboxed`` is a per-call permission
decision); the long-lived parts (``read_files``, ``session``, ``bash_sandbox``) are shared
objects owned by the session.  Paths given by the model are resolved by ``resolve_path``:
``~`` expanded, relative to ``cwd``, made absolute (never confined to the workspace: the
permission layer decides what may be touched, tools only report absolute paths).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


class SessionHandle(Protocol):
    """The part of the session a tool may use (implemented by the session layer)."""

    def append_custom(self, custom_type: str, data: Any) -> str: ...

    def latest_custom(self, custom_type: str) -> Any | None: ...


class WrappedCommandLike(Protocol):
    @property
    def argv(self) -> list[str]: ...
    @property
    def env(self) -> dict[str, str]: ...
    @property
    def pass_fds(self) -> Sequence[int]: ...
    @property
    def sandboxed(self) -> bool: ...

    def close(self) -> None: ...


class BashSandboxLike(Protocol):
    """The OS sandbox as bash sees it (implemented by ``ama.sandbox.BashSandbox``)."""

    @property
    def active(self) -> bool: ...
    @property
    def description_suffix(self) -> str: ...

    def wrap(
        self, command: str, *, cwd: str, network: str | None = None, extra_writable: Sequence[str] = ()
    ) -> WrappedCommandLike: ...

    def hint(self, output: str, exit_code: int) -> str | None: ...


HASH_CHUNK = 1 << 20


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()


@dataclass
class ReadFiles:
    """The session's read-files set: real path -> (size, mtime_ns, sha256) when last read or written.

    ``edit`` and ``write`` of an existing file require ``check(path)`` to pass: the file was
    read (or written) in this session and is unchanged since.  Unchanged means same size and
    mtime, or, when those moved (``touch``, a restore, a formatter that wrote the same bytes),
    the same content hash.
    """

    entries: dict[str, tuple[int, int, str]] = field(default_factory=dict)

    @staticmethod
    def key(path: str) -> str:
        return os.path.realpath(path)

    def record(self, path: str, *, sha256: str | None = None, stat: os.stat_result | None = None) -> None:
        """Remember ``path`` as it is now.  Callers that already hold the content's hash and
        the ``stat`` taken before reading it pass them, which avoids reading the file twice."""
        key = self.key(path)
        st = stat if stat is not None else os.stat(key)
        digest = sha256 if sha256 is not None else file_sha256(key)
        self.entries[key] = (st.st_size, st.st_mtime_ns, digest)

    def check(self, path: str) -> str | None:
        """Why ``path`` may not be changed yet (error text for the model), or None."""
        key = self.key(path)
        known = self.entries.get(key)
        if known is None:
            return f"File has not been read yet: {path}. Read it first before writing to it."
        try:
            st = os.stat(key)
        except FileNotFoundError:
            return f"File was deleted since it was read: {path}."
        size, mtime_ns, digest = known
        if (st.st_size, st.st_mtime_ns) == (size, mtime_ns):
            return None
        if st.st_size == size and file_sha256(key) == digest:
            self.entries[key] = (size, st.st_mtime_ns, digest)
            return None
        return (
            f"File has been modified since it was read (by the user, a formatter or a command): {path}. "
            "Read it again before writing to it."
        )

    def forget(self, path: str) -> None:
        self.entries.pop(self.key(path), None)

    def paths(self) -> list[str]:
        return sorted(self.entries)


@dataclass
class ToolContext:
    cwd: str
    abort: asyncio.Event
    read_files: ReadFiles
    output_dir: str
    session: SessionHandle | None = None
    #: checkpoints: called with the absolute path before edit/write change a file
    before_write: Callable[[str], None] | None = None
    #: called after edit/write changed a file, with the bytes written
    after_write: Callable[[str, bytes], None] | None = None
    bash_sandbox: BashSandboxLike | None = None
    #: agent events, e.g. {"type": "background_job", ...}
    emit: Callable[[dict], None] | None = None
    #: per call: the permission decision said this bash call runs in the sandbox
    sandboxed: bool = False
    env: dict[str, str] | None = None


def resolve_path(cwd: str, path: str) -> str:
    """The absolute, normalized form of a path the model gave (``~`` expanded, relative to cwd)."""
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def display_path(path: str, cwd: str) -> str:
    """``path`` relative to ``cwd`` when it lies inside it, else absolute (for listings)."""
    rel = os.path.relpath(path, cwd)
    return path if rel == ".." or rel.startswith(".." + os.sep) else rel
