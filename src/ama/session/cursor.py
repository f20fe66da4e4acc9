"""Opaque, scope-bound page cursors for the session catalog.

A cursor is canonical unpadded base64url of compact JSON::

    {"v": 1, "scope": {...}, "after": [lastMessageMs, cwd, id], "sig": "<12 hex>"}

``scope`` is the query's domain (workspace or all, archived, include sub-agents).  A cursor
from another scope is refused, never "continued approximately"; a cursor that is not
canonical, not decodable, or whose ``sig`` (a digest of the rest) does not match was
tampered with and is refused too.
"""

from __future__ import annotations

import base64
import json

from ama.errors import InvalidArguments

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:
    from typing import Any

try:
    from _sha256 import sha256  # the same digest as hashlib's, without its OpenSSL import (~5 ms)
except ImportError:  # pragma: no cover
    from hashlib import sha256

SortKey = tuple[int, str, str]  # (lastMessageMs, cwd, id); order: ms DESC, cwd ASC, id ASC


def sort_key(last_ms: int, cwd: str, sid: str) -> tuple[int, str, str]:
    """A key for ``sorted`` giving the catalog order."""
    return (-last_ms, cwd, sid)


def _sig(payload: dict[str, Any]) -> str:
    body = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return sha256(b"ama-cursor\0" + body.encode()).hexdigest()[:12]


def encode_cursor(scope: dict[str, Any], after: SortKey) -> str:
    payload = {"v": 1, "scope": scope, "after": list(after)}
    payload["sig"] = _sig(payload)
    raw = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode_cursor(cursor: str, scope: dict[str, Any]) -> SortKey:
    bad = InvalidArguments(f"invalid cursor {cursor!r}: it was not produced by this query (damaged or edited)")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        if base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii") != cursor:
            raise bad
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise bad from None
    if not isinstance(payload, dict) or payload.get("v") != 1:
        raise bad
    sig = payload.pop("sig", None)
    if sig != _sig(payload):
        raise bad
    canonical = json.dumps({**payload, "sig": sig}, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    if canonical != raw:
        raise bad
    if payload.get("scope") != scope:
        theirs = payload.get("scope") or {}
        diffs = [f"{k}={theirs.get(k)!r} (now {v!r})" for k, v in scope.items() if theirs.get(k) != v]
        raise InvalidArguments(
            "cursor belongs to a different query: " + ", ".join(diffs) + "; start again without --cursor"
        )
    after = payload.get("after")
    if (
        not isinstance(after, list)
        or len(after) != 3
        or not isinstance(after[0], int)
        or not isinstance(after[1], str)
        or not isinstance(after[2], str)
    ):
        raise bad
    return (after[0], after[1], after[2])
