"""Make session text safe to share: redact credentials, mask the machine's paths, strip
terminal escapes and invisible characters.  Pure functions over strings and JSON values.

Redacted (replaced by ``[REDACTED]``), by shape only -- nothing guarantees every secret is
caught, so read an export before sharing it:

* every token shape of the rule table in ``ama.secret_patterns`` (cloud providers,
  payment, chat, version control, package registries, AI providers, other SaaS, age keys,
  JSON Web Tokens), and the prefix-less secrets recognized by the words before them (an
  AWS secret access key after ``aws_secret_access_key``, an Azure ``AccountKey=``);
* ``Bearer`` / ``Basic`` / ``Token`` credentials; PEM private key blocks (also a cut-off one);
* generic assignments ``<name> = value`` / ``<name>: value`` where the name contains
  ``password``, ``secret``, ``token``, ``api_key``, ``authorization``, ``credential`` ...
  (any value that is not code, a number or a placeholder), or ``key`` / ``auth`` (only a
  high-entropy value);
* credentials in URLs (``https://user:pass@host``);
* in JSON (``json`` / ``jsonl`` exports): every string value under a key that looks secret,
  and secrets in keys themselves.

Paths (``PathMask``): the session's workspace becomes ``<workspace>`` and the home
directory ``~``, where a path starts (not inside a longer name or a URL).

Stripped: ANSI / terminal escape sequences, control characters (except newline and tab)
and invisible Unicode (bidi embeddings, overrides and isolates, zero-width characters,
word joiner, byte-order mark).  Image data (base64) is kept as it is.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from ama.secret_patterns import (
    AUTH_HEADER,
    CONTEXT,
    PEM,
    URL_CREDENTIALS,
    auth_credential,
    entropy,
    sub_tokens,
)

MASK = "[REDACTED]"

#: an identifier that names a credential, then ``:``/``=``/``:=``/``=>``, then the value;
#: matched only where the identifier starts (``_assignments`` finds those places)
_ASSIGN = re.compile(
    r"""
    (?P<k>[A-Za-z0-9_.\-]*?
       (?i:passw(?:or)?d|pwd|passphrase|(?<![a-z0-9])pass(?![a-z])|secret|token|api[_\-]?key|authorization|credentials?|key|auth)
       [A-Za-z0-9_.\-]*)
    (?P<sep>["']?\s*(?:=>|:=|:(?!:)|=(?!=))\s*)
    (?P<v>"[^"\n]*"|'[^'\n]*'|[^\s"',;}\])(\[<>]+)
    """,
    re.VERBOSE,
)
#: names whose value is a secret whatever it looks like (unless code or a placeholder)
_STRONG = re.compile(
    r"(?i)passw(?:or)?d|pwd|passphrase|(?<![a-z0-9])pass(?![a-z])|secret|token|api[_\-]?key|authorization|credential"
)
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_WORD = re.compile(r"[A-Za-z_]+")
_PLACEHOLDER = re.compile(
    r"(?i)(?:|null|none|nil|bearer|basic|true|false|undefined|required|optional|string|str|bool|int|number|\*+|x+|\.+|"
    r"<[^>]*>|\$\{.*|\$[A-Za-z_]\w*|\{\{.*|%[sd]|\[REDACTED\].*|[\d.]+)"
)
_ANSI = re.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]            # CSI
  | \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)  # OSC
  | \x1b[PX^_][^\x1b]*\x1b\\           # DCS, SOS, PM, APC
  | \x1b[@-Z\\-_]                      # two-character sequences
  | \x9b[0-?]*[ -/]*[@-~]              # 8-bit CSI
    """,
    re.VERBOSE,
)
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb]"
)
_SECRET_KEY = re.compile(
    r"(?i)(api[_\-]?key|secret|token|passw(or)?d|passphrase|authorization|credential|private[_\-]?key|cookie|^_auth$)"
)
#: keys whose values are never secrets even though the name says "token" (usage counts)
_NOT_SECRET = re.compile(r"(?i)^(total_?tokens|max_?tokens|tokens_?before|input_?tokens|output_?tokens)$")


def sanitize(text: str) -> str:
    """Strip terminal escapes, control characters (not newline or tab) and invisible Unicode."""
    if not text:
        return text
    if "\x1b" in text or "\x9b" in text:
        text = _ANSI.sub("", text)
    return _INVISIBLE.sub("", text)


def _secret_value(key: str, value: str, quoted: bool, after: str, spaced: bool = False) -> bool:
    """Whether ``value`` (quotes removed), assigned to ``key``, is to be redacted;
    ``spaced``: the ``=`` or ``:`` has a space after it, as in code."""
    if _PLACEHOLDER.fullmatch(value):
        return False
    if not quoted and ((after and after in "([.") or _DOTTED.fullmatch(value)):
        return False  # code: a call, an index, an attribute (``token = self.next()``)
    if _STRONG.search(key):
        # in code, a bare lowercase word is most likely a variable (``password = getpass``)
        return quoted or not (spaced and _WORD.fullmatch(value) and value.islower())
    # ``key`` / ``auth``: only a value that looks random
    return (
        len(value) >= 16
        and entropy(value) >= 3.5
        and any(c.isdigit() for c in value)
        and not value.startswith(("/", "~", "http:", "https:"))
    )


def _assign(m: re.Match[str]) -> str:
    value = m.group("v")
    quoted = value[:1] in ('"', "'")
    inner = value[1:-1] if quoted else value
    after = m.string[m.end() : m.end() + 1]
    if not _secret_value(m.group("k"), inner, quoted, after, m.group("sep")[-1:].isspace()):
        return m.group(0)
    masked = f"{value[0]}{MASK}{value[0]}" if quoted else MASK
    return f"{m.group('k')}{m.group('sep')}{masked}"


#: the words a credential name contains (lowercase), and the characters of a name
_KEYWORDS = ("pass", "pwd", "secret", "token", "key", "auth", "credential")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")


def _assignments(text: str, low: str) -> str:
    """``_ASSIGN`` applied where a name containing a keyword starts.  The keywords are found
    with ``str.find`` on ``low``, the text lowercased (a regex tried at every position of
    the text costs twenty times more)."""
    starts = set()
    for kw in _KEYWORDS:
        i = low.find(kw)
        while i != -1:
            j = i
            while j > 0 and low[j - 1] in _NAME_CHARS:
                j -= 1
            starts.add(j)
            i = low.find(kw, i + len(kw))
    if not starts:
        return text
    out: list[str] = []
    done = 0
    for j in sorted(starts):
        if j < done:
            continue
        m = _ASSIGN.match(text, j)
        if m is None:
            continue
        out += [text[done:j], _assign(m)]
        done = m.end()
    return "".join(out) + text[done:] if out else text


def _ascii_lower(text: str) -> str:
    """``text`` lowercased, ASCII only: one character for one (the positions agree)."""
    return text.encode("ascii", "replace").decode("ascii").lower()


def _at_hints(text: str, low: str, hint: str, rx: re.Pattern[str]) -> str:
    """A context rule (which starts with its ``hint`` word) tried only where the word is
    in ``low`` (the text lowercased): its group ``s`` becomes the mask."""
    i = low.find(hint)
    if i == -1:
        return text
    out: list[str] = []
    done = 0
    while i != -1:
        m = rx.match(text, i) if i >= done else None
        if m is not None:
            start, end = m.span("s")
            out += [text[done:start], MASK]
            done = end
        i = low.find(hint, i + 1)
    return "".join(out) + text[done:] if out else text


#: shorter strings hold no redactable secret (``pw=x`` would be guesswork)
_SHORTEST = 8


def redact(text: str) -> str:
    """Replace credential-shaped parts of ``text`` by ``[REDACTED]``."""
    if len(text) < _SHORTEST:
        return text
    if "PRIVATE KEY" in text:
        text = PEM.sub(MASK, text)
    if "://" in text:
        text = URL_CREDENTIALS.sub(f"://{MASK}@", text)
    low = _ascii_lower(text)
    if "bearer" in low or "basic" in low or "token" in low:
        text = AUTH_HEADER.sub(_auth, text)
        low = _ascii_lower(text)
    for hint, rx in CONTEXT:
        if hint in low:
            text = _at_hints(text, low, hint, rx)
            low = _ascii_lower(text)
    new = sub_tokens(text, MASK)
    if new is not text:
        text, low = new, _ascii_lower(new)
    return _assignments(text, low)


def _auth(m: re.Match[str]) -> str:
    return f"{m.group(1)}{m.group(2)}{MASK}" if auth_credential(m) else m.group(0)


@dataclass(frozen=True)
class PathMask:
    """Replaces the workspace by ``<workspace>`` and the home directory by ``~``."""

    #: (the path, its pattern, what replaces it), the longest path first
    rules: tuple[tuple[str, re.Pattern[str], str], ...] = ()

    @classmethod
    def for_session(cls, cwd: str | None, home: str | None) -> PathMask:
        rules: list[tuple[str, str]] = []
        for path, name in ((cwd, "<workspace>"), (home, "~")):
            if not path:
                continue
            for variant in dict.fromkeys((path.rstrip("/"), os.path.realpath(path).rstrip("/"))):
                if len(variant) > 1 and variant not in {p for p, _ in rules}:
                    rules.append((variant, name))
        rules.sort(key=lambda r: -len(r[0]))  # the longest first: the workspace inside home
        return cls(
            tuple(
                (path, re.compile(r"(?<![\w.\-/~:%@+])" + re.escape(path) + r"(?![\w.\-@+~%])"), name)
                for path, name in rules
            )
        )

    def apply(self, text: str) -> str:
        for path, rx, name in self.rules:
            if path in text:
                text = rx.sub(name, text)
        return text


@dataclass(frozen=True)
class Cleaner:
    """What every exported string goes through: ``sanitize``, the path mask, ``redact``."""

    paths: PathMask = PathMask()

    def __call__(self, text: str) -> str:
        return redact(self.paths.apply(sanitize(text)))

    def json(self, value: Any, *, key: str | None = None) -> Any:
        """A JSON value with every string cleaned, string values under secret-looking keys
        masked whole, and keys cleaned too.  Image blocks' ``data`` (base64) is kept."""
        if isinstance(value, str):
            if key is not None and secret_key(key):
                return MASK
            return self(value)
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, dict):
            image = value.get("type") == "image"
            out = {}
            for k, v in value.items():
                ck = self(k) if isinstance(k, str) else k
                if image and k == "data" and isinstance(v, str):
                    out[ck] = v
                else:
                    out[ck] = self.json(v, key=k if isinstance(k, str) else None)
            return out
        return value


_PLAIN = Cleaner()


def clean(text: str) -> str:
    """``sanitize`` then ``redact`` (no path mask)."""
    return _PLAIN(text)


def secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key)) and not _NOT_SECRET.match(key)


def clean_json(value: Any, *, key: str | None = None) -> Any:
    """``Cleaner().json``: the JSON value cleaned, without a path mask."""
    return _PLAIN.json(value, key=key)
