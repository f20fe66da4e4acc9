"""ACP prompts in, stop reasons out (pure)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlparse


def _file_path(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def prompt_input(blocks: list[dict[str, Any]]) -> tuple[str, list[dict[str, str]]]:
    """ACP prompt blocks -> (text, images ``{data, mimeType}``).  Text and resource links
    flow inline (a link becomes ``@path``); embedded resources are appended as context."""
    parts: list[str] = []
    context: list[str] = []
    images: list[dict[str, str]] = []
    for b in blocks:
        kind = b.get("type")
        if kind == "text":
            parts.append(b.get("text", ""))
        elif kind == "image":
            images.append({"data": b.get("data", ""), "mimeType": b.get("mimeType", "")})
        elif kind == "resource_link":
            parts.append("@" + _file_path(str(b.get("uri", ""))))
        elif kind == "resource":
            res = b.get("resource") or {}
            uri = str(res.get("uri", ""))
            if isinstance(res.get("text"), str):
                context.append(f'<context ref="@{_file_path(uri)}">\n{res["text"]}\n</context>')
            elif str(res.get("mimeType", "")).startswith("image/") and isinstance(res.get("blob"), str):
                images.append({"data": res["blob"], "mimeType": res["mimeType"]})
            else:
                parts.append("@" + _file_path(uri))
        elif kind == "audio":
            parts.append("[audio attachment omitted: ama does not take audio]")
    text = ""
    for p in parts:
        if text and p and not text[-1].isspace() and not p[0].isspace():
            text += " "
        text += p
    if context:
        text = "\n\n".join([text, *context]) if text else "\n\n".join(context)
    return text, images


def is_refusal(error_message: str | None) -> bool:
    """A reply that ended in ``stopReason: "error"`` without an error text is a model that
    stopped itself (Anthropic's ``refusal``); OpenAI reports it as a content filter."""
    return not error_message or "content filter" in error_message


def stop_reason(status: str, terminal_reason: str | None, last_stop: str | None, error_message: str | None,
                *, cancelled: bool = False) -> str | None:  # fmt: skip
    """A run's end -> ACP ``StopReason``; None for a failure (answered as an error)."""
    if cancelled or status == "CANCELLED":
        return "cancelled"
    if status == "COMPLETED":
        return {"length": "max_tokens", "max_steps": "max_turn_requests"}.get(
            terminal_reason or "", "end_turn"
        )
    if status == "FAILED" and last_stop == "error" and is_refusal(error_message):
        return "refusal"
    return None
