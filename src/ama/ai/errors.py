"""Provider errors: what failed, whether a retry may help, and how long to wait.

    AmaError
     └── ProviderError   code is one of
           "rate_limited"     HTTP 429                                  retryable
           "overloaded"       HTTP 529 / Anthropic overloaded_error     retryable
           "server_error"     HTTP 5xx (and 408, 409)                   retryable
           "network"          connect/read failure, dropped stream      retryable
           "timeout"          no byte within the timeout                retryable
           "auth"             HTTP 401/403, missing key                 not retryable
           "context_overflow" the prompt does not fit the context window  not retryable
           "invalid_request"  HTTP 400/404/413/422                      not retryable
           "provider_error"   anything else                             not retryable

The agent loop does the retrying; this module only classifies and suggests a delay.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Any

from ama.errors import AmaError

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
#: how servers say "the prompt is too long" (Anthropic, OpenAI, vLLM, llama.cpp, Ollama, OpenRouter)
OVERFLOW = re.compile(
    r"prompt is too long|context[_ ]length[_ ]exceeded|maximum context length|context window|"
    r"exceeds the available context|too many tokens|input is too long|reduce the length",
    re.IGNORECASE,
)
RETRYABLE_TYPES = frozenset({"overloaded_error", "rate_limit_error", "api_error", "timeout_error", "server_error"})


class ProviderError(AmaError):
    def __init__(
        self,
        code: str,
        message: str,
        *,
        retryable: bool = False,
        http_status: int | None = None,
        retry_after: float | None = None,
        error_type: str | None = None,
        provider: str | None = None,
    ) -> None:
        super().__init__(code, message)
        self.retryable = retryable
        self.http_status = http_status
        self.retry_after = retry_after
        self.error_type = error_type
        self.provider = provider
        self.data = {
            k: v
            for k, v in (
                ("retryable", retryable),
                ("httpStatus", http_status),
                ("retryAfter", retry_after),
                ("errorType", error_type),
                ("provider", provider),
            )
            if v is not None
        }

    def __repr__(self) -> str:
        return f"ProviderError({self.code!r}, {self.message!r}, retryable={self.retryable})"


def code_for_status(status: int, error_type: str | None = None, message: str = "") -> str:
    if status in (400, 413, 422) and OVERFLOW.search(f"{error_type or ''} {message}"):
        return "context_overflow"
    if status == 529 or error_type == "overloaded_error":
        return "overloaded"
    if status == 429 or error_type == "rate_limit_error":
        return "rate_limited"
    if status in (401, 403):
        return "auth"
    if status in (400, 404, 413, 422):
        return "invalid_request"
    if status >= 500 or status in (408, 409, 425):
        return "server_error"
    return "provider_error"


def error_for_status(
    status: int,
    message: str,
    *,
    error_type: str | None = None,
    retry_after: float | None = None,
    provider: str | None = None,
) -> ProviderError:
    retryable = status in RETRYABLE_STATUS or status >= 500 or (error_type in RETRYABLE_TYPES)
    return ProviderError(
        code_for_status(status, error_type, message),
        message,
        retryable=retryable,
        http_status=status,
        retry_after=retry_after,
        error_type=error_type,
        provider=provider,
    )


def error_for_type(error_type: str | None, message: str, *, provider: str | None = None) -> ProviderError:
    """An error reported inside a 200 stream (Anthropic ``event: error``, OpenAI ``{"error":…}``)."""
    status = {"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500}.get(error_type or "")
    code = code_for_status(status, error_type) if status else "provider_error"
    return ProviderError(
        code,
        message,
        retryable=(error_type or "") in RETRYABLE_TYPES,
        http_status=None,
        error_type=error_type,
        provider=provider,
    )


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def error_message_from_body(status: int, body: bytes) -> tuple[str, str | None]:
    """(message, error type) from an error response body of either API, or its text."""
    import json

    text = body.decode("utf-8", "replace").strip()
    err_type = None
    msg = ""
    try:
        data: Any = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            t = err.get("type") or err.get("code")
            err_type = str(t) if t is not None else None
            msg = str(err.get("message") or "")
        elif isinstance(err, str):
            msg = err
    if not msg:
        msg = text[:500] or "(empty body)"
    prefix = f"HTTP {status}" + (f" {err_type}" if err_type else "")
    return f"{prefix}: {msg}", err_type


def backoff_delay(
    attempt: int, retry_after: float | None = None, *, base: float = 2.0, cap: float = 60.0
) -> float:
    """Seconds to wait before retry number ``attempt`` (1 for the first retry).

    A server's ``retry_after`` wins when given (still capped); otherwise exponential
    ``base * 2**(attempt-1)``, capped at ``cap``.  No jitter: callers that want it add it.
    """
    if retry_after is not None and retry_after >= 0:
        return min(float(retry_after), cap)
    n = max(1, int(attempt))
    return min(cap, base * (2 ** min(n - 1, 30)))
