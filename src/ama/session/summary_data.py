"""The catalog's row of one session file, :class:`SessionSummary` (what ``ama sessions list``
prints), without the code that computes it (``summary.py``): readers of the index load this
light module only -- not the JSON decoder, not the session reader, and not ``dataclasses``
(which imports ``inspect``: ~8 ms, more than the rest of an indexed ``sessions list``'s
imports), so the class is written out by hand with what ``@dataclass`` would generate."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:
    from typing import Any


class SessionSummary:
    """One session file as the catalog lists it (``summary.summarize_bytes`` computes it)."""

    #: the fields, in order: the constructor's parameters, ``to_json``'s keys, what the
    #: index stores (``vars()`` as JSON, checked against this list when read back)
    FIELDS = (
        "path",
        "id",
        "cwd",
        "version",
        "created",  # header timestamp (ISO)
        "name",
        "parent_session",  # header parentSession or the task's parentSession
        "first_message",  # preview of the first user message
        "last_message_time",  # ISO timestamp of the last message entry (header's if none)
        "last_message_ms",
        "first_message_time",
        "message_count",
        "user_message_count",
        "entry_count",
        "archived_own",  # the session's own archive flag (latest ama.archive entry)
        "subagent",  # a `task` sub-agent session
        "damaged",  # damaged lines (incl. a partial tail)
        "header_error",
        "size",
        "mtime_ns",
        "archived",  # filled by the catalog from the lineage
        "unreadable",  # why the file could not be read at all (``Is a directory``...), else None
        # seed 002's catalog metadata, from ama.session.meta.derive (the scan and the index alike)
        "error_count",
        "pending_interaction",
        "task_status",
    )
    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __init__(
        self,
        path: str,
        id: str,
        cwd: str,
        version: int,
        created: str,
        name: str | None,
        parent_session: str | None,
        first_message: str,
        last_message_time: str,
        last_message_ms: int,
        first_message_time: str,
        message_count: int,
        user_message_count: int,
        entry_count: int,
        archived_own: bool,
        subagent: bool,
        damaged: int,
        header_error: str | None,
        size: int,
        mtime_ns: int,
        archived: bool = False,
        unreadable: str | None = None,
        error_count: int = 0,
        pending_interaction: str | None = None,
        task_status: str = "completed",
    ) -> None:
        self.path = path
        self.id = id
        self.cwd = cwd
        self.version = version
        self.created = created
        self.name = name
        self.parent_session = parent_session
        self.first_message = first_message
        self.last_message_time = last_message_time
        self.last_message_ms = last_message_ms
        self.first_message_time = first_message_time
        self.message_count = message_count
        self.user_message_count = user_message_count
        self.entry_count = entry_count
        self.archived_own = archived_own
        self.subagent = subagent
        self.damaged = damaged
        self.header_error = header_error
        self.size = size
        self.mtime_ns = mtime_ns
        self.archived = archived
        self.unreadable = unreadable
        self.error_count = error_count
        self.pending_interaction = pending_interaction
        self.task_status = task_status

    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in self.FIELDS)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.FIELDS)
        return f"{self.__class__.__qualname__}({inner})"

    @property
    def problem(self) -> str | None:
        """What makes this session unlistable as a normal row: an unreadable file or a
        damaged header line (damaged lines further down do not count here)."""
        if self.unreadable is not None:
            return f"unreadable: {self.unreadable}"
        if self.header_error is not None:
            return f"damaged header: {self.header_error}"
        return None

    def to_json(self) -> dict[str, Any]:
        return {_camel(f): getattr(self, f) for f in self.FIELDS}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)
