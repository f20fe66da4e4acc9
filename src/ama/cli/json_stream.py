"""A JSON document with one long list, written item by item, in exactly the text
``print_json`` writes (``json.dumps(..., ensure_ascii=False, indent=2)`` and a newline).

``sessions show --json --context`` prints every message of a context that may hold hundreds
of megabytes: built whole (plain objects, then the text) it took three times the session's
size, and ``json``'s indenting encoder is pure Python.  Here each item is encoded by msgspec
and laid out by ``msgspec.json.format``, which keeps every token as written.  msgspec writes
strings, integers and most floats as ``json`` does; a float below 1e-4 or from 1e16 up it
writes otherwise (``0.00001`` for ``1e-05``, ``1e16`` for ``1e+16``), so an item holding
one is encoded by ``json`` (the check: ``ama/json_floats.py``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any, TextIO

import msgspec

from ama.json_floats import holds_odd_float

_enc = msgspec.json.Encoder()


def _compact(obj: Any) -> bytes | None:
    """``obj`` as JSON text that ``msgspec.json.format`` lays out as ``json.dumps`` would;
    None when it holds what is not JSON (``NaN``, ``Infinity``, which ``json`` writes)."""
    if not holds_odd_float(obj):
        return _enc.encode(obj)
    text = json.dumps(msgspec.to_builtins(obj), ensure_ascii=False).encode()
    try:
        msgspec.json.format(text)
    except msgspec.DecodeError:
        return None
    return text


def indented(obj: Any, depth: int = 0) -> str:
    """``json.dumps(msgspec.to_builtins(obj), ensure_ascii=False, indent=2)`` nested at
    ``depth`` levels (each line after the first indented by ``2 * depth`` more spaces)."""
    compact = _compact(obj)
    if compact is None:
        text = json.dumps(msgspec.to_builtins(obj), ensure_ascii=False, indent=2)
    else:
        text = msgspec.json.format(compact, indent=2).decode()
    return text.replace("\n", "\n" + "  " * depth) if depth else text


def write_json_stream(
    head: dict[str, Any],
    key: str,
    items: Iterable[Any],
    tail: dict[str, Any],
    out: TextIO | None = None,
    *,
    batch_bytes: int = 64 << 10,
) -> None:
    """Write ``{**head, key: list(items), **tail}`` (keys in that order) and a newline, as
    ``print_json`` would, holding about ``batch_bytes`` of the items' text at a time (the
    items are laid out together, a batch at a time)."""
    w = (out or sys.stdout).write
    first = True

    def pair(k: str, v: Any) -> None:
        nonlocal first
        w(("{\n  " if first else ",\n  ") + json.dumps(k, ensure_ascii=False) + ": ")
        first = False
        w(indented(v, 1))

    for k, v in head.items():
        if k != key:
            pair(k, v)
    w(("{\n  " if first else ",\n  ") + json.dumps(key, ensure_ascii=False) + ": ")
    first = False
    sep = "[\n"
    batch: list[bytes] = []
    size = 0

    def flush() -> None:
        nonlocal sep, size
        # ``[a,b]`` laid out is "[\n  a,\n  b\n]": its inside, two levels deeper
        text = msgspec.json.format(b"[" + b",".join(batch) + b"]", indent=2).decode()
        w(sep + "  " + text[2:-2].replace("\n", "\n  "))
        sep = ",\n"
        batch.clear()
        size = 0

    for item in items:
        b = _compact(item)
        if b is None:  # laid out by json itself
            if batch:
                flush()
            w(sep + "    " + indented(item, 2))
            sep = ",\n"
            continue
        batch.append(b)
        size += len(b)
        if size >= batch_bytes:
            flush()
    if batch:
        flush()
    w("[]" if sep == "[\n" else "\n  ]")
    for k, v in tail.items():
        if k not in head and k != key:
            pair(k, v)
    w("\n}\n")
