"""The stats facts of session lines (docs/stats.md, "Definitions").

:func:`handle` reads one line and adds to a :class:`Facts` (sums per local day and
endpoint): requests by kind, tokens, cost, errors, retries, turns, tool calls, and one
latency row per ``ama.request`` record.  It keeps the little it needs across lines in a
:class:`StatsState` (latest ``model_change``, latest endpoint, the open turn), which the
index stores with the file so that an appended file continues where it stopped.

Which lines count: every line that :data:`RELEVANT` (``fact_shapes.py``: a pattern over
a line's first bytes) does not skip, as :func:`handle_lenient` reads it with the lenient
shape.  That is the definition; the rest are faster ways to the same answer:

* :func:`handle` (the index, per line) tries a strict shape first when the line's first
  ``"role"`` says assistant, user or toolResult: a strict shape accepts only what the
  lenient one accepts and gives the same values.
* :func:`scan_facts` (a cold scan, per file) routes each line by the first letter of its
  role (at the offset the file's previous line had it, from :data:`LAYOUT`, or after the
  first ``"role":``), skips tool results it can prove irrelevant, decodes assistant and
  user messages with their strict shapes and adds the assistant messages up per file.

tests/index/test_facts_fast.py checks both against the definition on random lines.

Cost is summed in integer units of 1e-10 USD so that sums do not depend on the order of
additions (the index adds per appended chunk, a scan per file).  Token counts of 10^18 or
more and costs of 10^8 USD or more are treated as absent (they would not fit the index's
64-bit integers).
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

import msgspec

from ama.index.fact_shapes import (
    COST_LIMIT,
    DECODE_ERRORS,
    INT_LIMIT,
    LAYOUT,
    RELEVANT,
    SLine,
    TAssistant,
    decode_assistant,
    decode_lenient,
    decode_nothing,
    decode_request,
    decode_user,
)
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
from ama.index.timeutil import EPOCH, MS, Days, ts_ms
from ama.session.external_usage import USAGE_RECORD, usage_row


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


def _assistant_typed(ts: str, m: TAssistant, st: StatsState, f: Facts, days: Days) -> None:
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
    st.turn = [days.of_ts(ts), ts_ms(ts), None, "", "", "", 0]


def _external(e: SLine, f: Facts, days: Days) -> None:
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
            a = decode_assistant.decode(line)
        except DECODE_ERRORS:
            pass
        else:
            _assistant_typed(a.timestamp, a.message, st, f, days)
            return
    elif line.startswith(b'"user"', i + 7):
        try:
            u = decode_user.decode(line)
        except DECODE_ERRORS:
            pass
        else:
            if u.message.origin != "steer":
                _user(u.timestamp, st, f, days)
            return
    elif line.startswith(b'"toolResult"', i + 7):
        try:
            decode_nothing.decode(line)
        except DECODE_ERRORS:
            pass
        else:
            return
    handle_lenient(line, st, f, days)


def handle_lenient(line: bytes, st: StatsState, f: Facts, days: Days) -> None:
    """:func:`handle` with the lenient shape only: the definition that every faster way
    must match."""
    try:
        e = decode_lenient.decode(line)
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
            d = decode_request.decode(e.data)
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
    where the previous line of the file had it (ama's layout), from :data:`LAYOUT`, or
    after the first ``"role":`` of the line (another layout).  An assistant or user message
    is decoded with its strict shape directly (which proves that :data:`RELEVANT` keeps it;
    a line that is not one fails to decode and takes the index's way); a tool result is
    skipped once :data:`LAYOUT` proves that :data:`RELEVANT` skips it, or once it decodes
    as a message that counts for nothing (``NLine``: then it would count for nothing either
    way).

    What :func:`_assistant_typed` and :func:`_user` do is done here with less work: the
    assistant messages' sums are kept in locals while the day and endpoint stay the same
    (:func:`_add_sums` adds them up), the open turn and the endpoint are written into
    ``st`` when a user message closes the turn, before a line that :func:`handle` reads,
    and at the end."""
    find = data.find
    layout = LAYOUT.match
    relevant = RELEVANT.match
    adecode = decode_assistant.decode
    udecode = decode_user.decode
    ndecode = decode_nothing.decode
    minutes = days.minutes.get
    fromiso = datetime.fromisoformat  # (ts_ms, for the strict shapes' str timestamps)
    turns = f.turns
    # the sums of the strictly typed assistant messages of row (sday, sp, smo, sch), so far
    sday = sp = smo = sch = ""
    s_n = s_in = s_out = s_cr = s_cw = s_cost = s_priced = s_err = 0
    names: list[str | None] = []  # their tool calls' names
    mc = st.mc
    mp, mm, mch = mc if mc is not None else (None, None, "")
    replies = 0  # assistant messages since st was last written, the last one's:
    lts = lp = lmo = lch = ""
    k = end  # offset of the role's first letter in the last line that matched LAYOUT
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
                if day != sday or lp != sp or lmo != smo or lch != sch:  # another row
                    if s_n:
                        _add_sums(f, sday, sp, smo, sch, (s_n, s_in, s_out, s_cr, s_cw, s_cost, s_priced, s_err), names)
                        s_n = s_in = s_out = s_cr = s_cw = s_cost = s_priced = s_err = 0
                        names = []
                    sday, sp, smo, sch = day, lp, lmo, lch
                s_n += 1
                us = msg.usage
                if us is not None:
                    s_in += us.input
                    s_out += us.output
                    s_cr += us.cache_read
                    s_cw += us.cache_write
                    t = us.cost
                    if t is not None:
                        s_cost += round(t.total * COST_SCALE)
                        s_priced += 1
                if msg.stop_reason == "error":
                    s_err += 1
                content = msg.content
                if content:
                    for b in content:
                        if b.type == "toolCall":
                            names.append(b.name)
                replies += 1
                pos = e + 1
                continue
        elif c == 117:
            try:
                u = udecode(data[pos:e])
            except DECODE_ERRORS:
                pass
            else:
                if u.message.origin != "steer":  # close_turn and _user, with ts_ms inline
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
                            try:
                                dt = fromiso(lts)
                            except ValueError:
                                ms = 0
                            else:
                                ms = ((dt if dt.tzinfo else dt.replace(tzinfo=UTC)) - EPOCH) // MS
                            ms -= turn[1]
                            if ms > 0:
                                tr[1] += ms
                    elif turn is not None and turn[6]:
                        close_turn(st, f)
                    ts = u.timestamp
                    day = minutes(ts[:16]) if len(ts) == 24 and ts[23] == "Z" else None
                    try:
                        dt = fromiso(ts)
                    except ValueError:
                        ms = 0
                    else:
                        ms = ((dt if dt.tzinfo else dt.replace(tzinfo=UTC)) - EPOCH) // MS
                    st.turn = [days.of_ts(ts) if day is None else day, ms, None, "", "", "", 0]
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
    if s_n:
        _add_sums(f, sday, sp, smo, sch, (s_n, s_in, s_out, s_cr, s_cw, s_cost, s_priced, s_err), names)


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


def _add_sums(f: Facts, day: str, p: str, mo: str, ch: str, sums: tuple, names: list[str | None]) -> None:
    """Add the sums of some strictly typed assistant messages of one ``(day, endpoint)``
    (requests, input, output, cache read, cache write, cost units, priced, errors) and
    their tool calls: what :func:`_assistant_typed` adds one message at a time."""
    key = (day, "conversation", p, mo, ch)
    r = f.req.get(key)
    if r is None:
        r = f.req[key] = [0] * 9
    for col, v in zip((R_REQUESTS, R_INPUT, R_OUTPUT, R_CACHE_READ, R_CACHE_WRITE, R_COST, R_PRICED, R_ERRORS), sums):
        r[col] += v
    tools = f.tools
    for name, calls in Counter(names).items():
        if name is not None:
            k = (day, name)
            tools[k] = tools.get(k, 0) + calls
