"""Error classification, backoff, Retry-After parsing and the SSE parser."""

from __future__ import annotations

import asyncio

import pytest

from ama.ai import ProviderError, backoff_delay
from ama.ai.errors import error_for_status, error_message_from_body, parse_retry_after
from ama.ai.sse import iter_sse
from ama.errors import AmaError


def test_backoff_is_exponential_capped_and_honours_retry_after():
    assert [backoff_delay(n) for n in range(1, 8)] == [2, 4, 8, 16, 32, 60, 60]
    assert backoff_delay(1, base=0.5, cap=3) == 0.5 and backoff_delay(5, base=0.5, cap=3) == 3
    assert backoff_delay(3, 7.5) == 7.5
    assert backoff_delay(1, 600) == 60
    assert backoff_delay(0) == 2 and backoff_delay(10_000) == 60


def test_retry_after_headers():
    assert parse_retry_after({"retry-after": "12"}) == 12
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480) == 10
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


@pytest.mark.parametrize(
    ("status", "etype", "code", "retryable"),
    [
        (429, None, "rate_limited", True),
        (529, None, "overloaded", True),
        (400, "overloaded_error", "overloaded", True),
        (500, None, "server_error", True),
        (502, None, "server_error", True),
        (408, None, "server_error", True),
        (401, None, "auth", False),
        (403, None, "auth", False),
        (400, "invalid_request_error", "invalid_request", False),
        (418, None, "provider_error", False),
    ],
)
def test_status_classification(status, etype, code, retryable):
    err = error_for_status(status, "m", error_type=etype, provider="p")
    assert isinstance(err, AmaError)
    assert (err.code, err.retryable, err.http_status) == (code, retryable, status)
    assert err.to_json()["data"]["retryable"] is retryable


def test_error_bodies_of_both_apis():
    assert error_message_from_body(529, b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}') == (
        "HTTP 529 overloaded_error: Overloaded",
        "overloaded_error",
    )
    msg, t = error_message_from_body(429, b'{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}')
    assert msg == "HTTP 429 requests: slow down" and t == "requests"
    assert error_message_from_body(502, b"<html>bad gateway</html>") == ("HTTP 502: <html>bad gateway</html>", None)
    assert error_message_from_body(500, b"") == ("HTTP 500: (empty body)", None)
    assert repr(ProviderError("network", "x", retryable=True)) == "ProviderError('network', 'x', retryable=True)"


async def _chunks(parts):
    for p in parts:
        yield p


def _parse(parts: list[bytes]) -> list[tuple[str, str]]:
    async def run():
        return [e async for e in iter_sse(_chunks(parts))]

    return asyncio.run(run())


def test_sse_parser_handles_any_chunking_and_line_endings():
    raw = (
        b"event: a\r\ndata: {\"x\":1}\r\n\r\n"
        b": keep-alive comment\n"
        b"data: line1\ndata:line2\nid: 7\nretry: 100\n\n"
        b"event: b\rdata: z\r\r"
        b"data: \xe2\x9c\x93 \xe2\x80\xa8 kept\n\n"
        b"event: only-event\n\n"
        b"data: tail without blank line"
    )
    expected = [
        ("a", '{"x":1}'),
        ("message", "line1\nline2"),
        ("b", "z"),
        ("message", "\u2713 \u2028 kept"),
        ("message", "tail without blank line"),
    ]
    assert _parse([raw]) == expected
    for size in (1, 2, 3, 5, 8, 13):
        assert _parse([raw[i : i + size] for i in range(0, len(raw), size)]) == expected, size


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, b'{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}'),
        (400, b'{"error":{"message":"This model\'s maximum context length is 128000 tokens.","code":"context_length_exceeded"}}'),
        (413, b'{"error":{"type":"request_too_large","message":"Request exceeds the context window"}}'),
    ],
)
def test_context_overflow_is_recognised(status, body):
    message, etype = error_message_from_body(status, body)
    err = error_for_status(status, message, error_type=etype)
    assert err.code == "context_overflow" and not err.retryable
