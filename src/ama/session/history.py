"""Views of a session's history used by ``sessions show``, ``--from`` and exports."""

from __future__ import annotations

from dataclasses import dataclass

from ama.messages import (
    AssistantMessage,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
    image_count,
    text_of,
)
from ama.session.entries import AnyEntry, MessageEntry, iso_to_ms


@dataclass
class UserMessageRef:
    """A user message, numbered ``#n`` in file order (all branches, steer and follow-up
    messages included); ``#n`` is what ``ama --from <id>#n`` takes."""

    n: int
    entry_id: str
    timestamp: str  # the entry's ISO timestamp
    text: str
    origin: str | None
    images: int
    on_branch: bool

    def to_json(self) -> dict:
        return {
            "n": self.n,
            "entryId": self.entry_id,
            "timestamp": self.timestamp,
            "text": self.text,
            "origin": self.origin,
            "images": self.images,
            "onBranch": self.on_branch,
        }


def user_messages(entries: list[AnyEntry], branch_ids: set[str] | frozenset[str] = frozenset()) -> list[UserMessageRef]:
    out: list[UserMessageRef] = []
    for e in entries:
        if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage):
            m = e.message
            out.append(
                UserMessageRef(
                    n=len(out) + 1,
                    entry_id=e.id,
                    timestamp=e.timestamp,
                    text=text_of(m.content),
                    origin=m.origin if isinstance(m.origin, str) else None,
                    images=image_count(m.content),
                    on_branch=e.id in branch_ids,
                )
            )
    return out


@dataclass
class Counts:
    entries: int = 0
    messages: int = 0
    user: int = 0
    assistant: int = 0
    tool_results: int = 0
    system: int = 0
    other_messages: int = 0
    first_ms: int = 0
    last_ms: int = 0

    def to_json(self) -> dict:
        return {
            "entries": self.entries,
            "messages": self.messages,
            "user": self.user,
            "assistant": self.assistant,
            "toolResults": self.tool_results,
            "system": self.system,
            "otherMessages": self.other_messages,
        }


class Tally:
    """:class:`Counts` built one entry at a time, in file order (``sessions show`` counts
    while it reads; :func:`count` over a list)."""

    def __init__(self) -> None:
        self.counts = Counts()
        #: the timestamps of the message entries, in order
        self.stamps: list[str] = []

    def add(self, e: AnyEntry) -> None:
        c = self.counts
        c.entries += 1
        if not isinstance(e, MessageEntry):
            return
        c.messages += 1
        self.stamps.append(e.timestamp)
        m = e.message
        if isinstance(m, UserMessage):
            c.user += 1
        elif isinstance(m, AssistantMessage):
            c.assistant += 1
        elif isinstance(m, ToolResultMessage):
            c.tool_results += 1
        elif isinstance(m, SystemMessage):
            c.system += 1
        else:
            c.other_messages += 1

    def done(self) -> Counts:
        c = self.counts
        # the first and the last message with a readable timestamp (no need to read the rest)
        c.first_ms = next((ms for ts in self.stamps if (ms := iso_to_ms(ts))), 0)
        c.last_ms = next((ms for ts in reversed(self.stamps) if (ms := iso_to_ms(ts))), 0)
        return c


def count(entries: list[AnyEntry]) -> Counts:
    t = Tally()
    add = t.add
    for e in entries:
        add(e)
    return t.done()
