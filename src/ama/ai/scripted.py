"""The ``scripted`` provider: replay assistant turns from a JSON or YAML file.

Selected as ``scripted/<path>``.  It serves tests, golden files and the no-key demo, and
never pretends to be a model: its messages say ``api: "scripted"``.  The format is in
docs/providers.md.  Which turn a call gets:

- ``mode: "auto"`` (default): the later of the turn after the last one this process served
  from the file and the turn after the n-th reply, n being the assistant messages already
  in the context (not counting ``error`` ones).  A new process resuming a session
  therefore continues where the conversation is; calls whose context holds no assistant
  messages (e.g. a summary request) just take the next turn.
- ``mode: "sequence"``: the next turn of this process, whatever the context.
- ``mode: "context"``: only the context decides; error turns before a reply are served once
  per process at that position.

``reset(path=None)`` forgets what this process served (all files when ``path`` is None).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ama.ai.builder import MessageBuilder, compact_json
from ama.ai.errors import ProviderError, error_for_status, error_for_type
from ama.ai.events import Event
from ama.ai.types import Context, Model, ModelCost, StreamOptions
from ama.messages import AssistantMessage

_state: dict[str, dict[str, Any]] = {}
_KEYS = {"text", "thinking", "toolCalls", "content", "usage", "stopReason", "error", "chunkSize", "delayMs", "note"}


def reset(path: str | os.PathLike[str] | None = None) -> None:
    if path is None:
        _state.clear()
    else:
        _state.pop(str(Path(path).resolve()), None)


def _fail(path: str, message: str) -> ProviderError:
    return ProviderError("invalid_request", f"scripted: {path}: {message}", provider="scripted")


def load_script(path: str) -> dict[str, Any]:
    """The script as ``{"turns": [...], ...settings}``; raises ProviderError when unusable."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise _fail(path, f"cannot read ({e.strerror or e})") from e
    data: Any
    if path.endswith((".yaml", ".yml")):
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise _fail(path, f"invalid YAML: {e}") from e
    else:
        try:
            data = json.loads(text)
        except ValueError as e:
            raise _fail(path, f"invalid JSON: {e}") from e
    if isinstance(data, list):
        data = {"turns": data}
    if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
        raise _fail(path, 'expected a list of turns or an object with "turns"')
    for n, turn in enumerate(data["turns"]):
        if isinstance(turn, str):
            data["turns"][n] = {"text": turn}
        elif not isinstance(turn, dict):
            raise _fail(path, f"turn {n + 1}: expected an object or a string")
        else:
            unknown = sorted(set(turn) - _KEYS)
            if unknown:
                raise _fail(path, f"turn {n + 1}: unknown key(s) {', '.join(unknown)}")
    return data


def model_for(path: str, provider: str = "scripted") -> Model:
    """The model of a script file (context window and price may come from the file)."""
    window, max_tokens, cost = 200_000, 32_000, None
    try:
        data = load_script(path)
    except ProviderError:
        data = {}
    if isinstance(data.get("contextWindow"), int):
        window = data["contextWindow"]
    if isinstance(data.get("maxTokens"), int):
        max_tokens = data["maxTokens"]
    c = data.get("cost")
    if isinstance(c, dict):
        cost = ModelCost(
            input=float(c.get("input", 0)),
            output=float(c.get("output", 0)),
            cache_read=float(c.get("cacheRead", 0)),
            cache_write=float(c.get("cacheWrite", 0)),
        )
    return Model(
        provider=provider,
        id=path,
        api="scripted",
        base_url=str(Path(path).resolve()),
        context_window=window,
        max_tokens=max_tokens,
        cost=cost,
        channel="scripted",
        reasoning=True,
    )


def _start_of(turns: list[dict], replies: int) -> int:
    """Index of the turn after the ``replies``-th reply (a turn without ``error``)."""
    if replies <= 0:
        return 0
    seen = 0
    for i, t in enumerate(turns):
        if not t.get("error"):
            seen += 1
            if seen == replies:
                return i + 1
    return len(turns) + replies - seen


def pick_turn(path: str, turns: list[dict], context: Context, mode: str) -> int:
    st = _state.setdefault(path, {"cursor": 0, "offsets": {}})
    replies = sum(
        1 for m in context.messages if isinstance(m, AssistantMessage) and m.stop_reason != "error"
    )
    if mode == "sequence":
        idx = st["cursor"]
    elif mode == "context":
        start = _start_of(turns, replies)
        idx = start + st["offsets"].get(start, 0)
        st["offsets"][start] = st["offsets"].get(start, 0) + 1
    else:
        idx = max(st["cursor"], _start_of(turns, replies))
    st["cursor"] = idx + 1
    return idx


def _chunks(text: str, size: int) -> list[str]:
    if size <= 0 or len(text) <= size:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


def _blocks(turn: dict) -> list[tuple[str, Any]]:
    """Ordered (kind, value) blocks: explicit ``content`` or thinking, text, toolCalls."""
    if isinstance(turn.get("content"), list):
        out = []
        for b in turn["content"]:
            t = b.get("type") if isinstance(b, dict) else None
            if t == "text":
                out.append(("text", b.get("text", "")))
            elif t == "thinking":
                out.append(("thinking", b.get("thinking", "")))
            elif t in ("toolCall", "tool_call"):
                out.append(("toolCall", b))
        return out
    out = []
    if turn.get("thinking"):
        out.append(("thinking", turn["thinking"]))
    if turn.get("text"):
        out.append(("text", turn["text"]))
    for call in turn.get("toolCalls") or []:
        out.append(("toolCall", call))
    return out


def _error(turn: dict) -> ProviderError:
    e = turn["error"]
    if isinstance(e, str):
        e = {"message": e}
    message = f"scripted: {e.get('message') or 'error'}"
    status = e.get("status")
    retry_after = e.get("retryAfter")
    if isinstance(status, int):
        err = error_for_status(
            status, message, error_type=e.get("type"), retry_after=retry_after, provider="scripted"
        )
    elif e.get("type") == "network":
        err = ProviderError("network", message, retryable=True, provider="scripted")
    else:
        err = error_for_type(e.get("type"), message, provider="scripted")
        err.retry_after = retry_after
    if isinstance(e.get("retryable"), bool):
        err.retryable = e["retryable"]
        err.data["retryable"] = err.retryable
    return err


async def run(
    model: Model, context: Context, options: StreamOptions, builder: MessageBuilder, api_key: str | None
) -> AsyncIterator[Event]:
    path = model.base_url or str(Path(model.id).resolve())
    builder.requested = True
    data = load_script(path)
    turns = data["turns"]
    idx = pick_turn(path, turns, context, str(data.get("mode", "auto")))
    if idx >= len(turns):
        raise ProviderError(
            "invalid_request",
            f"scripted: {model.id}: no turn {idx + 1} (the script has {len(turns)})",
            provider="scripted",
        )
    turn = turns[idx]
    size = int(turn.get("chunkSize", data.get("chunkSize", 0)) or 0)
    delay = float(turn.get("delayMs", data.get("delayMs", 0)) or 0) / 1000
    builder.mark_first_byte()

    async def pause() -> None:
        if delay > 0:
            await asyncio.sleep(delay)

    calls = 0
    for kind, value in _blocks(turn):
        if kind == "toolCall":
            calls += 1
            call_id = str(value.get("id") or f"call_{idx + 1}_{calls}")
            i, ev = builder.toolcall_start(call_id, str(value.get("name", "")))
            yield ev
            raw = value.get("arguments", {})
            text = raw if isinstance(raw, str) else compact_json(raw)  # as a server that re-encodes sends it
        else:
            i, ev = builder.text_start() if kind == "text" else builder.thinking_start()
            yield ev
            text = "".join(value) if isinstance(value, list) else str(value)
        pieces = value if kind != "toolCall" and isinstance(value, list) else _chunks(text, size)
        for piece in pieces:
            await pause()
            out = builder.delta(i, piece)
            if out:
                yield out
        yield builder.end(i)
    usage = turn.get("usage") or {}
    builder.usage.input = int(usage.get("input", 0))
    builder.usage.output = int(usage.get("output", 0))
    builder.usage.cache_read = int(usage.get("cacheRead", 0))
    builder.usage.cache_write = int(usage.get("cacheWrite", 0))
    if turn.get("error"):
        err = _error(turn)
        builder.http_status = err.http_status
        raise err
    builder.http_status = None
    has_calls = any(isinstance(b, dict) and b.get("type") in ("toolCall", "tool_call") for b in turn.get("content") or [])
    stop = turn.get("stopReason") or ("toolUse" if turn.get("toolCalls") or has_calls else "stop")
    for e in builder.finish(str(stop)):
        yield e
