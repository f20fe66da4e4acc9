"""The denial hint: one line appended to a failed sandboxed call whose output looks refused.

A guess from the text -- the same errors have other causes -- hence "If it failed because
of that".  Matching is case-insensitive (``socket: operation not permitted`` from Go,
``EPERM`` from Node, ``Couldn't connect to server`` from curl to an IP address).

A hidden path named in the output (``cat: /home/u/.ssh/id_rsa: No such file or directory``,
``.env`` read as empty) gets a hint of its own: the sandbox hid it, it is not missing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

HINT = (
    "[sandbox: this command ran in ama's OS sandbox ({what}). If it failed because of that, "
    "rerun it with sandbox:false, which needs the user's approval.]"
)
HIDDEN_HINT = (
    "[sandbox: {path} is hidden inside ama's OS sandbox (secrets read as empty or missing there). "
    "If the command needs it, rerun it with sandbox:false, which needs the user's approval.]"
)
WHAT = {"deny": "writes only in workspace/temp, no network", "allow": "writes only in workspace/temp"}

#: output that suggests the sandbox refused something (compared in lower case)
DENIAL_MARKERS: tuple[str, ...] = (
    "Operation not permitted",  # also Go's "socket: operation not permitted"
    "Read-only file system",
    "Permission denied",
    "Device or resource busy",  # mv / rm of a mount point: .git, .ama, hidden paths
    "EPERM",
    "EACCES",
    "EROFS",
    "EBUSY",
)
NETWORK_DENIAL_MARKERS: tuple[str, ...] = (
    "Could not resolve host",
    "Couldn't resolve host",
    "Couldn't connect to server",  # curl to an IP address: no route in the empty namespace
    "Failed to connect to",
    "Temporary failure in name resolution",
    "Name or service not known",
    "nodename nor servname",
    "getaddrinfo",
    "ENOTFOUND",
    "EAI_AGAIN",
    "ECONNREFUSED",
    "Connection refused",
    "Network is unreachable",
    "ENETUNREACH",
    "No route to host",
    "EHOSTUNREACH",
)
SCAN_CHARS = 200_000

_LOWER = tuple(m.lower() for m in DENIAL_MARKERS)
_NET_LOWER = tuple(m.lower() for m in NETWORK_DENIAL_MARKERS)


def _spellings(path: str, home: str | None, workspace: str | None) -> list[str]:
    """How ``path`` may appear in output: absolute, ``~/…``, relative to the workspace."""
    out = [path]
    for base, prefixes in ((workspace, ("", "./")), (home, ("~/",))):
        if base and path.startswith(base.rstrip("/") + "/"):
            rel = path[len(base.rstrip("/")) + 1 :]
            out += [prefix + rel for prefix in prefixes]
    return out


def hidden_mention(
    output: str, hidden: Iterable[str], *, home: str | None = None, workspace: str | None = None
) -> str | None:
    """The first hidden path (as written in ``output``) that ``output`` names, else None."""
    spellings = sorted(
        {s for path in hidden for s in _spellings(path, home, workspace)}, key=len, reverse=True
    )
    if not spellings:
        return None
    pattern = re.compile(
        r"(?<![\w./-])(" + "|".join(re.escape(s) for s in spellings) + r")(?![\w-]|\.\w)"
    )
    m = pattern.search(output)
    return m.group(1) if m else None


def denial_hint(
    output: str,
    exit_code: int,
    *,
    network: str,
    hidden: Iterable[str] = (),
    home: str | None = None,
    workspace: str | None = None,
) -> str | None:
    """The hint line for a sandboxed call's output, or None (success, or nothing refusal-like)."""
    if exit_code == 0:
        return None
    tail = output[-SCAN_CHARS:]
    path = hidden_mention(tail, hidden, home=home or os.path.expanduser("~"), workspace=workspace)
    if path is not None:
        return HIDDEN_HINT.format(path=path)
    lower = tail.lower()
    markers = _LOWER + (_NET_LOWER if network == "deny" else ())
    if any(m in lower for m in markers):
        return HINT.format(what=WHAT.get(network, WHAT["deny"]))
    return None
