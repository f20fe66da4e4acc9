"""Load msgspec without ``typing_extensions`` (a cold ``ama stats`` imports this first).

msgspec tries ``typing_extensions`` for ``get_type_hints``, ``Required`` and
``NotRequired``, which Python 3.11's ``typing`` has, and falls back to ``typing`` when the
import fails.  Loading ``typing_extensions`` (and ``inspect``, ``ast``, ``dis``,
``tokenize`` under it) is about 10 ms of a process that scans for ~150 ms, before its
first byte is read.  So, when neither is loaded yet, msgspec is imported while
``typing_extensions`` is hidden, and the name is given back right after: a later
``import typing_extensions`` works as usual.  ama uses no ``typing_extensions`` types
with msgspec.  When msgspec is already loaded, this does nothing.
"""

from __future__ import annotations

import sys

if "msgspec" not in sys.modules and "typing_extensions" not in sys.modules:
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]  # (import fails)
    try:
        import msgspec  # noqa: F401
    finally:
        del sys.modules["typing_extensions"]
