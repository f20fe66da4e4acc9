"""The environment a bash command sees: the user's, without credentials.

A variable is dropped when its *name* says it holds a credential (``*PASS*``, ``*_AUTH*``,
``*SECRET*``, ``*TOKEN*``, ``*KEY*``, ``*CREDENTIAL*``, or a name in ``deny`` such as
the configured providers' key variables), or when its *value* looks like one: a URL with a
password (``DATABASE_URL=postgres://u:pw@db``), a PEM private key, a ``Bearer`` credential,
or any token shape of ``ama.secret_patterns`` (``MY_VAR=ghp_…``).  ``allow``
(``sandbox.envAllow``) keeps a variable on purpose, whatever its name or value.  A few
well-known names that match a pattern but hold no secret (``SSH_AUTH_SOCK``, ``*ASKPASS*``,
``TOKENIZERS_PARALLELISM``, ...) are kept by name; their values are still checked.

This runs in ``tools/`` for every bash call, sandboxed or not: ``sandbox/`` may import
only the standard library, so it cannot use the shared pattern table; it still drops its
own name list, and the sandboxed environment it returns is scrubbed again here.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Iterable, Mapping

#: names that hold credentials (matched case-insensitively, fnmatch globs)
NAME_PATTERNS: tuple[str, ...] = ("*PASS*", "*_AUTH*", "*SECRET*", "*TOKEN*", "*KEY*", "*CREDENTIAL*")
#: names that match ``NAME_PATTERNS`` but hold no secret (a socket, a program, a flag)
BENIGN_NAMES: tuple[str, ...] = (
    "SSH_AUTH_SOCK",
    "*ASKPASS*",  # SSH_ASKPASS, GIT_ASKPASS, VSCODE_GIT_ASKPASS_NODE: programs that ask the user
    "TOKENIZERS_PARALLELISM",
    "KEYTIMEOUT",
    "GNOME_KEYRING_CONTROL",
    "PASSWORD_STORE_DIR",
)


@functools.lru_cache(maxsize=32)
def _globs(patterns: tuple[str, ...], fold: bool) -> re.Pattern[str] | None:
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(p.upper() if fold else p)})" for p in patterns))


def _match(patterns: Iterable[str], name: str, *, fold: bool = True) -> bool:
    rx = _globs(tuple(patterns), fold)
    return rx is not None and rx.match(name.upper() if fold else name) is not None


def credential_reason(name: str, value: str, deny: Iterable[str] = ()) -> str | None:
    """Why the variable ``name=value`` is a credential ("name", "value: <rule>"), or None."""
    return _reason(name, value, tuple(deny))


@functools.lru_cache(maxsize=4096)
def _reason(name: str, value: str, deny: tuple[str, ...]) -> str | None:
    """Cached: every bash command sees nearly the same environment as the previous one."""
    if _match(deny, name, fold=False) or (_match(NAME_PATTERNS, name) and not _match(BENIGN_NAMES, name)):
        return "name"
    from ama.secret_patterns import looks_secret  # its ~60 rules compile at the first bash command

    rule = looks_secret(value)
    return f"value: {rule}" if rule else None


def scrub_env(
    env: Mapping[str, str], allow: Iterable[str] = (), deny: Iterable[str] = ()
) -> tuple[dict[str, str], dict[str, str]]:
    """``(kept, removed)``: ``env`` without credential variables, and the removed names
    with the reason.  ``allow``: names or globs kept anyway (case-sensitive)."""
    allowed = _globs(tuple(allow), False)
    deny = tuple(deny)
    kept: dict[str, str] = {}
    removed: dict[str, str] = {}
    for name, value in env.items():
        reason = None if allowed is not None and allowed.match(name) else _reason(name, value, deny)
        if reason is None:
            kept[name] = value
        else:
            removed[name] = reason
    return kept, removed
