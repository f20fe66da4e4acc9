"""Markdown export: a readable, shareable transcript.

User messages (numbered ``#n`` as ``ama --from`` takes them), assistant text, tool calls
(arguments as JSON, cut at 500 characters) and their results (cut at 2,000 characters),
compaction and branch summaries, model changes, and a usage table at the end.  Thinking
and system messages are left out; images become placeholders.  Every text is cleaned
(``redact.Cleaner``: secrets redacted, paths masked) before it is cut, and code blocks
get a fence longer than any run of backticks inside them.

The document is a small metadata header (including the export time) and a body; the
header carries the SHA-256 of the body, which depends only on the history and the options.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from typing import Any

from ama.export.common import cut, cut_chars, usage_summary
from ama.export.redact import Cleaner
from ama.messages import (
    AssistantMessage,
    BashExecutionMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ama.session.entries import (
    AnyEntry,
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    ModelChangeEntry,
)
from ama.session.reader import SessionData

ARGS_CHARS = 500
RESULT_CHARS = 2000
_TICKS = re.compile(r"`+")
_DATA_URL = re.compile(r"data:([\w.+\-]+/[\w.+\-]+)?(;[\w=\-]+)*;base64,[A-Za-z0-9+/=]{64,}")


def _text(s: str, cl: Cleaner) -> str:
    # data URLs become placeholders first: nothing in them is shown, so nothing needs redacting
    if "base64," in s:
        s = _DATA_URL.sub(lambda m: f"data:{m.group(1) or ''};base64,[{len(m.group(0))} characters]", s)
    return cut(cl(s))


def _fence(body: str, lang: str = "") -> str:
    longest = max((len(m) for m in _TICKS.findall(body)), default=0)
    f = "`" * max(3, longest + 1)
    return f"{f}{lang}\n{body}\n{f}"


def _image(b: ImageContent, cl: Cleaner) -> str:
    size = len(b.data) * 3 // 4
    return f"*[image: {cl(b.mime_type)}, {size / 1024:.0f} KB]*"


def _user_content(content: str | list[Any], cl: Cleaner) -> str:
    if isinstance(content, str):
        return _text(content, cl)
    parts = []
    for b in content:
        if isinstance(b, TextContent):
            parts.append(_text(b.text, cl))
        elif isinstance(b, ImageContent):
            parts.append(_image(b, cl))
    return "\n\n".join(p for p in parts if p)


def _result_text(content: list[Any]) -> tuple[str, int]:
    texts, images = [], 0
    for b in content:
        if isinstance(b, TextContent):
            texts.append(b.text)
        elif isinstance(b, ImageContent):
            images += 1
    return "\n".join(texts), images


def _entry(e: AnyEntry, user_n: dict[str, int], call_names: dict[str, str], cl: Cleaner) -> str | None:
    ts = e.timestamp
    if isinstance(e, MessageEntry):
        m = e.message
        if isinstance(m, UserMessage):
            n = user_n.get(e.id)
            origin = f" · {m.origin}" if isinstance(m.origin, str) else ""
            return f"## #{n} User · {ts}{origin}\n\n{_user_content(m.content, cl)}"
        if isinstance(m, AssistantMessage):
            head = f"## Assistant · {ts} · {cl(m.provider)}/{cl(m.model)}"
            parts = []
            for b in m.content:
                if isinstance(b, TextContent) and b.text.strip():
                    parts.append(_text(b.text, cl))
                elif isinstance(b, ToolCall):
                    call_names[b.id] = b.name
                    args = json.dumps(cl.json(b.arguments), ensure_ascii=False)
                    parts.append(
                        f"**Tool call** `{cl(b.name)}`\n\n" + _fence(cut_chars(args, ARGS_CHARS), "json")
                    )
            if m.stop_reason in ("error", "aborted"):
                why = f": {_text(m.error_message, cl)}" if isinstance(m.error_message, str) else ""
                parts.append(f"*The reply ended with {m.stop_reason}{why}*")
            return head + ("\n\n" + "\n\n".join(parts) if parts else "")
        if isinstance(m, ToolResultMessage):
            text, images = _result_text(m.content)
            name = cl(m.tool_name or call_names.get(m.tool_call_id, "tool"))
            label = "error" if m.is_error else "result"
            body = _fence(cut_chars(cl(text), RESULT_CHARS)) if text else ""
            extra = f"\n\n*[{images} image{'s' if images != 1 else ''}]*" if images else ""
            return f"**Tool {label}** `{name}` · {ts}\n\n{body}{extra}".rstrip()
        if isinstance(m, BashExecutionMessage):
            out = cut_chars(cl(m.output), RESULT_CHARS)
            return f"**Shell** `{_text(m.command, cl)}` · exit {m.exit_code}\n\n" + _fence(out)
        return None  # system, custom and unknown roles
    if isinstance(e, CompactionEntry):
        return f"> **Compaction summary** · {ts} (tokens before: {e.tokens_before})\n>\n" + _quote(
            _text(e.summary, cl)
        )
    if isinstance(e, BranchSummaryEntry):
        return f"> **Branch summary** · {ts}\n>\n" + _quote(_text(e.summary, cl))
    if isinstance(e, ModelChangeEntry):
        ch = f" (channel {cl(e.channel)})" if isinstance(e.channel, str) else ""
        return f"*Model changed to {cl(e.provider)}/{cl(e.model_id)}{ch} · {ts}*"
    if isinstance(e, CustomMessageEntry) and e.display:
        return f"*[{cl(e.custom_type)}]* " + _user_content(e.content, cl)
    return None


def _quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.split("\n"))


def _usage_table(u: dict, cl: Cleaner) -> str:
    rows = [
        "| model | requests | input | output | cache read | cache write | cost |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in [*u["byModel"], {**u, "model": "**total**"}]:
        cost = "—" if r["cost"] is None else f"${r['cost']:.4f}"
        rows.append(
            f"| {cl(r['model'])} | {r['requests']} | {r['input']} | {r['output']} | {r['cacheRead']} | {r['cacheWrite']} | {cost} |"
        )
    return "## Usage\n\n" + "\n".join(rows)


def render(
    data: SessionData,
    chosen: list[AnyEntry],
    user_n: dict[str, int],
    *,
    branch: str,
    leaf_id: str | None,
    name: str | None,
    cl: Cleaner | None = None,
) -> str:
    """The Markdown document (header with the body's hash, then the body)."""
    cl = cl or Cleaner()
    call_names: dict[str, str] = {}
    blocks = [b for b in (_entry(e, user_n, call_names, cl) for e in chosen) if b]
    blocks.append(_usage_table(usage_summary(chosen), cl))
    body = "\n\n".join(blocks) + "\n"
    digest = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()
    h = data.header
    title = cl(name or "") or f"Session {data.id[:8]}"
    scope = f"leaf {leaf_id} ({len(chosen)} entries)" if branch == "leaf" else f"all entries ({len(chosen)})"
    header = [
        f"# {title}",
        "",
        f"- Session: `{data.id}`",
        f"- Project: `{cl(h.cwd) if h else ''}`",
        f"- Created: {h.timestamp if h else ''}",
        f"- Branch: {scope}",
        f"- Exported: {datetime.now(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')} by ama",
        f"- Body SHA-256: `{digest}`",
        "",
        "---",
        "",
        "",
    ]
    return "\n".join(header) + body
