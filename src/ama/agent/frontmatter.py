"""Front matter of Markdown files (prompt templates, skills): a small, strict YAML subset.

    ---
    description: Review the staged diff
    argument-hint: "[focus]"
    allowed-tools: [read, grep]
    ---
    body ...

Supported: ``key: value`` lines (``#`` comments and blank lines skipped), values plain,
single- or double-quoted, ``[a, b]`` lists, and ``>`` / ``|`` block scalars or indented
continuation lines.  Anything else is an error naming the file and line, so a typo never
silently drops a field.  A file without a leading ``---`` line has no front matter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ama.errors import InvalidArguments

_KEY = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?:\s+(.*))?$")

Value = str | list[str]


class FrontMatterError(InvalidArguments):
    """A malformed file: ``path:line: what``."""

    def __init__(self, path: str, line: int, what: str) -> None:
        super().__init__(f"{path}:{line}: {what}")
        self.path = path
        self.line = line


@dataclass(frozen=True)
class Document:
    meta: dict[str, Value]
    body: str
    #: 1-based line number of the body's first line in the file
    body_line: int
    #: the line each key is on
    key_lines: dict[str, int]

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, 1)


def _scalar(raw: str, path: str, line: int) -> Value:
    raw = raw.strip()
    if not raw:
        return ""
    if raw[0] in "\"'":
        q = raw[0]
        if len(raw) < 2 or not raw.endswith(q):
            raise FrontMatterError(path, line, f"unterminated {q}-quoted value: {raw}")
        inner = raw[1:-1]
        if q == '"':
            return inner.replace('\\"', '"').replace("\\\\", "\\").replace("\\n", "\n")
        return inner.replace("''", "'")
    if raw.startswith("["):
        if not raw.endswith("]"):
            raise FrontMatterError(path, line, f"unterminated list: {raw}")
        items = [s.strip() for s in raw[1:-1].split(",") if s.strip()]
        return [str(_scalar(s, path, line)) for s in items]
    if " #" in raw:  # a trailing comment
        raw = raw.split(" #", 1)[0].rstrip()
    return raw


def parse(text: str, path: str) -> Document:
    """Split ``text`` (the contents of ``path``) into front matter and body."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r").strip() != "---":
        return Document({}, text, 1, {})
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r").strip() in ("---", "...")), None)
    if end is None:
        raise FrontMatterError(path, 1, "front matter opened with --- is never closed (add a --- line after it)")
    meta: dict[str, Value] = {}
    key_lines: dict[str, int] = {}
    key: str | None = None
    block: list[str] | None = None  # continuation lines of ``key``
    fold = " "

    def flush() -> None:
        nonlocal block
        if key is not None and block is not None:
            joined = fold.join(block) if fold == " " else "\n".join(block)
            first = meta.get(key)
            meta[key] = (f"{first} {joined}" if fold == " " else f"{first}\n{joined}").strip() if first else joined.strip()
        block = None

    for i in range(1, end):
        raw = lines[i].rstrip("\r")
        n = i + 1
        if raw[:1] in (" ", "\t") and key is not None and raw.strip():
            if raw.strip().startswith("- ") and block is None and meta.get(key) == "":
                meta[key] = []
            value = meta.get(key)
            if isinstance(value, list) and raw.strip().startswith("- "):
                value.append(str(_scalar(raw.strip()[2:], path, n)))
                continue
            if isinstance(value, list):
                raise FrontMatterError(path, n, f"unexpected indented line under list {key!r}: {raw.strip()}")
            block = (block or []) + [raw.strip()]
            continue
        if not raw.strip() or raw.lstrip().startswith("#"):
            if block is not None:
                block.append("")
            continue
        flush()
        m = _KEY.match(raw)
        if m is None:
            raise FrontMatterError(path, n, f"expected 'key: value', got {raw.strip()!r}")
        key = m.group(1)
        if key in meta:
            raise FrontMatterError(path, n, f"duplicate key {key!r}")
        key_lines[key] = n
        value_text = (m.group(2) or "").strip()
        if value_text in (">", ">-", "|", "|-"):
            fold = " " if value_text.startswith(">") else "\n"
            meta[key] = ""
            block = []
        else:
            fold = " "
            meta[key] = _scalar(value_text, path, n)
    flush()
    body = "\n".join(lines[end + 1 :])
    return Document(meta, body, end + 2, key_lines)


def text_field(doc: Document, key: str, path: str) -> str | None:
    """A string field, or None when absent; a list where a string belongs is an error."""
    value = doc.meta.get(key)
    if value is None:
        return None
    if isinstance(value, list):
        raise FrontMatterError(path, doc.line_of(key), f"{key!r} must be a string, not a list")
    return value


__all__ = ["Document", "FrontMatterError", "parse", "text_field"]


#: the largest Markdown file with front matter ama reads (skills, agents, templates)
MAX_FILE_BYTES = 256 * 1024


def read_text_file(path: str, max_bytes: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of a small Markdown file (BOM dropped); ``InvalidArguments`` naming the
    path when it cannot be read, is too big, is not UTF-8, or is not a regular file (a FIFO
    would block the reader)."""
    from ama.session.reader import open_regular

    try:
        with open_regular(path) as f:
            raw = f.read(max_bytes + 1)
    except OSError as e:
        raise InvalidArguments(f"{path}: cannot read: {e.strerror or e}") from None
    if len(raw) > max_bytes:
        raise InvalidArguments(f"{path}: larger than {max_bytes // 1024} KiB")
    try:
        return raw.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError as e:
        raise InvalidArguments(f"{path}: not UTF-8 text (byte {e.start})") from None


def parse_file(path: str, max_bytes: int = MAX_FILE_BYTES) -> Document:
    """:func:`read_text_file` and :func:`parse`, requiring front matter."""
    doc = parse(read_text_file(path, max_bytes), path)
    if not doc.meta:
        raise FrontMatterError(path, 1, "no front matter: start the file with ---, name: and description: lines")
    return doc
