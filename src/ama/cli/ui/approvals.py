"""Approval prompts in the terminal.

The prompt shows the call, why it is asked, and its preview (``permission_request.preview``):
a coloured unified diff for ``edit`` / ``write``, the command and the sandbox status for
``bash``.  The full UI answers by single key — ``y`` yes, ``n`` no (then an optional reason
for the model), ``a`` always for this session (the rule added is printed), Esc deny and
interrupt — and takes keys only once the key hint line is printed, a short grace period
after the prompt appears: what was being typed before stays in the draft of the next input
instead of answering.  The line UI
reads a line (``y`` / ``a`` / ``n`` / a reason).
"""

from __future__ import annotations

import asyncio
from typing import Any

from ama.cli.render import Renderer, call_summary
from ama.cli.ui.diffview import full_diff
from ama.cli.ui.glyphs import G
from ama.permissions import Answer

#: keys typed within this time after a prompt appears do not answer it
GRACE_S = 0.4

KEYS_HINT = "y yes · n no (+ reason) · a always this session · Esc deny and interrupt"


def approval_lines(req: dict[str, Any], style: Any) -> list[str]:
    lines = [style("? ", "33") + f"allow {call_summary(req['toolName'], req.get('input') or {}, 200)}"]
    if req.get("message"):
        lines.append(style(f"  {req['message']}", "2"))
    pv = req.get("preview") or {}
    if pv.get("kind") == "diff":
        lines.append(style(f"  {pv.get('path', '')}" + (" (new file)" if pv.get("created") else ""), "1"))
        lines += full_diff(pv.get("diff") or "", style, indent="  ")
    elif pv.get("kind") == "command":
        lines.append("  $ " + style(pv.get("command", ""), "1"))
        if pv.get("sandboxed"):
            net = pv.get("network")
            sandbox = f"runs in the {pv.get('sandbox')} sandbox" + (f" · network {net}" if net else "")
        else:
            sandbox = f"runs without the OS sandbox (sandbox: {pv.get('sandbox', 'none')})"
        lines.append(style(f"  {sandbox}" + (" · in the background" if pv.get("background") else ""), "2"))
    return lines


class UiBroker:
    """The approval broker of the interactive modes."""

    def __init__(self, ui: Any, renderer: Renderer) -> None:
        self.ui = ui
        self.renderer = renderer
        self.agent: Any = None  # set once the agent is built

    async def ask(self, req: dict[str, Any]) -> Answer:
        r = self.renderer
        r.suspend()
        try:
            for line in approval_lines(req, r.style):
                r.line(line)
            if getattr(self.ui, "full", False) and getattr(self.ui, "watching", False):
                return await self._by_key(req)
            return await self._by_line(req)
        finally:
            r.resume()

    async def _by_key(self, req: dict[str, Any]) -> Answer:
        r = self.renderer
        choice = self.ui.key_choice(GRACE_S)  # keys pressed before the hint is shown are typed ahead
        try:
            await asyncio.sleep(GRACE_S)
            r.line(r.style(f"  {KEYS_HINT}", "33"))
            key = await choice
        finally:
            choice.cancel()  # interrupted (Ctrl-C, timeout): later keys are typed ahead again
        if key == "y":
            r.line(r.style(f"  {G.ok} allowed once", "32"))
            return Answer("allow_once")
        if key == "a":
            self._show_rule(req)
            return Answer("allow_session")
        if key == "n":
            with self.ui.paused():
                reason = await self.ui.read("  reason for the model (Enter for none): ")
            r.line(r.style(f"  {G.no} denied", "31"))
            return Answer("deny", (reason or "").strip())
        r.line(r.style(f"  {G.no} denied; interrupting", "31"))
        return Answer("deny")

    async def _by_line(self, req: dict[str, Any]) -> Answer:
        with self.ui.paused():
            while True:
                reply = await self.ui.read("  [y]es / [a]lways this session / [n]o (or type a reason): ")
                if reply is None:
                    return Answer("deny")
                text = reply.strip()
                low = text.lower()
                if low in ("y", "yes"):
                    return Answer("allow_once")
                if low in ("a", "always"):
                    self._show_rule(req)
                    return Answer("allow_session")
                if low in ("n", "no"):
                    return Answer("deny")
                if text:
                    return Answer("deny", text)

    def _show_rule(self, req: dict[str, Any]) -> None:
        """Print the session rule(s) the answer adds (``permission_request.sessionRules``)."""
        r = self.renderer
        rules = req.get("sessionRules") or []
        if rules:
            r.line(r.style(f"  {G.ok} always allowed this session: " + ", ".join(rules), "32"))
        else:
            r.line(r.style(f"  {G.ok} allowed (no reusable rule for this call)", "32"))
