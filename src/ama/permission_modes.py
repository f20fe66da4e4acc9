"""The permission modes, in the one order every interface shows and cycles them.

Kept apart from ``ama.permissions`` (the pipeline, ~70 ms to import) so that the command line
can offer the choices without loading it.  ``next_mode`` is what Shift-Tab steps through.
"""

from __future__ import annotations

#: Strictest first: plan (read-only) … full-auto (everything but the dangerous table).
PERMISSION_MODES: tuple[str, ...] = ("plan", "allowlist", "default", "auto-edit", "auto", "full-auto")

#: A display name and one line per mode, for menus (ACP session modes, the UI).
LABELS: dict[str, tuple[str, str]] = {
    "plan": ("Plan", "Read-only: no edits, no commands"),
    "allowlist": ("Allowlist", "Ask for everything not allowed by a rule"),
    "default": ("Default", "Ask before edits and commands"),
    "auto-edit": ("Auto-edit", "Edit files in the workspace without asking; ask for commands"),
    "auto": ("Auto", "Rules and a static check decide, a small model judges the rest; risky calls ask"),
    "full-auto": ("Full auto", "Run everything without asking (dangerous commands still ask)"),
}


def next_mode(mode: str) -> str:
    """The mode after ``mode`` in ``PERMISSION_MODES``, wrapping around (an unknown mode: the first)."""
    if mode not in PERMISSION_MODES:
        return PERMISSION_MODES[0]
    return PERMISSION_MODES[(PERMISSION_MODES.index(mode) + 1) % len(PERMISSION_MODES)]
