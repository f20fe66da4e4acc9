"""``--from <id>[#n]``: reuse a user message of an earlier session as a new prompt.

:func:`resolve_from` finds the session (a full id, a unique prefix of 4+ characters, or a
path) and the message: ``#n`` is the numbering of ``ama sessions show`` (every user
message in file order, steer and follow-up included); without ``#n`` the last one.  It
returns the message's text and its images.  A malformed or out-of-range number raises
``InvalidArguments`` (exit 2), a missing session ``NotFound`` (exit 5).
:func:`compose_prompt` appends the extra text given on the command line after a blank line.
"""

from __future__ import annotations

import os
import re

from ama.errors import InvalidArguments, NotFound
from ama.messages import ImageContent

_REF = re.compile(r"^(?P<id>.+?)(?:#(?P<n>[^#]*))?$", re.DOTALL)


class Reused:
    __slots__ = ("text", "images", "session_id", "n", "path")

    def __init__(self, text: str, images: list[ImageContent], session_id: str, n: int, path: str) -> None:
        self.text = text
        self.images = images
        self.session_id = session_id
        self.n = n
        self.path = path

    def __iter__(self):
        # ``text, images, session_id, n = resolve_from(...)``
        return iter((self.text, self.images, self.session_id, self.n))


def resolve_from(sessions_dir: str, ref: str) -> Reused:
    """The user message ``ref`` (``<id>`` or ``<id>#<n>``) names."""
    from ama.session.catalog import resolve
    from ama.session.history import user_messages
    from ama.session.reader import read_session

    m = _REF.match(ref.strip()) if ref else None
    if m is None or not m.group("id"):
        raise InvalidArguments(f"--from: expected <session id>[#<n>], got {ref!r}")
    sid, num = m.group("id"), m.group("n")
    n: int | None = None
    if num is not None:
        if not num.isdigit() or int(num) < 1:
            raise InvalidArguments(f"--from {ref}: #{num} is not a message number (1, 2, ...)")
        n = int(num)
    path = os.path.abspath(sid) if os.path.isfile(sid) else resolve(sessions_dir, sid).path
    try:
        data = read_session(path)
    except FileNotFoundError:
        raise NotFound(f"--from {ref}: session file {path} is gone") from None
    users = user_messages(data.entries)
    if not users:
        raise InvalidArguments(f"--from {ref}: session {sid} has no user messages")
    if n is None:
        n = users[-1].n
    if n > len(users):
        raise InvalidArguments(
            f"--from {ref}: session {data.id[:8]} has {len(users)} user message{'s' if len(users) != 1 else ''} (#1..#{len(users)})"
        )
    u = users[n - 1]
    entry = next(e for e in data.entries if e.id == u.entry_id)
    content = entry.message.content  # type: ignore[union-attr]
    images = [b for b in content if isinstance(b, ImageContent)] if isinstance(content, list) else []
    return Reused(u.text, images, data.id, n, path)


def compose_prompt(text: str, extra: str | None) -> str:
    """The reused text, then the extra text after a blank line (000: ``-p --from id "..."``)."""
    extra = (extra or "").strip()
    if not extra:
        return text
    return f"{text}\n\n{extra}" if text else extra
