"""``Session``: one conversation, in a file (with its lease) or in memory, same API.

    s = Session.create(cwd, sessions_dir)      # a new session; the file appears on first append
    s = Session.open(path)                     # resume: takes the lease (Busy if held)
    s = Session.load(path)                     # read-only snapshot, no lease
    s = Session.in_memory(cwd)                 # --no-session

Appends give each entry an 8-hex id, the current leaf as ``parentId`` and a timestamp, write
it as one line, and make it the leaf.  ``navigate`` moves the leaf with an ``ama.leaf``
custom entry whose ``parentId`` is the new leaf.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ama.errors import AmaError, NotFound
from ama.messages import UNSET, StoredMessage, Usage, UserContent
from ama.session.entries import (
    CURRENT_VERSION,
    LEAF_MARK,
    RELATION_TYPES,
    AnyEntry,
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    UnknownEntry,
    UsageEntry,
    encode_line,
    new_entry_id,
    now_iso,
)
from ama.session.layout import new_session_path
from ama.session.projection import ProjectedContext, project
from ama.session.tree import SessionTree
from ama.session.writer import SessionWriter

if TYPE_CHECKING:
    from ama.session.reader import SessionData

E = TypeVar("E", bound=AnyEntry)


class Session:
    def __init__(
        self,
        header: SessionHeader,
        tree: SessionTree,
        *,
        path: str | None,
        writer: SessionWriter | None = None,
        data: SessionData | None = None,
        persist: bool = True,
        readonly_reason: str | None = None,
    ) -> None:
        self.header = header
        self.tree = tree
        self.path = path
        self.data = data
        self._writer = writer
        self._persist = persist
        self._created = writer is not None or (data is not None)
        self.readonly_reason = readonly_reason
        #: called with every appended entry (the agent turns these into events)
        self.listeners: list[Callable[[AnyEntry], None]] = []
        self._context_cache: tuple[tuple[str | None, int], ProjectedContext] | None = None

    # --- construction ---------------------------------------------------------------

    @classmethod
    def create(
        cls,
        cwd: str,
        sessions_dir: str | os.PathLike[str],
        *,
        parent_session: str | None = None,
        session_id: str | None = None,
        root_id: str | None = None,
        relation_type: str | None = None,
    ) -> Session:
        """A new session (its file appears on the first append).  A child session names its
        parent's file in ``parent_session``, the lineage's first session in ``root_id`` and
        how it came about in ``relation_type`` (fork | task | rewind)."""
        if relation_type is not None and relation_type not in RELATION_TYPES:
            raise AmaError(
                "invalid_arguments", f"relation type must be one of {', '.join(RELATION_TYPES)}, not {relation_type!r}"
            )
        sid = session_id or str(uuid.uuid4())
        ts = now_iso()
        header = SessionHeader(
            version=CURRENT_VERSION,
            id=sid,
            timestamp=ts,
            cwd=cwd,
            parent_session=parent_session if parent_session is not None else UNSET,
            root_id=root_id if root_id is not None else UNSET,
            relation_type=relation_type if relation_type is not None else UNSET,
        )
        path = new_session_path(os.fspath(sessions_dir), cwd, sid, ts)
        s = cls(header, SessionTree(), path=path)
        s._created = False
        return s

    @classmethod
    def in_memory(cls, cwd: str) -> Session:
        header = SessionHeader(version=CURRENT_VERSION, id=str(uuid.uuid4()), timestamp=now_iso(), cwd=cwd)
        return cls(header, SessionTree(), path=None, persist=False)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Session:
        """Open an existing session for writing (takes the lease)."""
        from ama.session.reader import parse_fd  # not needed to start a new session

        path = os.fspath(path)
        writer = SessionWriter.open(path)
        try:
            data = parse_fd(writer.fd, path=path)
            reason = data.readonly_reason
            if reason is not None:
                raise AmaError("readonly", f"cannot write to session {path}: {reason}")
            assert data.header is not None
            tree = SessionTree(data.entries, data.leaf_id)
        except BaseException:
            writer.close()
            raise
        return cls(data.header, tree, path=path, writer=writer, data=data)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Session:
        """A read-only snapshot of a session file (no lease; appends are refused)."""
        from ama.session.reader import read_session

        path = os.fspath(path)
        try:
            data = read_session(path)
        except FileNotFoundError:
            raise NotFound(f"session file {path} does not exist") from None
        header = data.header or SessionHeader(version=CURRENT_VERSION, id="", cwd="")
        s = cls(header, SessionTree(data.entries, data.leaf_id), path=path, data=data)
        s.readonly_reason = data.readonly_reason or "it was opened read-only"
        return s

    # --- properties -----------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.header.id

    @property
    def cwd(self) -> str:
        return self.header.cwd

    @property
    def leaf_id(self) -> str | None:
        return self.tree.leaf_id

    @property
    def name(self) -> str | None:
        return self.tree.name

    @property
    def entries(self) -> list[AnyEntry]:
        return self.tree.entries

    @property
    def persisted(self) -> bool:
        return self._persist

    def branch(self, leaf_id: str | None = ...) -> list[AnyEntry]:  # type: ignore[assignment]
        return self.tree.branch(leaf_id)

    def context(self, leaf_id: str | None = ...) -> ProjectedContext:  # type: ignore[assignment]
        """The projected model context of the branch ending at ``leaf_id`` (default: the
        current leaf); memoized until the next append or navigation."""
        leaf = self.tree.leaf_id if leaf_id is ... else leaf_id
        key = (leaf, len(self.tree.entries))
        if self._context_cache is not None and self._context_cache[0] == key:
            return self._context_cache[1]
        ctx = project(self.tree.branch(leaf))
        self._context_cache = (key, ctx)
        return ctx

    def latest_custom(self, custom_type: str) -> Any | None:
        e = self.tree.latest_custom(custom_type)
        return None if e is None else e.data

    # --- writing --------------------------------------------------------------------

    def _write(self, line: bytes) -> None:
        if self.readonly_reason is not None:
            raise AmaError("readonly", f"cannot write to session {self.path}: {self.readonly_reason}")
        if not self._persist:
            return
        if self._writer is None:
            assert self.path is not None
            if self._created:
                self._writer = SessionWriter.open(self.path)
            else:
                self._writer = SessionWriter.create(self.path, encode_line(self.header))
                self._created = True
        self._writer.append(line)

    def append(self, entry: E) -> E:
        """Append a fully formed entry (its id must be new) and make it the leaf."""
        if entry.id in self.tree.by_id:
            raise AmaError("invalid_arguments", f"entry id {entry.id} already exists in session {self.id}")
        self._write(encode_line(entry))
        self.tree.add(entry)
        for fn in list(self.listeners):
            fn(entry)
        return entry

    def new(self, cls: type[E], **fields: Any) -> E:
        """Build an entry of ``cls`` parented on the current leaf, append it, return it."""
        entry = cls(new_entry_id(self.tree.by_id), self.tree.leaf_id, now_iso(), **fields)  # type: ignore[call-arg]
        return self.append(entry)

    def append_message(self, message: StoredMessage) -> MessageEntry:
        return self.new(MessageEntry, message=message)

    def append_custom(self, custom_type: str, data: Any = None) -> str:
        return self.new(CustomEntry, custom_type=custom_type, data=data).id

    def append_custom_message(
        self, custom_type: str, content: str | list[UserContent], *, display: bool = False, details: Any = UNSET
    ) -> CustomMessageEntry:
        return self.new(CustomMessageEntry, custom_type=custom_type, content=content, display=display, details=details)

    def append_model_change(self, provider: str, model_id: str, channel: str | None = None) -> ModelChangeEntry:
        return self.new(ModelChangeEntry, provider=provider, model_id=model_id, channel=channel or UNSET)

    def append_thinking_level_change(self, level: str) -> ThinkingLevelChangeEntry:
        return self.new(ThinkingLevelChangeEntry, thinking_level=level)

    def append_context_edit(self, target_id: str, replacement: str | None, reason: str) -> ContextEditEntry:
        self._require(target_id)
        return self.new(ContextEditEntry, target_id=target_id, replacement=replacement, reason=reason)

    def append_compaction(
        self, summary: str, first_kept_entry_id: str | None, tokens_before: int, *, usage: Usage | None = None, details: Any = UNSET
    ) -> CompactionEntry:
        return self.new(
            CompactionEntry,
            summary=summary,
            first_kept_entry_id=first_kept_entry_id,
            tokens_before=tokens_before,
            usage=usage if usage is not None else UNSET,
            details=details,
        )

    def append_branch_summary(
        self, from_id: str | None, summary: str, *, usage: Usage | None = None, details: Any = UNSET
    ) -> BranchSummaryEntry:
        return self.new(
            BranchSummaryEntry, from_id=from_id, summary=summary, usage=usage if usage is not None else UNSET, details=details
        )

    def append_usage(self, kind: str, provider: str, model: str, usage: Usage) -> UsageEntry:
        return self.new(UsageEntry, kind=kind, provider=provider, model=model, usage=usage)

    def set_label(self, target_id: str, label: str | None) -> LabelEntry:
        self._require(target_id)
        return self.new(LabelEntry, target_id=target_id, label=label if label else UNSET)

    def set_name(self, name: str) -> SessionInfoEntry:
        return self.new(SessionInfoEntry, name=name)

    def navigate(self, entry_id: str | None) -> None:
        """Move the current leaf to ``entry_id`` (None: before the first entry).  The
        abandoned branch stays in the file; the next append becomes its sibling.  Recorded
        as an ``ama.leaf`` custom entry under ``entry_id`` (pi reads the last entry of a file
        as its leaf and keeps ``custom`` entries out of the context)."""
        if entry_id is not None:
            self._require(entry_id)
        if entry_id == self.tree.leaf_id:
            return
        self.append(CustomEntry(new_entry_id(self.tree.by_id), entry_id, now_iso(), custom_type=LEAF_MARK))

    def _require(self, entry_id: str) -> None:
        if entry_id not in self.tree.by_id:
            raise NotFound(f"no entry {entry_id} in session {self.id}")

    def sync(self) -> None:
        if self._writer is not None:
            self._writer.sync()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["Session", "UnknownEntry"]
