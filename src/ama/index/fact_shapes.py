"""The shapes of session lines that stats read (``facts.py`` adds up what they say).

* :data:`RELEVANT` matches the start of every line that is *not* positively known to be
  irrelevant from its first bytes (``{"type":"label"``, a ``toolResult`` message, a
  ``custom`` entry of another ``customType``...).  It accepts any JSON whitespace between
  tokens (ama writes compact lines, Python's ``json`` writes ``", "`` and ``": "``) and any
  number of top-level pairs with plain scalar values (no escapes, no nesting) before
  ``type`` and between it and the key that decides (``message`` with its ``role`` first, or
  ``customType``): such pairs keep the match at the top level of the object, so a skipped
  line is irrelevant whatever else it holds.  A line in any other shape (another key order,
  an escape in an id) is simply parsed.
* :data:`LAYOUT` recognises ama's and pi's layout of a message line up to its role.
* ``SLine`` is the lenient shape: any value of any field is accepted, and judged by
  ``facts``.  ``ALine``, ``ULine`` and ``NLine`` are strict shapes of an assistant message,
  a user message and a message that counts for nothing; each accepts only what the lenient
  shape accepts and gives the same values.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import msgspec

#: what a line that cannot be decoded raises (as ``session.reader.DECODE_ERRORS``, which
#: this module does not import: the cold scan stays light)
DECODE_ERRORS: tuple[type[Exception], ...] = (msgspec.DecodeError, RecursionError)

INT_LIMIT = 10**18  # token counts at or beyond it count as 0 (as floats always did)
COST_LIMIT = 10**8  # USD; a cost at or beyond it counts as no price (1e-10 units fit in 64 bits)

_W = rb"[ \t\r]*+"  # JSON whitespace within a line
_SCALAR = rb'(?:null|true|false|"[^"\\\n]*+"|-?[0-9][0-9.eE+-]*+)'


def _pairs(but: bytes) -> bytes:
    """Top-level ``"key": scalar,`` pairs (keys other than ``but``): matching only these
    keeps the match at depth 1; possessive, so that nothing is tried twice."""
    return rb'(?:' + _W + rb'"(?!' + but + rb'")[A-Za-z_]+"' + _W + rb":" + _W + _SCALAR + _W + rb",)*+"


def _key(name: bytes) -> bytes:
    return _W + b'"' + name + b'"' + _W + b":" + _W


#: matches the newline before every line that may matter for stats
RELEVANT = re.compile(
    rb"\n(?!\{" + _pairs(b"type") + _key(b"type") + rb'"(?:'
    rb'message"' + _W + rb"," + _pairs(b"message") + _key(b"message") + rb"\{" + _key(b"role")
    + rb'"(?:toolResult|bashExecution|system|custom)"'
    rb'|(?:label|session_info|thinking_level_change|custom_message|leaf)"'
    rb'|custom"' + _W + rb"," + _pairs(b"customType") + _key(b"customType") + rb'"(?!ama\.request"|ama\.agent-usage")[^"\\\n]*"'
    rb"))"
)



#: ama's and pi's layout of a message line, compact or with Python's spaces, up to the
#: message's role (groups 1, 2, 3).  A match with a role that counts for nothing is a line that
#: :data:`RELEVANT` skips: the same tokens, with fixed keys and spacing (a match ends before
#: the line's newline, so values hold none).
_V = rb'[^"\\]*+'
LAYOUT = re.compile(
    rb'\{"type":(?:'
    rb'"message","id":"' + _V + rb'","parentId":(?:null|"' + _V + rb'"),"timestamp":"' + _V
    + rb'","message":\{"role":"'
    rb'| "message", "id": "' + _V + rb'", "parentId": (?:null|"' + _V + rb'"), "timestamp": "' + _V
    + rb'", "message": \{"role": "'
    rb')(?:(assistant)|(user)|(toolResult|bashExecution|system|custom))"'
)


class _Cost(msgspec.Struct):
    total: Any = 0


class _Usage(msgspec.Struct, rename="camel"):
    input: Any = 0
    output: Any = 0
    cache_read: Any = 0
    cache_write: Any = 0
    cost: _Cost | None = None


class _Block(msgspec.Struct):
    type: Any = None
    name: Any = None


class _Msg(msgspec.Struct, rename="camel"):
    role: Any = None
    provider: Any = ""
    model: Any = ""
    usage: _Usage | None = None
    stop_reason: Any = None
    origin: Any = None
    content: list[_Block] | str | None = None


class Request(msgspec.Struct, rename="camel"):
    purpose: Any = ""
    provider: Any = ""
    model: Any = ""
    channel: Any = None
    first_byte_ms: Any = None
    duration_ms: Any = None
    http_status: Any = None
    attempt: Any = None


class SLine(msgspec.Struct, rename="camel"):
    type: Any = None
    timestamp: Any = None
    message: _Msg | None = None
    kind: Any = None
    provider: Any = ""
    model: Any = ""
    model_id: Any = ""
    channel: Any = None
    usage: _Usage | None = None
    reason: Any = None
    custom_type: Any = None
    data: msgspec.Raw = msgspec.Raw()  # empty when absent


# The strictly typed shapes (the fast paths).  Each one accepts only what the lenient
# shape above accepts (every field the lenient shape validates is validated here at least as
# strictly), and gives the same values: a line that decodes with it counts exactly as the
# lenient shape would count it.  msgspec checks every occurrence of a repeated key, so a
# ``Literal`` ``type`` and ``role`` also mean that no earlier ``type``/``role`` says
# otherwise: such a line is never one that :data:`RELEVANT` skips.  ``gc=False``: plain
# values only, no cycles.
_INT = Annotated[int, msgspec.Meta(gt=-INT_LIMIT, lt=INT_LIMIT)]


class _TCost(msgspec.Struct, gc=False):
    total: Annotated[float, msgspec.Meta(gt=-COST_LIMIT, lt=COST_LIMIT)] = 0.0


class _TUsage(msgspec.Struct, rename="camel", gc=False):
    input: _INT = 0
    output: _INT = 0
    cache_read: _INT = 0
    cache_write: _INT = 0
    cost: _TCost | None = None


class _TBlock(msgspec.Struct, gc=False):
    type: str | None = None
    name: str | None = None


class TAssistant(msgspec.Struct, rename="camel", gc=False):
    role: Literal["assistant"]
    provider: str = ""
    model: str = ""
    usage: _TUsage | None = None
    stop_reason: str | None = None
    content: list[_TBlock] | None = None


class ALine(msgspec.Struct, gc=False):
    """An assistant message line (:func:`_assistant_typed`)."""

    type: Literal["message"]
    timestamp: str
    message: TAssistant
    usage: _Usage | None = None  # (not used: validated as the lenient shape does)


class _AnyBlock(msgspec.Struct, gc=False):
    """Any object (a content block, as the lenient shape requires)."""


class _TUser(msgspec.Struct, gc=False):
    role: Literal["user"]
    origin: str | None = None
    usage: _Usage | None = None  # validated as the lenient shape does
    content: list[_AnyBlock] | str | None = None


class ULine(msgspec.Struct, gc=False):
    """A user message line (:func:`_user`)."""

    type: Literal["message"]
    timestamp: str
    message: _TUser
    usage: _Usage | None = None


class _NMsg(msgspec.Struct, gc=False):
    role: Literal["toolResult", "bashExecution", "system", "custom"]


class NLine(msgspec.Struct, gc=False):
    """A message line that counts for nothing (a tool result...): when it decodes, every
    ``type`` is ``message`` and every role one that stats ignore."""

    type: Literal["message"]
    message: _NMsg


#: the decoders of the shapes
decode_lenient = msgspec.json.Decoder(SLine)
decode_assistant = msgspec.json.Decoder(ALine)
decode_user = msgspec.json.Decoder(ULine)
decode_nothing = msgspec.json.Decoder(NLine)
decode_request = msgspec.json.Decoder(Request)
