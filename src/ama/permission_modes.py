"""The permission modes, in the one order every interface shows and cycles them.

Kept apart from ``ama.permissions`` (the pipeline, ~70 ms to import) so that the command line
can offer the choices without loading it.  ``next_mode`` is what Shift-Tab steps through
in the terminal (``CYCLE``).
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


#: What Shift-Tab steps through: the everyday modes.  A mode outside them (the one the session
#: started in, e.g. full-auto or allowlist) joins the cycle at its end, so it is never left for good.
CYCLE: tuple[str, ...] = ("default", "auto-edit", "auto", "plan")


def next_mode(current: str, started: str | None = None) -> str:
    """The mode after ``current`` in ``CYCLE`` (plus ``started`` and ``current`` when outside it)."""
    cycle = list(CYCLE)
    for extra in (started, current):
        if extra is not None and extra not in cycle:
            cycle.append(extra)
    return cycle[(cycle.index(current) + 1) % len(cycle)]
