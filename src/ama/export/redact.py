"""Make session text safe to share: redact credentials, strip terminal escapes and
invisible characters.  Pure functions over strings and JSON values.

Redacted (replaced by ``[REDACTED]``), by shape only -- nothing guarantees every secret is
caught, so read an export before sharing it:

* API keys and tokens: ``sk-…`` (incl. ``sk-ant-…``), ``ghp_…`` (and the other ``gh?_``
  GitHub tokens), ``github_pat_…``, Slack ``xox?-…``, Google ``AIza…``, AWS ``AKIA…`` /
  ``ASIA…``, ``npm_…``, JSON Web Tokens;
* ``Bearer`` / ``Basic`` credentials; PEM private key blocks (also a cut-off one);
* the value after ``apiKey`` / ``api_key`` / ``secret`` / ``token`` / ``password`` /
  ``authorization`` followed by ``:`` or ``=``;
* credentials in URLs (``https://user:pass@host``);
* in JSON (``json`` / ``jsonl`` exports): every string value under a key that looks secret,
  and secrets in keys themselves.

Stripped: ANSI / terminal escape sequences, control characters (except newline and tab)
and invisible Unicode (bidi embeddings, overrides and isolates, zero-width characters,
word joiner, byte-order mark).  Image data (base64) is kept as it is.
"""

from __future__ import annotations

import re
from typing import Any

MASK = "[REDACTED]"

_TOKENS = re.compile(
    r"""
    (?<![A-Za-z0-9_\-])
    (?:
    sk-ant-[A-Za-z0-9_\-]{8,}
  | sk-[A-Za-z0-9_\-]{16,}
  | github_pat_[A-Za-z0-9_]{20,}
  | gh[pousr]_[A-Za-z0-9]{20,}
  | xox[abposr]-[A-Za-z0-9\-]{10,}
  | AIza[0-9A-Za-z_\-]{30,}
  | (?:AKIA|ASIA)[0-9A-Z]{16}
  | npm_[A-Za-z0-9]{30,}
  | eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}
    )
    """,
    re.VERBOSE,
)
_AUTH = re.compile(r"\b(Bearer|Basic)(\s+)[A-Za-z0-9._~+/=\-]{6,}", re.IGNORECASE)
_PEM = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY-----|.*\Z)", re.DOTALL
)
_ASSIGN = re.compile(
    r"""(?ix)
    (\b[\w.\-]*?(?:api[_\-]?key|secret(?:[_\-]?key)?|token|password|passwd|authorization))  # the key
    (?![A-Za-z0-9])
    (["']?\s*[:=]\s*)                                                                # : or =
    (?!\[REDACTED\])
    ("[^"\n]*"|'[^'\n]*'|[^\s"',;}\]]+)                                              # the value
    """
)
_URL_CREDS = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^\s/:@]+):([^\s/@]+)@")
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
    r"(?i)(api[_\-]?key|secret|token|passw(or)?d|authorization|credential|private[_\-]?key|cookie)"
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


def _assign(m: re.Match[str]) -> str:
    value = m.group(3)
    if value.startswith(('"', "'")):
        return f"{m.group(1)}{m.group(2)}{value[0]}{MASK}{value[0]}"
    return f"{m.group(1)}{m.group(2)}{MASK}"


def redact(text: str) -> str:
    """Replace credential-shaped parts of ``text`` by ``[REDACTED]``."""
    if not text:
        return text
    text = _PEM.sub(MASK, text)
    text = _URL_CREDS.sub(lambda m: f"{m.group(1)}{MASK}@", text)
    text = _AUTH.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)
    text = _TOKENS.sub(MASK, text)
    return _ASSIGN.sub(_assign, text)


def clean(text: str) -> str:
    """``sanitize`` then ``redact``: what every exported string goes through."""
    return redact(sanitize(text))


def secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key)) and not _NOT_SECRET.match(key)


def clean_json(value: Any, *, key: str | None = None) -> Any:
    """A JSON value with every string cleaned, string values under secret-looking keys
    masked whole, and keys cleaned too.  Image blocks' ``data`` (base64) is kept."""
    if isinstance(value, str):
        if key is not None and secret_key(key):
            return MASK
        return clean(value)
    if isinstance(value, list):
        return [clean_json(v) for v in value]
    if isinstance(value, dict):
        image = value.get("type") == "image"
        out = {}
        for k, v in value.items():
            ck = clean(k) if isinstance(k, str) else k
            if image and k == "data" and isinstance(v, str):
                out[ck] = v
            else:
                out[ck] = clean_json(v, key=k if isinstance(k, str) else None)
        return out
    return value
