"""The session file's line shapes, declared once and used by reader and writer.

A session file is JSON lines: the first line is a :class:`SessionHeader`, every other line
is an entry (``type`` first, then ``id``, ``parentId``, ``timestamp``).  A leaf move is a
``custom`` entry of type ``ama.leaf`` whose ``parentId`` is the new leaf (older files have
bare ``leaf`` lines instead, still read).
See docs/session-format.md for the normative description.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any, TypeAlias

import msgspec

from ama.messages import UNSET, StoredMessage, Unset, Usage, UserContent

CURRENT_VERSION = 3

_opts: dict[str, Any] = {"rename": "camel", "kw_only": True}


#: how a session came from its parent (header ``relationType``)
RELATION_TYPES = ("fork", "task", "rewind")


class SessionHeader(msgspec.Struct, tag_field="type", tag="session", **_opts):
    version: int = 1
    id: str = ""
    timestamp: str = ""
    cwd: str = ""
    #: the parent session: the path of its file, as pi writes it (older ama files: its id)
    parent_session: str | None | Unset = UNSET
    #: the id of the first session of the lineage (fork of a fork of X: X)
    root_id: str | Unset = UNSET
    #: fork | task | rewind
    relation_type: str | Unset = UNSET

    @property
    def lineage_root(self) -> str:
        """``rootId`` if the header has one, else this session's own id."""
        return self.root_id if isinstance(self.root_id, str) and self.root_id else self.id


class LeafLine(msgspec.Struct, tag_field="type", tag="leaf", **_opts):
    """Moved the current leaf in files written before the ``ama.leaf`` entry; not an entry,
    has no id.  Read, never written (pi reads such a line as a root of its own)."""

    target_id: str | None
    timestamp: str = ""


class Entry(msgspec.Struct, rename="camel"):
    # Not kw_only, so these three come first when encoded (subclasses are kw_only and
    # their fields follow), giving ``type, id, parentId, timestamp, ...`` on every line.
    id: str
    parent_id: str | None = None
    timestamp: str = ""

    #: the ``type`` tag as written (set on each subclass by msgspec's ``tag``)
    @property
    def type(self) -> str:
        return self.__struct_config__.tag  # type: ignore[return-value]


class MessageEntry(Entry, tag_field="type", tag="message", kw_only=True):
    message: StoredMessage


class CompactionEntry(Entry, tag_field="type", tag="compaction", kw_only=True):
    summary: str = ""
    first_kept_entry_id: str | None = None
    tokens_before: int = 0
    usage: Usage | Unset = UNSET
    details: Any | Unset = UNSET
    from_hook: bool | Unset = UNSET


class BranchSummaryEntry(Entry, tag_field="type", tag="branch_summary", kw_only=True):
    from_id: str | None = None
    summary: str = ""
    usage: Usage | Unset = UNSET
    details: Any | Unset = UNSET
    from_hook: bool | Unset = UNSET


class ContextEditEntry(Entry, tag_field="type", tag="context_edit", kw_only=True):
    """``replacement`` null removes the target from the context; a string replaces its content.
    ``reason``: prune | abort | retry | overflow | manual | image_budget."""

    target_id: str = ""
    replacement: str | None = None
    reason: str = "manual"


class ModelChangeEntry(Entry, tag_field="type", tag="model_change", kw_only=True):
    provider: str = ""
    model_id: str = ""
    channel: str | Unset = UNSET


class ThinkingLevelChangeEntry(Entry, tag_field="type", tag="thinking_level_change", kw_only=True):
    thinking_level: str = "off"


class CustomEntry(Entry, tag_field="type", tag="custom", kw_only=True):
    custom_type: str = ""
    data: Any = None


#: ``customType`` of the entry that records a leaf move (navigate, rewind): its ``parentId``
#: is the new leaf (null: before the first entry), so a reader that takes the last entry of
#: the file as the leaf and walks ``parentId`` up (pi) lands on the same branch.
LEAF_MARK = "ama.leaf"


def is_leaf_mark(e: object) -> bool:
    return isinstance(e, CustomEntry) and e.custom_type == LEAF_MARK


class CustomMessageEntry(Entry, tag_field="type", tag="custom_message", kw_only=True):
    custom_type: str = ""
    content: str | list[UserContent] = ""
    display: bool = False
    details: Any | Unset = UNSET


class LabelEntry(Entry, tag_field="type", tag="label", kw_only=True):
    target_id: str = ""
    label: str | Unset = UNSET  # absent = clear the label


class SessionInfoEntry(Entry, tag_field="type", tag="session_info", kw_only=True):
    name: str | Unset = UNSET


class UsageEntry(Entry, tag_field="type", tag="usage", kw_only=True):
    """Usage of a request that does not enter the context (``cache_warm``, ``permission_classify``)."""

    kind: str = ""
    provider: str = ""
    model: str = ""
    usage: Usage = msgspec.field(default_factory=Usage)


class UnknownEntry(msgspec.Struct, **_opts):
    """An entry of a type this version does not know (or whose message role it does not
    know): kept in the tree, never in the context, written back unchanged by fork/export."""

    id: str
    parent_id: str | None
    timestamp: str
    raw: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.raw.get("type", ""))


KnownEntry: TypeAlias = (
    MessageEntry
    | CompactionEntry
    | BranchSummaryEntry
    | ContextEditEntry
    | ModelChangeEntry
    | ThinkingLevelChangeEntry
    | CustomEntry
    | CustomMessageEntry
    | LabelEntry
    | SessionInfoEntry
    | UsageEntry
)
AnyEntry: TypeAlias = KnownEntry | UnknownEntry
Line: TypeAlias = SessionHeader | LeafLine | KnownEntry

ENTRY_TYPES: dict[str, type] = {
    c.__struct_config__.tag: c  # type: ignore[misc]
    for c in (
        MessageEntry,
        CompactionEntry,
        BranchSummaryEntry,
        ContextEditEntry,
        ModelChangeEntry,
        ThinkingLevelChangeEntry,
        CustomEntry,
        CustomMessageEntry,
        LabelEntry,
        SessionInfoEntry,
        UsageEntry,
    )
}

_encoder = msgspec.json.Encoder()


def encode_line(obj: Line | UnknownEntry) -> bytes:
    """One JSON line, with its trailing newline."""
    if isinstance(obj, UnknownEntry):
        return _encoder.encode(obj.raw) + b"\n"
    return _encoder.encode(obj) + b"\n"


def now_iso() -> str:
    """UTC ISO 8601 with milliseconds, e.g. 2026-11-30T17:57:54.123Z (pi's form)."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def now_ms() -> int:
    import time

    return time.time_ns() // 1_000_000


def new_entry_id(taken: set[str] | dict[str, Any]) -> str:
    """A random 8-hex-digit id not in ``taken``."""
    while True:
        eid = os.urandom(4).hex()
        if eid not in taken:
            return eid


def iso_to_ms(ts: str) -> int:
    """Epoch milliseconds of an ISO 8601 timestamp (any offset); 0 if unparseable."""
    if not ts:
        return 0
    try:
        s = ts[:-1] + "+00:00" if ts.endswith("Z") else ts
        dt = datetime.fromisoformat(s)
    except ValueError:
        return 0
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000)
