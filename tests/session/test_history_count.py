"""`history.count`: message counts by role, first and last readable message time."""

from __future__ import annotations

from ama.session.entries import iso_to_ms
from ama.session.history import count
from ama.session.reader import parse_session


def _msg(eid: str, parent: str | None, ts: str, role: str) -> bytes:
    p = "null" if parent is None else f'"{parent}"'
    body = (
        '{"role":"user","content":"hi","timestamp":0}'
        if role == "user"
        else '{"role":"toolResult","toolCallId":"c","toolName":"read","content":[],"isError":false,"timestamp":0}'
    )
    return f'{{"type":"message","id":"{eid}","parentId":{p},"timestamp":"{ts}","message":{body}}}'.encode()


def test_first_and_last_times_skip_unreadable_timestamps() -> None:
    lines = [
        b'{"type":"session","version":3,"id":"s","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/p"}',
        _msg("a", None, "not a time", "user"),
        _msg("b", "a", "2026-03-01T10:00:00.000Z", "toolResult"),
        b'{"type":"label","id":"l","parentId":"b","timestamp":"2026-03-09T10:00:00.000Z","targetId":"b","label":"x"}',
        _msg("c", "l", "2026-03-01T11:00:00.000Z", "user"),
        _msg("d", "c", "", "toolResult"),
    ]
    c = count(parse_session(b"\n".join(lines) + b"\n").entries)
    assert (c.entries, c.messages, c.user, c.tool_results, c.assistant) == (5, 4, 2, 2, 0)
    assert c.first_ms == iso_to_ms("2026-03-01T10:00:00.000Z")
    assert c.last_ms == iso_to_ms("2026-03-01T11:00:00.000Z")
    assert (count([]).first_ms, count([]).last_ms) == (0, 0)
