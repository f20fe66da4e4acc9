"""Rewind a session file without a model or a run: ``ama sessions rewind``.

The same rewind as RPC ``rewind`` / ``get_rewind_points`` (agent/session_rewind.py), on a
host that holds only what a rewind needs: the session (opened with its lease, so a session
that another process is writing is refused with ``busy``), the file-checkpoint tracker
built from the workspace's config as the agent builds it, and the ``PostRewind`` hooks.
The note for the model (``ama.rewind-note``) cannot wait for a next prompt in this process,
so it is appended at once, at the new leaf: the next prompt, in whatever process, continues
from it exactly as after an in-process rewind.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ama.agent.events import Event
from ama.agent.session_rewind import MODES, rewind, rewind_points
from ama.errors import InvalidArguments
from ama.session.projection import REWIND_NOTE
from ama.session.store import Session
from ama.tools import ReadFiles


@dataclass
class SessionOnlyHost:
    """A :class:`~ama.agent.session_rewind.RewindHost` over a session file."""

    session: Session
    checkpoints: Any = None
    hooks: Any = None
    read_files: ReadFiles = field(default_factory=ReadFiles)
    pending_notes: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def cwd(self) -> str:
        return self.session.cwd

    @property
    def busy(self) -> bool:
        return False  # the session's lease is ours: no run of another process is in progress

    def emit(self, ev: Event) -> None:
        self.events.append(ev)

    def emit_hook_records(self, outcome: Any) -> None:
        for r in getattr(outcome, "records", ()):
            self.events.append({"type": "hook_executed", **r.to_event()})

    def close(self) -> None:
        self.session.close()


def open_host(path: str, *, write: bool) -> SessionOnlyHost:
    """The host for the session file at ``path``; ``write``: take the lease (``busy`` if
    another process holds it), else read a snapshot."""
    from ama.config import paths
    from ama.config.loader import load_config
    from ama.hooks import parse_hooks

    session = Session.open(path) if write else Session.load(path)
    try:
        cwd = session.cwd
        config = load_config(cwd if os.path.isdir(cwd) else os.getcwd())
        host = SessionOnlyHost(session=session, warnings=list(config.warnings))
        if config.get("checkpoints.mode") != "off":
            from ama.checkpoints import CheckpointTracker

            host.checkpoints = CheckpointTracker(
                session=session,
                cwd=cwd,
                data_dir=str(paths.data_dir()),
                mode=config.get("checkpoints.mode"),
                max_file_bytes=config.get("checkpoints.maxFileBytes"),
                keep=config.get("checkpoints.keep"),
                notify=host.warnings.append,
            )
        hooks = parse_hooks(config.get("hooks"), errors=host.warnings)
        host.hooks = hooks if hooks.hooks else None
    except BaseException:
        session.close()
        raise
    return host


def pick_point(points: list[dict[str, Any]], ref: str | None) -> dict[str, Any]:
    """Rewind point ``#n`` (1-based, as ``--list`` numbers them), an entry id, or the last."""
    if not points:
        raise InvalidArguments("this session has no rewind point (no user message on its current branch)")
    if ref is None:
        return points[-1]
    if ref.isdigit():
        n = int(ref)
        if 1 <= n <= len(points):
            return points[n - 1]
        raise InvalidArguments(f"no rewind point #{ref}: the session has {len(points)} (see --list)")
    for p in points:
        if p["entryId"] == ref:
            return p
    raise InvalidArguments(f"{ref!r} is neither a rewind point number (1-{len(points)}) nor the entry id of one")


def list_points(path: str) -> list[dict[str, Any]]:
    """The rewind points of a session file, numbered ``n`` from 1 (read-only: no lease)."""
    host = open_host(path, write=False)
    try:
        return [{"n": i, **p} for i, p in enumerate(rewind_points(host), 1)]
    finally:
        host.close()


async def rewind_file(
    path: str, ref: str | None, mode: str | None, *, dry_run: bool = False, on_conflict: str = "skip"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Rewind the session file at ``path`` to before point ``ref``; returns ``(point,
    RewindResult)``.  ``mode`` None: ``both`` when the point has a checkpoint, else
    ``conversation``."""
    if mode is not None and mode not in MODES:
        raise InvalidArguments(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    host = open_host(path, write=not dry_run)
    try:
        points = [{"n": i, **p} for i, p in enumerate(rewind_points(host), 1)]
        point = pick_point(points, ref)
        chosen = mode or ("both" if point["hasCheckpoint"] else "conversation")
        result = await rewind(host, point["entryId"], chosen, dry_run=dry_run, on_conflict=on_conflict)
        if not dry_run:
            for note in host.pending_notes:
                host.session.append_custom_message(REWIND_NOTE, note, display=False)
            host.pending_notes.clear()
        return {**point, "mode": chosen}, result
    finally:
        host.close()


__all__ = ["SessionOnlyHost", "list_points", "open_host", "pick_point", "rewind_file"]
