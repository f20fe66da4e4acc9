"""The stats facts of session lines (docs/stats.md, "Definitions").

:func:`handle` reads one line and adds to a :class:`Facts` (sums per local day and
endpoint): requests by kind, tokens, cost, errors, retries, turns, tool calls, and one
latency row per ``ama.request`` record.  It keeps the little it needs across lines in a
:class:`StatsState` (latest ``model_change``, latest endpoint, the open turn), which the
index stores with the file so that an appended file continues where it stopped.

Which lines count: every line that :data:`RELEVANT` does not skip, as :func:`handle` reads
it.  :data:`RELEVANT` matches the start of every line that is *not* positively known to be
irrelevant from its first bytes (``{"type":"label"``, a ``toolResult`` message, a
``custom`` entry of another ``customType``...).  The pattern accepts any JSON whitespace
between tokens (ama writes compact lines, Python's ``json`` writes ``", "`` and ``": "``)
and any number of top-level pairs with plain scalar values (no escapes, no nesting) before
``type`` and between it and the key that decides (``message`` with its ``role`` first, or
``customType``): such pairs keep the match at the top level of the object, so a skipped line
is irrelevant whatever else it holds.  A line in any other shape (another key order, an
escape in an id) is simply parsed.

:func:`handle` decodes a line with the lenient shape (``_SLine``: any value of any field is
accepted and judged) unless one of the strictly typed shapes takes it first: an assistant or
user message, or a message that counts for nothing (a tool result), recognised by its first
``"role"``.  A strict shape accepts only what the lenient shape accepts and gives the same
values, so it changes the speed, never the answer (tests/index/test_facts_fast.py checks it
on random lines).

:func:`scan_facts` is the scan's way through a whole file, line by line with ``bytes.find``;
a line in the layout ama and pi write (``type``, ``id``, ``parentId``, ``timestamp``,
``message`` with its ``role`` first, compact or with Python's spaces) is recognised by one
anchored pattern (:data:`_LAYOUT`): a tool result is skipped there (the pattern is a special
case of what :data:`RELEVANT` skips), an assistant or user message goes straight to its
strict shape; any other line takes the way the index takes (:data:`RELEVANT`, then
:func:`handle`).

Cost is summed in integer units of 1e-10 USD so that sums do not depend on the order of
additions (the index adds per appended chunk, a scan per file).  Token counts of 10^18 or
more and costs of 10^8 USD or more are treated as absent (they would not fit the index's
64-bit integers).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Annotated, Any, Literal

import msgspec

from ama.index.rows import (
    COST_SCALE,
    R_CACHE_READ,
    R_CACHE_WRITE,
    R_COST,
    R_ERRORS,
    R_INPUT,
    R_OUTPUT,
    R_PRICED,
    R_REQUESTS,
    R_RETRIES,
)
from ama.index.timeutil import Days, ts_ms
from ama.session.external_usage import USAGE_RECORD, usage_row

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
_LAYOUT = re.compile(
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


class _Request(msgspec.Struct, rename="camel"):
    purpose: Any = ""
    provider: Any = ""
    model: Any = ""
    channel: Any = None
    first_byte_ms: Any = None
    duration_ms: Any = None
    http_status: Any = None
    attempt: Any = None


class _SLine(msgspec.Struct, rename="camel"):
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


class _TAssistant(msgspec.Struct, rename="camel", gc=False):
    role: Literal["assistant"]
    provider: str = ""
    model: str = ""
    usage: _TUsage | None = None
    stop_reason: str | None = None
    content: list[_TBlock] | None = None


class _ALine(msgspec.Struct, gc=False):
    """An assistant message line (:func:`_assistant_typed`)."""

    type: Literal["message"]
    timestamp: str
    message: _TAssistant
    usage: _Usage | None = None  # (not used: validated as the lenient shape does)


class _AnyBlock(msgspec.Struct, gc=False):
    """Any object (a content block, as the lenient shape requires)."""


class _TUser(msgspec.Struct, gc=False):
    role: Literal["user"]
    origin: str | None = None
    usage: _Usage | None = None  # validated as the lenient shape does
    content: list[_AnyBlock] | str | None = None


class _ULine(msgspec.Struct, gc=False):
    """A user message line (:func:`_user`)."""

    type: Literal["message"]
    timestamp: str
    message: _TUser
    usage: _Usage | None = None


class _NMsg(msgspec.Struct, gc=False):
    role: Literal["toolResult", "bashExecution", "system", "custom"]


class _NLine(msgspec.Struct, gc=False):
    """A message line that counts for nothing (a tool result...): when it decodes, every
    ``type`` is ``message`` and every role one that stats ignore."""

    type: Literal["message"]
    message: _NMsg


class StatsState(msgspec.Struct):
    mc: list[str] | None = None  # latest model_change: [provider, model, channel]
    ep: list[str] | None = None  # endpoint of the latest request: [provider, model, channel]
    # the open turn: [day, user_ms, timestamp of its last reply, provider, model, channel, replies]
    turn: list[Any] | None = None


class Facts:
    __slots__ = ("req", "turns", "tools", "latency", "external")

    def __init__(self) -> None:
        self.req: dict[tuple, list[int]] = {}  # (day, kind, p, m, c) -> 9 sums (rows.R_*)
        self.turns: dict[tuple, list[int]] = {}  # (day, p, m, c) -> [turns, duration_ms]
        self.tools: dict[tuple, int] = {}  # (day, name) -> calls
        self.latency: list[tuple] = []  # (day, p, m, c, purpose, ttfb, dur, status, attempt)
        self.external: dict[tuple, list[int]] = {}  # (day, agent, session id) -> external_usage.COLUMNS

    def __bool__(self) -> bool:
        return bool(self.req or self.turns or self.tools or self.latency or self.external)


_sline = msgspec.json.Decoder(_SLine)
_aline = msgspec.json.Decoder(_ALine)
_uline = msgspec.json.Decoder(_ULine)
_nline = msgspec.json.Decoder(_NLine)
_request = msgspec.json.Decoder(_Request)
_ROLE = b'"role":'  # the first one of a line (in ama's and Python's layout: the message's own)


def _int(x: Any) -> int:
    if isinstance(x, bool):
        return 0
    if isinstance(x, int):
        return x if -INT_LIMIT < x < INT_LIMIT else 0
    if isinstance(x, float) and x == x and abs(x) < 1e18:
        return int(x)
    return 0


def _num(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float) or x != x:
        return None
    try:
        return float(x)
    except OverflowError:  # an integer of more than 308 digits
        return None


def _s(x: Any) -> str:
    return x if isinstance(x, str) else ""


def _row(f: Facts, key: tuple) -> list[int]:
    r = f.req.get(key)
    if r is None:
        r = f.req[key] = [0] * 9
    return r


def _add_usage(r: list[int], u: Any) -> None:
    r[R_REQUESTS] += 1
    if u is None:
        return
    r[R_INPUT] += _int(u.input)
    r[R_OUTPUT] += _int(u.output)
    r[R_CACHE_READ] += _int(u.cache_read)
    r[R_CACHE_WRITE] += _int(u.cache_write)
    if u.cost is not None:
        total = _num(u.cost.total)
        if total is not None and -COST_LIMIT < total < COST_LIMIT:
            r[R_COST] += round(total * COST_SCALE)
            r[R_PRICED] += 1


def _channel(st: StatsState, provider: str, model: str) -> str:
    mc = st.mc
    return mc[2] if mc is not None and mc[0] == provider and mc[1] == model else ""


def close_turn(st: StatsState, f: Facts) -> None:
    t = st.turn
    if t is not None and t[6]:
        key = (t[0], t[3], t[4], t[5])
        r = f.turns.get(key)
        if r is None:
            r = f.turns[key] = [0, 0]
        r[0] += 1
        r[1] += max(0, ts_ms(t[2]) - t[1])
    st.turn = None


def open_turn(st: StatsState) -> tuple | None:
    """The open turn as a turn fact ``(day, p, m, c, duration_ms)``, if it has a reply."""
    t = st.turn
    if t is None or not t[6]:
        return None
    return (t[0], t[3], t[4], t[5], max(0, ts_ms(t[2]) - t[1]))


def _assistant(ts: Any, m: Any, st: StatsState, f: Facts, days: Days) -> None:
    day = days.of_ts(ts)
    p, mo = _s(m.provider), _s(m.model)
    c = _channel(st, p, mo)
    r = _row(f, (day, "conversation", p, mo, c))
    _add_usage(r, m.usage)
    if m.stop_reason == "error":
        r[R_ERRORS] += 1
    st.ep = [p, mo, c]
    if isinstance(m.content, list):
        tools = f.tools
        for b in m.content:
            if b.type == "toolCall" and isinstance(b.name, str):
                key = (day, b.name)
                tools[key] = tools.get(key, 0) + 1
    turn = st.turn
    if turn is not None:
        turn[2] = ts
        turn[3], turn[4], turn[5] = p, mo, c
        turn[6] += 1


def _assistant_typed(ts: str, m: _TAssistant, st: StatsState, f: Facts, days: Days) -> None:
    """:func:`_assistant` for a strictly typed line (same result, less work)."""
    day = days.minutes.get(ts[:16]) if len(ts) == 24 and ts[23] == "Z" else None
    if day is None:
        day = days.of_ts(ts)
    p = m.provider
    mo = m.model
    mc = st.mc
    c = mc[2] if mc is not None and mc[0] == p and mc[1] == mo else ""
    key = (day, "conversation", p, mo, c)
    req = f.req
    r = req.get(key)
    if r is None:
        r = req[key] = [0] * 9
    r[0] += 1  # R_REQUESTS
    u = m.usage
    if u is not None:
        r[1] += u.input  # R_INPUT
        r[2] += u.output  # R_OUTPUT
        r[3] += u.cache_read  # R_CACHE_READ
        r[4] += u.cache_write  # R_CACHE_WRITE
        cost = u.cost
        if cost is not None:
            r[5] += round(cost.total * COST_SCALE)  # R_COST
            r[6] += 1  # R_PRICED
    if m.stop_reason == "error":
        r[7] += 1  # R_ERRORS
    ep = st.ep
    if ep is None or ep[0] != p or ep[1] != mo or ep[2] != c:
        st.ep = [p, mo, c]
    content = m.content
    if content:
        for b in content:
            if b.type == "toolCall":
                name = b.name
                if name is not None:
                    k = (day, name)
                    tools = f.tools
                    tools[k] = tools.get(k, 0) + 1
    turn = st.turn
    if turn is not None:
        turn[2] = ts
        turn[3] = p
        turn[4] = mo
        turn[5] = c
        turn[6] += 1


def _user(ts: Any, st: StatsState, f: Facts, days: Days) -> None:
    t = st.turn
    if t is not None and t[6]:
        close_turn(st, f)
    ms = ts_ms(ts)
    st.turn = [days(ms) if ms else "", ms, None, "", "", "", 0]


def _external(e: _SLine, f: Facts, days: Days) -> None:
    try:
        data = msgspec.json.decode(e.data)
    except DECODE_ERRORS:
        return
    found = usage_row(data)
    if found is None:
        return
    sid = data.get("sessionId")
    key = (days.of_ts(e.timestamp), found[0], sid if isinstance(sid, str) else "")
    acc = f.external.get(key)
    if acc is None:
        f.external[key] = found[1]
    else:
        for i, v in enumerate(found[1]):
            acc[i] += v


def handle(line: bytes, st: StatsState, f: Facts, days: Days) -> None:
    """Add what one line says (a line that :data:`RELEVANT` keeps) to ``f`` and ``st``."""
    i = line.find(_ROLE)
    if i > 0 and line[i + 7 : i + 8] == b" ":  # Python's json: '"role": "user"'
        i += 1
    if i < 0:
        pass
    elif line.startswith(b'"assistant"', i + 7):
        try:
            a = _aline.decode(line)
        except DECODE_ERRORS:
            pass
        else:
            _assistant_typed(a.timestamp, a.message, st, f, days)
            return
    elif line.startswith(b'"user"', i + 7):
        try:
            u = _uline.decode(line)
        except DECODE_ERRORS:
            pass
        else:
            if u.message.origin != "steer":
                _user(u.timestamp, st, f, days)
            return
    elif line.startswith(b'"toolResult"', i + 7):
        try:
            _nline.decode(line)
        except DECODE_ERRORS:
            pass
        else:
            return
    handle_lenient(line, st, f, days)


def handle_lenient(line: bytes, st: StatsState, f: Facts, days: Days) -> None:
    """:func:`handle` with the lenient shape only: the definition that every faster way
    must match."""
    try:
        e = _sline.decode(line)
    except DECODE_ERRORS:
        return
    t = e.type
    if t == "message":
        m = e.message
        if m is None:
            return
        if m.role == "assistant":
            _assistant(e.timestamp, m, st, f, days)
        elif m.role == "user" and m.origin != "steer":
            _user(e.timestamp, st, f, days)
    elif t == "usage":
        p, mo = _s(e.provider), _s(e.model)
        kind = _s(e.kind) or "usage"
        _add_usage(_row(f, (days.of_ts(e.timestamp), kind, p, mo, _channel(st, p, mo))), e.usage)
    elif t in ("compaction", "branch_summary"):
        if e.usage is not None:
            ep = st.ep or ["", "", ""]
            _add_usage(_row(f, (days.of_ts(e.timestamp), t, ep[0], ep[1], ep[2])), e.usage)
    elif t == "context_edit":
        if e.reason == "retry":
            ep = st.ep or ["", "", ""]
            _row(f, (days.of_ts(e.timestamp), "conversation", ep[0], ep[1], ep[2]))[R_RETRIES] += 1
    elif t == "model_change":
        st.mc = [_s(e.provider), _s(e.model_id), _s(e.channel)]
    elif t == "custom" and e.custom_type == USAGE_RECORD and len(e.data):
        _external(e, f, days)
    elif t == "custom" and e.custom_type == "ama.request" and len(e.data):
        try:
            d = _request.decode(e.data)
        except DECODE_ERRORS:
            return
        status = (
            d.http_status if isinstance(d.http_status, int) and not isinstance(d.http_status, bool) else None
        )
        attempt = d.attempt if isinstance(d.attempt, int) and not isinstance(d.attempt, bool) else None
        f.latency.append(
            (
                days.of_ts(e.timestamp),
                _s(d.provider),
                _s(d.model),
                _s(d.channel),
                _s(d.purpose),
                _num(d.first_byte_ms),
                _num(d.duration_ms),
                status,
                attempt,
            )
        )


def scan_facts(data: bytes | Any, start: int, end: int, st: StatsState, f: Facts, days: Days) -> None:
    """Handle every line whose start is in ``[start, end)`` (``data[start - 1]`` is the
    newline ending the previous line) as the index does, :data:`RELEVANT` then
    :func:`handle`: the scan's way through a file.

    Lines take short ways chosen by the first letter of the message's role: at the offset
    where the previous line of the file had it (ama's layout), from :data:`_LAYOUT`, or
    after the first ``"role":`` of the line (another layout).  An assistant or user message
    is decoded with its strict shape directly (which proves that :data:`RELEVANT` keeps it;
    a line that is not one fails to decode and takes the index's way); a tool result is
    skipped once :data:`_LAYOUT` proves that :data:`RELEVANT` skips it, or once it decodes
    as a message that counts for nothing (``_NLine``: then it would count for nothing either
    way).
    What :func:`_assistant_typed` and :func:`_user` do is done here with less work: the
    sums of the assistant messages are added per file (:func:`_add_pending`), the open
    turn and the endpoint are written into ``st`` when a user message closes the turn,
    before a line that :func:`handle` reads, and at the end."""
    find = data.find
    layout = _LAYOUT.match
    relevant = RELEVANT.match
    adecode = _aline.decode
    udecode = _uline.decode
    ndecode = _nline.decode
    minutes = days.minutes.get
    turns = f.turns
    pending: dict[tuple, list[_TAssistant]] = {}
    mc = st.mc
    mp, mm, mch = mc if mc is not None else (None, None, "")
    replies = 0  # assistant messages since st was last written, the last one's:
    lts = lp = lmo = lch = ""
    k = end  # offset of the role's first letter in the last line that matched _LAYOUT
    pos = start
    while pos < end:
        e = find(b"\n", pos, end)
        if e < 0:
            e = end
        r = pos + k
        c = data[r] if r < e else 0  # 97: a, 116: t, 117: u
        if c != 97 and c != 117:
            m = layout(data, pos, e)
            if m is not None:
                w = m.lastindex or 0  # (one of the three groups matched)
                if w == 3:  # a message that counts for nothing
                    if c != 116:
                        k = m.start(3) - pos
                    pos = e + 1
                    continue
                k = m.start(w) - pos
                c = 97 if w == 1 else 117
            else:  # another layout: the first letter of the first role, if any
                i = find(b'"role":', pos, e) + 7  # (6 when there is none)
                if 6 < i < e and data[i] == 32:  # Python's '"role": "user"'
                    i += 1
                c = data[i + 1] if i > 6 and i + 1 < e else 0
                if c == 116:  # a tool result, if it decodes as a message that counts for nothing
                    try:
                        ndecode(data[pos:e])
                    except DECODE_ERRORS:
                        pass
                    else:
                        pos = e + 1
                        continue
        if c == 97:
            try:
                a = adecode(data[pos:e])
            except DECODE_ERRORS:
                pass
            else:
                lts = a.timestamp
                msg = a.message
                day = minutes(lts[:16]) if len(lts) == 24 and lts[23] == "Z" else None
                if day is None:
                    day = days.of_ts(lts)
                lp = msg.provider
                lmo = msg.model
                lch = mch if lp == mp and lmo == mm else ""
                key = (day, lp, lmo, lch)
                group = pending.get(key)
                if group is None:
                    pending[key] = [msg]
                else:
                    group.append(msg)
                replies += 1
                pos = e + 1
                continue
        elif c == 117:
            try:
                u = udecode(data[pos:e])
            except DECODE_ERRORS:
                pass
            else:
                if u.message.origin != "steer":  # close_turn and _user
                    turn = st.turn
                    if replies:
                        st.ep = [lp, lmo, lch]
                        replies = 0
                        if turn is not None:
                            tkey = (turn[0], lp, lmo, lch)
                            tr = turns.get(tkey)
                            if tr is None:
                                tr = turns[tkey] = [0, 0]
                            tr[0] += 1
                            tr[1] += max(0, ts_ms(lts) - turn[1])
                    elif turn is not None and turn[6]:
                        close_turn(st, f)
                    ms = ts_ms(u.timestamp)
                    st.turn = [days(ms) if ms else "", ms, None, "", "", "", 0]
                pos = e + 1
                continue
        if relevant(data, pos - 1, end):
            if replies:
                _write_replies(st, replies, lts, lp, lmo, lch)
                replies = 0
            handle(data[pos:e], st, f, days)
            mc = st.mc
            mp, mm, mch = mc if mc is not None else (None, None, "")
        pos = e + 1
    if replies:
        _write_replies(st, replies, lts, lp, lmo, lch)
    if pending:
        _add_pending(pending, f)


def _write_replies(st: StatsState, replies: int, ts: str, p: str, mo: str, ch: str) -> None:
    """What :func:`_assistant_typed` leaves in ``st`` after ``replies`` messages, the last
    one of ``ts`` and endpoint ``p, mo, ch``."""
    st.ep = [p, mo, ch]
    turn = st.turn
    if turn is not None:
        turn[2] = ts
        turn[3] = p
        turn[4] = mo
        turn[5] = ch
        turn[6] += replies


def _add_pending(pending: dict[tuple, list[_TAssistant]], f: Facts) -> None:
    """Add up strictly typed assistant messages grouped by ``(day, p, m, c)``: what
    :func:`_assistant_typed` adds one message at a time (sums of integers: the same)."""
    req = f.req
    tools = f.tools
    for (day, p, mo, ch), msgs in pending.items():
        i = o = cr = cw = cost = priced = errors = 0
        names = []
        for m in msgs:
            u = m.usage
            if u is not None:
                i += u.input
                o += u.output
                cr += u.cache_read
                cw += u.cache_write
                t = u.cost
                if t is not None:
                    cost += round(t.total * COST_SCALE)
                    priced += 1
            if m.stop_reason == "error":
                errors += 1
            content = m.content
            if content:
                for b in content:
                    if b.type == "toolCall":
                        names.append(b.name)
        for name, n in Counter(names).items():
            if name is not None:
                tk = (day, name)
                tools[tk] = tools.get(tk, 0) + n
        key = (day, "conversation", p, mo, ch)
        r = req.get(key)
        if r is None:
            r = req[key] = [0] * 9
        r[R_REQUESTS] += len(msgs)
        r[R_INPUT] += i
        r[R_OUTPUT] += o
        r[R_CACHE_READ] += cr
        r[R_CACHE_WRITE] += cw
        r[R_COST] += cost
        r[R_PRICED] += priced
        r[R_ERRORS] += errors
