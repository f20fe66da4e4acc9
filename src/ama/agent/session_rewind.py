"""Rewind orchestration (seeds/004 rewind-plan §3): points, conversation and code rewind,
rewind notes, the two summaries.

* Rewind points are the user messages on the active path that opened a new turn (steering,
  follow-up and hook-continuation messages belong to their turn), oldest first.
* Conversation rewind moves the leaf to the point's parent with an ``ama.leaf`` entry (the
  abandoned branch stays in the file); the next request is byte-identical to the earlier
  request up to that point.  Model, thinking level and permission mode stay as they are.
* Code rewind restores tracked files through ``ama.checkpoints`` (conflicts skipped unless
  ``onConflict: "overwrite"``); it runs first, so a failed restore leaves the conversation.
* After a conversation-only or code-only rewind, an ``ama.rewind-note`` custom message tells
  the model, before the next prompt, which files and conversation disagree.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Protocol

from ama.agent.events import Event, event, plain
from ama.agent.transcript import message_lines
from ama.errors import AmaError, Busy, InvalidArguments
from ama.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    text_of,
)

if TYPE_CHECKING:
    from ama.agent.session import AgentSession
    from ama.session.store import Session
    from ama.tools import ReadFiles


class RewindHost(Protocol):
    """What a rewind needs: an ``AgentSession``, or the command line's session-only host
    (agent/rewind_offline.py)."""

    session: Session
    checkpoints: Any
    read_files: ReadFiles
    pending_notes: list[str]
    hooks: Any

    @property
    def cwd(self) -> str: ...

    @property
    def busy(self) -> bool: ...

    def emit(self, ev: Event) -> None: ...

    def emit_hook_records(self, outcome: Any) -> None: ...

MODES = ("both", "conversation", "code")
NOTE_FILES = 20
READ_TOOLS = ("read", "write", "edit")


def _is_point(e: Any) -> bool:
    if e.type != "message" or not isinstance(e.message, UserMessage):
        return False
    return not isinstance(e.message.origin, str) or e.message.origin in ("", "plan", "task")


def rewind_points(agent: RewindHost) -> list[dict[str, Any]]:
    tracker = agent.checkpoints
    out = []
    branch: list[Any] = agent.session.branch()
    for e in branch:
        if _is_point(e):
            out.append(
                {
                    "entryId": e.id,
                    "text": text_of(e.message.content),
                    "timestamp": e.timestamp,
                    "hasCheckpoint": bool(tracker is not None and tracker.enabled and tracker.has_checkpoint(e.id)),
                }
            )
    return out


def _point(agent: RewindHost, entry_id: str) -> Any:
    for e in agent.session.branch():
        if e.id == entry_id and _is_point(e):
            return e
    raise InvalidArguments(f"entry {entry_id} is not a rewind point (a new-turn user message on the active path)")


def draft_of(entry: Any) -> dict[str, Any]:
    content = entry.message.content
    out: dict[str, Any] = {"text": text_of(content)}
    if not isinstance(content, str):
        images = [plain(b) for b in content if isinstance(b, ImageContent)]
        if images:
            out["images"] = images
    return out


def _rel(agent: RewindHost, path: str) -> str:
    rel = os.path.relpath(path, agent.cwd)
    return path if rel.startswith("..") else rel.replace(os.sep, "/")


def recompute_read_files(agent: RewindHost, forget: list[str]) -> None:
    """The read-files set of the new path: files that successful read/write/edit calls on
    it touched, minus ``forget`` (restored, deleted, or differing from the checkpoint)."""
    from ama.tools import resolve_path

    calls: dict[str, str] = {}
    done: list[str] = []
    branch: list[Any] = agent.session.branch()
    for e in branch:
        if e.type != "message":
            continue
        m = e.message
        if isinstance(m, AssistantMessage):
            for b in m.content:
                if isinstance(b, ToolCall) and b.name in READ_TOOLS and isinstance(b.arguments.get("path"), str):
                    calls[b.id] = resolve_path(agent.cwd, b.arguments["path"])
        elif isinstance(m, ToolResultMessage) and not m.is_error and m.tool_call_id in calls:
            done.append(calls[m.tool_call_id])
    skip = {os.path.realpath(resolve_path(agent.cwd, p)) for p in forget}
    agent.read_files.entries.clear()
    for path in dict.fromkeys(done):
        if os.path.realpath(path) in skip or not os.path.isfile(path):
            continue
        try:
            agent.read_files.record(path)
        except OSError:
            continue


def _note(agent: RewindHost, text: str, files: list[str]) -> str:
    shown = files[:NOTE_FILES]
    more = f"\n(and {len(files) - NOTE_FILES} more)" if len(files) > NOTE_FILES else ""
    return text + "\n" + "\n".join(f"- {f}" for f in shown) + more


async def rewind(
    agent: RewindHost, entry_id: str, mode: str = "both", *, dry_run: bool = False, on_conflict: str = "skip"
) -> dict[str, Any]:
    if agent.busy:
        raise Busy("cannot rewind while a run is in progress; abort it first")
    if mode not in MODES:
        raise InvalidArguments(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if on_conflict not in ("skip", "overwrite"):
        raise InvalidArguments(f"onConflict must be skip or overwrite, not {on_conflict!r}")
    entry = _point(agent, entry_id)
    tracker = agent.checkpoints
    code_mode = mode in ("both", "code")
    if code_mode and (tracker is None or not tracker.enabled or not tracker.has_checkpoint(entry_id)):
        why = "this session keeps no file checkpoints" if tracker is None or not tracker.enabled else "it is too old or predates checkpoints"
        raise AmaError("no_checkpoint", f"no file checkpoint for entry {entry_id} ({why}); rewind the conversation only")
    parent = agent.session.tree.parent[entry_id]
    result: dict[str, Any] = {}
    code = None
    if code_mode:
        code = tracker.restore(  # type: ignore[union-attr]
            entry_id, dry_run=dry_run, on_conflict=on_conflict, read_files=None if dry_run else agent.read_files
        )
        result["code"] = code.to_json()
    if tracker is not None and tracker.enabled:
        hint = tracker.git_hint(entry_id)
        if hint:
            result["gitHint"] = hint
    if mode in ("both", "conversation"):
        result["conversation"] = {"leafId": parent, "draft": draft_of(entry)}
    if dry_run:
        return result
    if mode in ("both", "conversation"):
        agent.session.navigate(parent)
    differing = tracker.differing_files(entry_id) if tracker is not None and tracker.enabled else []
    changed = (code.restored + code.deleted) if code is not None else []
    if mode != "code":
        recompute_read_files(agent, changed + differing)
    agent.pending_notes.clear()  # a note of an earlier rewind is no longer true after this one
    if mode == "conversation" and differing:
        agent.pending_notes.append(
            _note(agent, "The conversation was rewound to an earlier point, but these files kept the later changes:", differing)
        )
    elif mode == "code" and changed:
        n = next((i for i, p in enumerate(rewind_points(agent), 1) if p["entryId"] == entry_id), 0)
        agent.pending_notes.append(
            _note(agent, f"These files were restored to their state before user message #{n} (the conversation was kept):", changed)
        )
    payload = code.to_json() if code is not None else {"restored": [], "deleted": [], "conflicts": [], "skipped": []}
    agent.emit(
        event(
            "session_rewound",
            entryId=entry_id,
            mode=mode,
            restored=payload["restored"],
            deleted=payload["deleted"],
            conflicts=payload["conflicts"],
            skipped=payload["skipped"],
        )
    )
    if agent.hooks:
        from ama.hooks import run_hooks

        files = payload["restored"] + payload["deleted"]
        outcome = await run_hooks(
            "PostRewind", {"sessionId": agent.session.id, "entryId": entry_id, "mode": mode, "files": files},
            agent.hooks, cwd=agent.cwd,
        )  # fmt: skip
        agent.emit_hook_records(outcome)
    return result


# --- summaries ----------------------------------------------------------------------------

SUMMARY_SYSTEM = (
    "You write summaries of coding-agent conversations for the agent itself to continue from. "
    "Keep: the user's goals and constraints, decisions made, files read and changed (paths), commands run "
    "and their outcomes, errors, and what remains to do. Be concise and factual; no preamble."
)


def _transcript(entries: list[Any], limit: int = 400_000) -> str:
    lines: list[str] = []
    for e in entries:
        if e.type == "compaction":
            lines.append(f"[Earlier summary]\n{e.summary}")
        elif e.type == "branch_summary":
            lines.append(f"[Summary of another branch]\n{e.summary}")
        elif e.type == "message":
            lines.extend(message_lines(e.message))
    text = "\n\n".join(lines)
    return text[-limit:]


async def summarize(agent: AgentSession, entries: list[Any], instructions: str | None, what: str) -> tuple[str, Any]:
    """Ask the session's model for a summary of ``entries``; (text, usage)."""
    from ama.ai import Context, StreamOptions, complete

    body = f"Summarize {what}.\n\n<conversation>\n{_transcript(entries)}\n</conversation>"
    if instructions:
        body += f"\n\nAdditional instructions: {instructions}"
    request: dict[str, Any] = {}
    ctx = Context(system_prompt=SUMMARY_SYSTEM, messages=[UserMessage(content=body)], tools=[])
    opts = StreamOptions(
        api_key=agent.registry.api_key(agent.model), abort=agent.abort_event, on_request=request.update,
        session_id=agent.session.id,
    )  # fmt: skip
    msg = await complete(agent.model, ctx, opts)
    if request:
        agent.session.append_custom("ama.request", {"purpose": "summary", **request, "attempt": 1})
    if msg.stop_reason in ("error", "aborted"):
        raise AmaError("summary_failed", f"the summary request failed: {msg.error_message or msg.stop_reason}")
    text = "".join(b.text for b in msg.content if isinstance(b, TextContent)).strip()
    if not text:
        raise AmaError("summary_failed", "the model returned an empty summary")
    return text, msg.usage


async def summarize_from(agent: AgentSession, entry_id: str, instructions: str | None = None) -> dict[str, Any]:
    """Go back to before ``entry_id``, leaving a ``branch_summary`` of the abandoned branch
    (the point and everything after it on the active path); returns the draft to refill."""
    if agent.busy:
        raise Busy("cannot rewind while a run is in progress; abort it first")
    entry = _point(agent, entry_id)
    tree = agent.session.tree
    branch = agent.session.branch()
    start = next(i for i, e in enumerate(branch) if e.id == entry_id)
    abandoned = branch[start:]
    old_leaf = tree.leaf_id
    summary, usage = await summarize(agent, abandoned, instructions, "this abandoned branch of the conversation")
    agent.session.navigate(tree.parent[entry_id])
    bs = agent.session.append_branch_summary(old_leaf, summary, usage=usage)
    recompute_read_files(agent, [])
    agent.emit(event("session_rewound", entryId=entry_id, mode="summarize_from", restored=[], deleted=[], conflicts=[], skipped=[]))
    return {"leafId": bs.id, "draft": draft_of(entry), "summary": summary}


async def summarize_up_to(agent: AgentSession, entry_id: str, instructions: str | None = None) -> dict[str, Any]:
    """Compact everything before ``entry_id`` into a summary (``firstKeptEntryId`` = the
    point); the messages from the point on are kept and the leaf stays at the end."""
    if agent.busy:
        raise Busy("cannot compact while a run is in progress; abort it first")
    _point(agent, entry_id)
    branch: list[Any] = agent.session.branch()
    start = next(i for i, e in enumerate(branch) if e.id == entry_id)
    before = branch[:start]
    tokens_before = sum(
        e.message.usage.input + e.message.usage.cache_read + e.message.usage.output
        for e in branch
        if e.type == "message" and isinstance(e.message, AssistantMessage)
    )
    agent.emit(event("compaction_start", trigger="manual"))
    try:
        summary, usage = await summarize(agent, before, instructions, "the conversation so far")
    except AmaError as err:
        agent.emit(event("compaction_end", trigger="manual", aborted=False, willRetry=False, error=err.message))
        raise
    comp = agent.session.append_compaction(summary, entry_id, tokens_before, usage=usage)
    result = {"summary": summary, "firstKeptEntryId": entry_id, "tokensBefore": tokens_before, "entryId": comp.id}
    agent.emit(event("compaction_end", trigger="manual", result=result, aborted=False, willRetry=False))
    return result
