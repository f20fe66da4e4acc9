"""Project the current branch of a session to the model context.

Exactly the four steps of the format (docs/session-format.md, "Projection"), plus a fifth
that only acts on damaged or interrupted files:

1. System checkpoint and compaction: every system message of the branch, replayed in
   order and folded into one, comes first, wherever the file has it (strict chat templates
   refuse a system message anywhere else).  With a ``compaction`` on the branch, take the
   latest: then the compaction as a summary message, the non-system entries from
   ``firstKeptEntryId`` up to the compaction (an older compaction there is left out: the
   latest summary covers it), and every non-system entry after it.
2. Context edits: per target, the latest ``context_edit`` on the branch applies:
   ``replacement: null`` removes the target; a string replaces its content only (role and
   metadata kept; assistant content becomes one text block; summaries replace ``summary``;
   system messages are not changed by a string).
3. Mapping: ``message`` -> its message; ``custom_message`` -> role ``custom``;
   ``compaction`` -> ``compactionSummary``; ``branch_summary`` -> ``branchSummary``; every
   other type (``usage``, ``custom``, labels, unknown types...) stays out.  Of
   ``ama.rewind-note`` messages with no user message between them only the last one
   reaches the context (a later rewind overtook the earlier note).
4. Model and thinking level: the latest ``model_change`` (or assistant message) and
   ``thinking_level_change`` on the branch.
5. Pairing: a ``toolResult`` whose call is not in the preceding assistant message is
   dropped; a tool call without a result gets a synthetic error result (or, in an
   assistant message that ended in ``error``/``aborted``, the unexecuted call is dropped),
   so a provider never sees an unpaired call or result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from ama.messages import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    ContextMessage,
    CustomMessage,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    text_of,
)
from ama.session.entries import (
    AnyEntry,
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomMessageEntry,
    MessageEntry,
    ModelChangeEntry,
    ThinkingLevelChangeEntry,
    iso_to_ms,
)

REWIND_NOTE = "ama.rewind-note"
MISSING_RESULT_TEXT = "[tool result missing: the call was interrupted or its result was lost]"

_replace = msgspec.structs.replace


@dataclass
class ModelRef:
    provider: str
    model_id: str
    channel: str | None = None

    @property
    def ref(self) -> str:
        return f"{self.provider}/{self.model_id}"


class ProjectedContext:
    """The context of a branch: its ``messages``, for each the ``entry_ids`` it came from
    (several for the folded system checkpoint, none for a synthetic tool result), and the
    ``model`` and ``thinking_level`` in effect.

    :func:`project` finds the model and the thinking level at once and maps the messages
    when they are first asked for: resuming a long session needs the model before the
    first prompt, the messages only with it."""

    def __init__(
        self,
        messages: list[ContextMessage] | None = None,
        entry_ids: list[tuple[str, ...]] | None = None,
        model: ModelRef | None = None,
        thinking_level: str | None = None,
    ) -> None:
        self._messages: list[ContextMessage] = messages if messages is not None else []
        self._entry_ids: list[tuple[str, ...]] = entry_ids if entry_ids is not None else []
        self.model = model
        self.thinking_level = thinking_level
        self._pending: Callable[[], tuple[list[ContextMessage], list[tuple[str, ...]]]] | None = None

    def _settle(self) -> None:
        if self._pending is not None:
            make, self._pending = self._pending, None
            self._messages, self._entry_ids = make()

    @property
    def messages(self) -> list[ContextMessage]:
        self._settle()
        return self._messages

    @messages.setter
    def messages(self, value: list[ContextMessage]) -> None:
        self._settle()
        self._messages = value

    @property
    def entry_ids(self) -> list[tuple[str, ...]]:
        self._settle()
        return self._entry_ids

    @entry_ids.setter
    def entry_ids(self, value: list[tuple[str, ...]]) -> None:
        self._settle()
        self._entry_ids = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProjectedContext):
            return NotImplemented
        return (self.messages, self.entry_ids, self.model, self.thinking_level) == (
            other.messages,
            other.entry_ids,
            other.model,
            other.thinking_level,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"ProjectedContext(messages={self.messages!r}, entry_ids={self.entry_ids!r}, "
            f"model={self.model!r}, thinking_level={self.thinking_level!r})"
        )

    def to_json(self, *, messages: bool = True) -> dict[str, Any]:
        """The context as plain data (``messages=False``: all but the messages)."""
        out = {"messages": msgspec.to_builtins(self.messages)} if messages else {}
        return out | {
            "entryIds": [list(x) for x in self.entry_ids],
            "model": None
            if self.model is None
            else {"provider": self.model.provider, "modelId": self.model.model_id, "channel": self.model.channel},
            "thinkingLevel": self.thinking_level,
        }


def _with_replacement(msg: ContextMessage, text: str) -> ContextMessage:
    if isinstance(msg, AssistantMessage):
        return _replace(msg, content=[TextContent(text=text)])
    if isinstance(msg, ToolResultMessage):
        return _replace(msg, content=[TextContent(text=text)])
    if isinstance(msg, UserMessage | CustomMessage):
        return _replace(msg, content=text)
    if isinstance(msg, CompactionSummaryMessage | BranchSummaryMessage):
        return _replace(msg, summary=text)
    if isinstance(msg, BashExecutionMessage):
        return _replace(msg, output=text)
    return msg  # system: unchanged


def _to_message(e: AnyEntry) -> ContextMessage | None:
    if isinstance(e, MessageEntry):
        m = e.message
        if isinstance(m, BashExecutionMessage) and m.exclude_from_context is True:
            return None
        return m
    if isinstance(e, CustomMessageEntry):
        return CustomMessage(
            custom_type=e.custom_type,
            content=e.content,
            display=e.display,
            details=e.details,
            timestamp=iso_to_ms(e.timestamp),
        )
    if isinstance(e, CompactionEntry):
        return CompactionSummaryMessage(summary=e.summary, tokens_before=e.tokens_before, timestamp=iso_to_ms(e.timestamp))
    if isinstance(e, BranchSummaryEntry):
        return BranchSummaryMessage(summary=e.summary, from_id=e.from_id or "", timestamp=iso_to_ms(e.timestamp))
    return None


def project(branch: list[AnyEntry]) -> ProjectedContext:
    """The model context of a branch (root -> leaf)."""
    out = ProjectedContext()

    # step 4 and the edits of step 2 are gathered over the whole branch, and the system
    # messages of step 1 are found on the way
    edits: dict[str, str | None] = {}
    compaction_at = -1
    system_at: list[int] = []
    model = out.model
    ref = ""  # model.ref
    for i, e in enumerate(branch):
        if isinstance(e, MessageEntry):
            am = e.message
            if isinstance(am, AssistantMessage):
                if am.provider and am.model and (model is None or ref != f"{am.provider}/{am.model}"):
                    model = ModelRef(am.provider, am.model)
                    ref = model.ref
            elif isinstance(am, SystemMessage):
                system_at.append(i)
        elif isinstance(e, ContextEditEntry):
            edits[e.target_id] = e.replacement
        elif isinstance(e, CompactionEntry):
            compaction_at = i
        elif isinstance(e, ModelChangeEntry):
            model = ModelRef(e.provider, e.model_id, e.channel if isinstance(e.channel, str) else None)
            ref = model.ref
        elif isinstance(e, ThinkingLevelChangeEntry):
            out.thinking_level = e.thinking_level
    out.model = model
    snapshot = list(branch)  # the caller's list may change before the messages are asked for
    out._pending = lambda: _messages(snapshot, edits, compaction_at, system_at)
    return out


def _messages(
    branch: list[AnyEntry], edits: dict[str, str | None], compaction_at: int, system_at: list[int]
) -> tuple[list[ContextMessage], list[tuple[str, ...]]]:
    """Steps 1, 2, 3 and 5 of :func:`project`."""

    def mapped(e: AnyEntry) -> ContextMessage | None:
        if e.id in edits:
            replacement = edits[e.id]
            if replacement is None:
                return None
            m = _to_message(e)
            return None if m is None else _with_replacement(m, replacement)
        return _to_message(e)

    messages: list[ContextMessage | None] = []
    ids: list[tuple[str, ...]] = []

    # step 1: every system message of the branch, wherever the file has it (a resumed pi
    # session gets ama's system message appended at its leaf), replayed in order and folded
    # into one leading system checkpoint: strict chat templates refuse a system message
    # anywhere but first.
    systems: list[tuple[str, ContextMessage]] = []
    for i in system_at:
        e = branch[i]
        m = mapped(e)
        if m is not None:
            systems.append((e.id, m))
    if systems:
        if len(systems) == 1:
            messages.append(systems[0][1])
        else:
            text = "\n\n".join(text_of(m.content) for _, m in systems)  # type: ignore[union-attr]
            messages.append(SystemMessage(content=text, timestamp=systems[-1][1].timestamp))
        ids.append(tuple(i for i, _ in systems))
    window: list[AnyEntry] = branch
    if compaction_at >= 0:
        comp = branch[compaction_at]
        assert isinstance(comp, CompactionEntry)
        summary = mapped(comp)
        if summary is not None:
            messages.append(summary)
            ids.append((comp.id,))
        kept_from = compaction_at
        for j in range(compaction_at):
            if branch[j].id == comp.first_kept_entry_id:
                kept_from = j
                break
        # an older compaction inside the kept range is folded into the latest summary
        kept: list[AnyEntry] = [e for e in branch[kept_from:compaction_at] if not isinstance(e, CompactionEntry)]
        window = kept + branch[compaction_at + 1 :]

    # steps 2 and 3, and the rewind notes: of notes with no user message between them only
    # the last one stays (a later rewind overtook the earlier note)
    note_at = -1  # where the last note's message went in ``messages`` (-2: it gave none)
    dropped = False
    append, add_ids = messages.append, ids.append
    for e in window:
        if isinstance(e, MessageEntry):
            m = e.message
            if isinstance(m, SystemMessage):
                continue
            if isinstance(m, UserMessage):
                note_at = -1
            if edits and e.id in edits:
                m = mapped(e)  # type: ignore[assignment]
                if m is None:
                    continue
            elif isinstance(m, BashExecutionMessage) and m.exclude_from_context is True:
                continue
            append(m)
            add_ids((e.id,))
            continue
        note = isinstance(e, CustomMessageEntry) and e.custom_type == REWIND_NOTE
        if note and note_at != -1:
            if note_at >= 0:
                messages[note_at] = None
                dropped = True
            note_at = -2
        mm = mapped(e)
        if note:
            note_at = len(messages) if mm is not None else -2
        if mm is not None:
            append(mm)
            add_ids((e.id,))
    if dropped:
        kept_ids = [i for m, i in zip(messages, ids) if m is not None]
        ids = kept_ids
        messages = [m for m in messages if m is not None]

    return _pair_tool_calls(messages, ids)  # type: ignore[arg-type]


def _pair_tool_calls(
    messages: list[ContextMessage], ids: list[tuple[str, ...]]
) -> tuple[list[ContextMessage], list[tuple[str, ...]]]:
    out: list[ContextMessage] = []
    out_ids: list[tuple[str, ...]] = []
    pending: dict[str, ToolCall] = {}  # calls of the latest assistant still without a result
    owner = -1  # index in ``out`` of that assistant message

    def close() -> None:
        nonlocal owner
        if not pending:
            return
        asst = out[owner]
        assert isinstance(asst, AssistantMessage)
        if asst.stop_reason in ("error", "aborted"):
            kept = [b for b in asst.content if not (isinstance(b, ToolCall) and b.id in pending)]
            out[owner] = _replace(asst, content=kept)
        else:
            for call in pending.values():
                out.append(
                    ToolResultMessage(
                        tool_call_id=call.id,
                        tool_name=call.name,
                        content=[TextContent(text=MISSING_RESULT_TEXT)],
                        is_error=True,
                        timestamp=asst.timestamp,
                    )
                )
                out_ids.append(())
        pending.clear()

    for m, i in zip(messages, ids):
        if isinstance(m, ToolResultMessage):
            if m.tool_call_id in pending:
                del pending[m.tool_call_id]
                out.append(m)
                out_ids.append(i)
            # else: a result without its call (damaged file or edited call): dropped
            continue
        if pending:
            close()
        out.append(m)
        out_ids.append(i)
        if isinstance(m, AssistantMessage):
            owner = len(out) - 1
            for b in m.content:
                if isinstance(b, ToolCall):
                    pending[b.id] = b
    close()
    return out, out_ids


__all__ = ["MISSING_RESULT_TEXT", "REWIND_NOTE", "ModelRef", "ProjectedContext", "project"]
