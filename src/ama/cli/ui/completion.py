"""Input helpers of the full UI: completion of ``/commands`` (with their descriptions) and
``@path`` mentions (fuzzy, from the files ``find`` would list: ignores respected), the
attachment of mentioned files, and large pastes collapsed to a placeholder."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import Any

MAX_FILES = 20_000
MENTIONS_SHOWN = 15
#: a mentioned file larger than this is named, not attached
MAX_ATTACH_BYTES = 256 * 1024
#: a paste with more lines or characters than this becomes ``[Pasted text #N +L lines]``
PASTE_LINES = 10
PASTE_CHARS = 1000

MENTION = re.compile(r"(?:(?<=\s)|^)@([^\s@]+)")
PLACEHOLDER = re.compile(r"\[Pasted text #(\d+) \+\d+ lines\]")


def slash_completions(text: str, names: list[str]) -> list[str]:
    """The command names (without ``/``) that complete ``text`` typed at the prompt: only
    while the first word, starting with ``/``, is being typed."""
    if not text.startswith("/") or any(c.isspace() for c in text):
        return []
    return [n for n in names if n.startswith(text[1:])]


def fuzzy_score(query: str, path: str) -> int | None:
    """None when ``query``'s characters are not in ``path`` in order; else lower is better
    (a match in the file name, at a word start, and a short path rank first)."""
    if not query:
        return len(path)
    q = query.lower()
    p = path.lower()
    base = p.rsplit("/", 1)[-1]
    if q in base:
        return base.index(q) + len(path) // 10
    if q in p:
        return 100 + p.index(q) + len(path) // 10
    pos = -1
    gaps = 0
    for ch in q:
        nxt = p.find(ch, pos + 1)
        if nxt < 0:
            return None
        gaps += nxt - pos - 1
        pos = nxt
    return 1000 + gaps + len(path) // 10


class FileIndex:
    """The project's files (relative paths) for ``@`` mentions, listed at most every 10 s."""

    def __init__(self, cwd: Callable[[], str]) -> None:
        self.cwd = cwd
        self._files: list[str] = []
        self._root = ""
        self._at = 0.0

    def files(self) -> list[str]:
        root = self.cwd()
        if root != self._root or time.monotonic() - self._at > 10:
            from ama.tools._walk import Cancel, list_files

            out = []
            for path in list_files(root, [], Cancel(), use_rg=True):
                out.append(os.path.relpath(path, root).replace(os.sep, "/"))
                if len(out) >= MAX_FILES:
                    break
            self._files, self._root, self._at = sorted(out), root, time.monotonic()
        return self._files

    def match(self, query: str, limit: int = MENTIONS_SHOWN) -> list[str]:
        scored = [(s, f) for f in self.files() if (s := fuzzy_score(query, f)) is not None]
        return [f for _, f in sorted(scored)[:limit]]


def make_completer(commands: Callable[[], list[tuple[str, str]]], files: FileIndex) -> Any:
    from prompt_toolkit.completion import Completer, Completion

    class AmaCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Any:
            text = document.text_before_cursor
            if text.startswith("/") and not any(c.isspace() for c in text):
                for name, desc in commands():
                    if name.startswith(text[1:]):
                        yield Completion("/" + name, start_position=-len(text), display_meta=desc[:60])
                return
            word = text.split()[-1] if text and not text[-1].isspace() else ""
            if word.startswith("@"):
                for f in files.match(word[1:]):
                    yield Completion("@" + f, start_position=-len(word))

    return AmaCompleter()


def attach_mentions(text: str, cwd: str) -> tuple[str, list[str]]:
    """``text`` with each ``@path`` naming a readable text file of the project appended in a
    ``<file>`` block (once each); the paths attached."""
    blocks: list[str] = []
    attached: list[str] = []
    root = os.path.realpath(cwd)
    for m in MENTION.finditer(text):
        rel = m.group(1).rstrip(".,;:!?)")
        path = os.path.realpath(os.path.join(cwd, rel))
        if rel in attached or not (path == root or path.startswith(root + os.sep)) or not os.path.isfile(path):
            continue
        try:
            if os.path.getsize(path) > MAX_ATTACH_BYTES:
                continue
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        attached.append(rel)
        blocks.append(f'<file path="{rel}">\n{data.decode("utf-8", "replace").rstrip()}\n</file>')
    if not blocks:
        return text, []
    return text + "\n\n" + "\n\n".join(blocks), attached


class Pastes:
    """Large pastes shown as ``[Pasted text #N +L lines]`` and expanded on submit."""

    def __init__(self) -> None:
        self.texts: dict[int, str] = {}

    def insert(self, data: str) -> str:
        """What to insert in the input for a paste of ``data``."""
        data = data.replace("\r\n", "\n").replace("\r", "\n")
        lines = data.count("\n") + 1
        if lines <= PASTE_LINES and len(data) <= PASTE_CHARS:
            return data
        n = len(self.texts) + 1
        self.texts[n] = data
        return f"[Pasted text #{n} +{lines} lines]"

    def expand(self, text: str) -> str:
        out = PLACEHOLDER.sub(lambda m: self.texts.get(int(m.group(1)), m.group(0)), text)
        self.texts.clear()
        return out
