"""Context to request: the rules both wire APIs share, and byte-stable JSON.

``prepare`` turns a context's messages into a neutral list of items:

- ``system`` messages are kept as items (each API places them);
- ``custom`` messages become user text as their producer wrote it; ``compactionSummary``
  and ``branchSummary`` become user text wrapped in ``<summary>…</summary>``; pi's
  ``bashExecution`` becomes user text (unless ``excludeFromContext``); adjacent user-side
  messages (a summary or a note, then the prompt) become one user item, so roles alternate
  as strict chat templates require;
- assistant messages that ended in ``error`` or ``aborted`` are skipped (incomplete turns);
  thinking blocks are kept only when the message came from the same provider, API and
  model (their signatures are only valid there), otherwise dropped; empty text is dropped;
  an assistant message left with nothing to send is skipped;
- tool-call ids are normalised by the API's ``normalize_id`` (deterministic);
- a tool result whose call is not in the history is dropped; a tool call left without a
  result gets a synthetic error result ("No result provided") before the next message.

Tool-call arguments are replayed as the model sent them (``arguments_json``): its own JSON
text when the stream kept it (``ToolCall.raw_arguments``), else the compact encoding of the
arguments in their own key order, never re-sorted.

Nothing here looks at clocks, sets or object ids: the same context gives the same bytes.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ama.ai.types import Model
from ama.messages import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    text_of,
)

_encoder = msgspec.json.Encoder(order="sorted")


def encode_body(fields: list[tuple[str, Any]]) -> bytes:
    """A JSON object with top-level keys in the given order and every nested object's keys
    sorted: identical input gives identical bytes, and a request that only appends messages
    (given last) shares its prefix with the previous one."""
    parts = [_encoder.encode(k) + b":" + _encoder.encode(v) for k, v in fields if v is not None]
    return b"{" + b",".join(parts) + b"}"


def canonical_json(value: Any) -> str:
    """``value`` as JSON text with sorted keys (e.g. tool-call arguments sent as a string)."""
    return _encoder.encode(value).decode("utf-8")


_compact = msgspec.json.Encoder()


def arguments_json(call: ToolCall) -> str:
    """A tool call's arguments as JSON text, byte for byte what the model sent when known."""
    raw = call.raw_arguments
    if isinstance(raw, str) and raw:
        return raw
    return _compact.encode(call.arguments).decode("utf-8")


def arguments_raw(call: ToolCall) -> msgspec.Raw:
    """The same text as an embedded JSON value (an API that takes the arguments as an object;
    ``encode_body`` sorts keys everywhere else)."""
    return msgspec.Raw(arguments_json(call).encode("utf-8"))


def normalize_id(id: str, *, max_len: int, pattern: re.Pattern[str] = re.compile(r"[^A-Za-z0-9_-]")) -> str:
    """``id`` if it is valid for the API, else a sanitized prefix plus a hash of the original."""
    if id and len(id) <= max_len and not pattern.search(id):
        return id
    digest = hashlib.sha256(id.encode("utf-8")).hexdigest()[:10]
    return pattern.sub("_", id)[: max_len - 11] + "_" + digest


COMPACTION_PREFIX = "The conversation history before this point was compacted into the following summary:"
BRANCH_PREFIX = "The following is a summary of a branch that this conversation came back from:"


def summary_text(prefix: str, summary: str) -> str:
    return f"{prefix}\n\n<summary>\n{summary}\n</summary>"


def bash_text(m: BashExecutionMessage) -> str:
    text = f"Ran `{m.command}`\n"
    text += f"```\n{m.output}\n```" if m.output else "(no output)"
    if m.cancelled:
        text += "\n\n(command cancelled)"
    elif m.exit_code not in (None, 0):
        text += f"\n\nCommand exited with code {m.exit_code}"
    if m.truncated:
        path = m.full_output_path if isinstance(m.full_output_path, str) else None
        text += f"\n\n[Output truncated. Full output: {path}]" if path else "\n\n[Output truncated]"
    return text


@dataclass
class Item:
    role: str  # system | user | assistant | tool
    blocks: list[Any] = field(default_factory=list)  # user: Text/Image; assistant: Text/Thinking/ToolCall
    text: str = ""  # system
    result: ToolResultMessage | None = None  # tool
    same_model: bool = False  # assistant


def _user_blocks(content: str | list[Any]) -> list[Any]:
    if isinstance(content, str):
        return [TextContent(text=content)] if content else []
    out: list[Any] = []
    for b in content:
        if isinstance(b, TextContent):
            if b.text:
                out.append(TextContent(text=b.text))
        elif isinstance(b, ImageContent):
            out.append(b)
    return out


def is_same_model(m: AssistantMessage, model: Model) -> bool:
    return m.provider == model.provider and m.api == model.api and m.model == model.id


def prepare(messages: list[Any], model: Model, normalize: Any) -> list[Item]:
    items: list[Item] = []
    pending: dict[str, ToolCall] = {}  # normalized id -> call, awaiting a result
    known: set[str] = set()

    def flush_pending() -> None:
        for cid, call in list(pending.items()):
            items.append(
                Item(
                    role="tool",
                    result=ToolResultMessage(
                        tool_call_id=cid,
                        tool_name=call.name,
                        content=[TextContent(text="No result provided")],
                        is_error=True,
                    ),
                )
            )
        pending.clear()

    for m in messages:
        if isinstance(m, ToolResultMessage):
            cid = normalize(m.tool_call_id)
            if cid not in known:
                continue
            pending.pop(cid, None)
            known.discard(cid)
            items.append(Item(role="tool", result=msgspec.structs.replace(m, tool_call_id=cid)))
            continue
        if isinstance(m, AssistantMessage):
            if m.stop_reason in ("error", "aborted"):
                continue
            same = is_same_model(m, model)
            blocks: list[Any] = []
            calls: list[ToolCall] = []
            for b in m.content:
                if isinstance(b, TextContent):
                    if b.text.strip():
                        blocks.append(b)
                elif isinstance(b, ThinkingContent):
                    if same:
                        blocks.append(b)
                elif isinstance(b, ToolCall):
                    call = msgspec.structs.replace(b, id=normalize(b.id))
                    blocks.append(call)
                    calls.append(call)
            if not blocks:
                continue
            flush_pending()
            known.clear()
            for call in calls:
                pending[call.id] = call
                known.add(call.id)
            items.append(Item(role="assistant", blocks=blocks, same_model=same))
            continue
        # any other role interrupts a tool exchange
        item: Item | None = None
        if isinstance(m, SystemMessage):
            text = text_of(m.content)
            item = Item(role="system", text=text) if text else None
        elif isinstance(m, UserMessage | CustomMessage):
            ub = _user_blocks(m.content)
            item = Item(role="user", blocks=ub) if ub else None
        elif isinstance(m, CompactionSummaryMessage):
            item = Item(role="user", blocks=[TextContent(text=summary_text(COMPACTION_PREFIX, m.summary))])
        elif isinstance(m, BranchSummaryMessage):
            item = Item(role="user", blocks=[TextContent(text=summary_text(BRANCH_PREFIX, m.summary))])
        elif isinstance(m, BashExecutionMessage) and m.exclude_from_context is not True:
            item = Item(role="user", blocks=[TextContent(text=bash_text(m))])
        if item is None:
            continue
        flush_pending()
        known.clear()
        if item.role == "user" and items and items[-1].role == "user":
            items[-1].blocks.extend(item.blocks)  # roles alternate: adjacent user-side messages are one turn
            continue
        items.append(item)
    return items
