"""``get_agents`` entries of the external agents: installed (found on PATH) and version
(``<program> --version``, 3 s timeout), probed in a background thread and cached by program
path and modification time, so a listing never waits for a slow program."""

from __future__ import annotations

import os
import re
import subprocess
import threading
from typing import Any

from ama.agent.external.settings import SettingsError, allow_list, is_allowed, known_agents, spec_for

VERSION_TIMEOUT = 3.0
_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?(?:[-+.][0-9A-Za-z.-]+)?")

_DESCRIPTIONS = {
    "claude": "Claude Code (claude -p, stream-json events)",
    "codex": "Codex CLI (codex exec --json)",
    "acp:ama": "ama itself over the Agent Client Protocol (ama --mode acp)",
}

_lock = threading.Lock()
_versions: dict[tuple[str, float], str | None] = {}
_pending: set[tuple[str, float]] = set()


def _key(path: str) -> tuple[str, float] | None:
    try:
        return path, os.stat(path).st_mtime
    except OSError:
        return None


def parse_version(text: str) -> str | None:
    """The version number in a ``--version`` output (its first line when there is none)."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    m = _VERSION.search(line)
    return m.group() if m else (line[:40] or None)


def probe_version(path: str, timeout: float = VERSION_TIMEOUT) -> str | None:
    try:
        out = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_version(out.stdout or out.stderr)


def _probe_all(keys: list[tuple[str, float]]) -> None:
    for key in keys:
        v = probe_version(key[0])
        with _lock:
            _versions[key] = v
            _pending.discard(key)


def _entry(name: str, config: dict[str, Any], allow: list[str], missing: list[tuple[str, float]]) -> dict[str, Any]:
    from ama import __version__

    spec = spec_for(name, config)
    program = spec.program()
    version: str | None = None
    if program is not None and spec.is_self:
        version = __version__
    elif program is not None:
        key = _key(program[0])
        with _lock:
            if key is not None and key in _versions:
                version = _versions[key]
            elif key is not None and key not in _pending:
                _pending.add(key)
                missing.append(key)
    return {
        "name": name,
        "runner": name,
        "installed": program is not None,
        "version": version,
        "description": _DESCRIPTIONS.get(name, f"ACP agent ({spec.command})"),
        "allowed": is_allowed(name, allow),
    }


def list_external_agents(config: dict[str, Any], *, wait: bool = False) -> list[dict[str, Any]]:
    """claude, codex, acp:ama and the configured ACP agents. Versions not yet probed read
    ``None`` while a background thread runs ``--version`` (``wait=True`` waits for it)."""
    try:
        allow = allow_list(config)
    except SettingsError:
        allow = []
    missing: list[tuple[str, float]] = []
    out = []
    for name in known_agents(config):
        try:
            out.append(_entry(name, config, allow, missing))
        except SettingsError:
            continue
    if missing:
        t = threading.Thread(target=_probe_all, args=(missing,), name="ama-agent-versions", daemon=True)
        t.start()
        if wait:
            t.join()
            return list_external_agents(config)
    return out
