"""The system prompt of a new session: ama's instructions, the environment, project notes.

It is written once, as the session's first ``system`` message, and never regenerated for
that session (a resumed session sends the same bytes, so the provider's prompt cache keeps
hitting).  Project notes come from ``AGENTS.md`` / ``CLAUDE.md`` / ``.ama/AGENTS.md`` in the
workspace (first 32 KiB each).
"""

from __future__ import annotations

import os
import platform
from datetime import date

NOTE_FILES = ("AGENTS.md", "CLAUDE.md", os.path.join(".ama", "AGENTS.md"))
NOTE_LIMIT = 32 * 1024

BASE = """You are ama, a coding agent working in the user's repository through tools.

- Read files before changing them; `edit` and `write` refuse files you have not read (or that changed since).
- Prefer `edit` for changes to existing files (exact, unique string replacement) and `write` for new files.
- Use `bash` to build, test and inspect; commands run in the workspace directory. Keep output small (use head, grep).
- Use `grep`, `find` and `ls` to explore instead of shell equivalents when you can.
- Keep a `todo` list for multi-step work and update it as you go.
- Some tool calls need the user's approval; a denied call comes back with the reason. Do not retry a denied call unchanged.
- When you are done, answer briefly: what you changed and how you checked it."""


def project_notes(cwd: str) -> list[tuple[str, str]]:
    out = []
    for name in NOTE_FILES:
        path = os.path.join(cwd, name)
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read(NOTE_LIMIT)
        except OSError:
            continue
        if text.strip():
            out.append((name, text))
    return out


def build_system_prompt(cwd: str, *, today: date | None = None, extra: str | None = None) -> str:
    parts = [BASE]
    env = [
        f"Working directory: {cwd}",
        f"Platform: {platform.system().lower()} ({platform.machine()})",
        f"Date: {(today or date.today()).isoformat()}",
    ]
    if os.path.isdir(os.path.join(cwd, ".git")):
        env.append("The working directory is a git repository.")
    parts.append("# Environment\n" + "\n".join(env))
    for name, text in project_notes(cwd):
        parts.append(f"# Project notes ({name})\n{text.strip()}")
    if extra:
        parts.append(extra.strip())
    return "\n\n".join(parts)
