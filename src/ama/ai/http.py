"""The one module that talks HTTP (and imports httpx): POST a body, iterate its SSE events.

Transport failures and HTTP error statuses become :class:`ProviderError` here and never
leak.  One ``AsyncClient`` is kept per event loop so that the turns of an agent run reuse
their connection; :func:`aclose` closes the current loop's client.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import sys
import weakref
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from ama.ai.builder import MessageBuilder
from ama.ai.errors import ProviderError, error_for_status, error_message_from_body, parse_retry_after
from ama.ai.sse import iter_sse
from ama.ai.types import StreamOptions


def _import_httpx_lean() -> None:
    """Import httpx without the optional modules it pulls in when they happen to be installed:
    its command-line tool (rich, click, pygments: ~250 ms) and httpcore's trio support
    (~140 ms).  Both fall back on ImportError; ama uses neither."""
    if "httpx" in sys.modules:
        return
    blocked = [m for m in ("httpx._main", "trio") if m not in sys.modules]
    for m in blocked:
        sys.modules[m] = None  # type: ignore[assignment]
    try:
        import httpcore  # noqa: F401  (httpx imports it lazily, at the first client)
        import httpx  # noqa: F401
    finally:
        for m in blocked:
            if sys.modules.get(m, 0) is None:
                del sys.modules[m]


def _httpx():  # type: ignore[no-untyped-def]
    _import_httpx_lean()
    import httpx

    return httpx


def proxy_configured(url: str) -> bool:
    """True when the environment routes ``url`` through a proxy (then httpx is used)."""
    import urllib.request

    proxies = urllib.request.getproxies()
    if not proxies:
        return False
    host = url.split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1]
    if urllib.request.proxy_bypass(host.split(":")[0]):
        return False
    scheme = url.split(":", 1)[0].lower()
    return bool(proxies.get(scheme) or proxies.get("all"))

#: per event loop: {tls: client}.  Plain-HTTP endpoints (local servers: Ollama, vLLM,
#: llama.cpp) get a client whose TLS context is never used, so no certificates are loaded.
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[bool, Any]] = (
    weakref.WeakKeyDictionary()
)
_MAX_ERROR_BODY = 64 * 1024


_ssl: ssl.SSLContext | None = None


def ssl_context() -> ssl.SSLContext:
    """The process's TLS context: ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when set, else the
    system's hashed certificate directory (loaded lazily by OpenSSL: ~5 ms instead of
    ~100 ms for parsing a whole bundle), else certifi's bundle."""
    global _ssl
    if _ssl is None:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies certificates and host names
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
        if cafile or capath:
            ctx.load_verify_locations(cafile=cafile or None, capath=capath or None)
        else:
            paths = ssl.get_default_verify_paths()
            capath = next((p for p in (paths.capath, paths.openssl_capath) if p and _has_hashed_certs(p)), None)
            if capath:
                ctx.load_verify_locations(capath=capath)
            else:
                import certifi

                ctx.load_verify_locations(cafile=certifi.where())
        _ssl = ctx
    return _ssl


def _has_hashed_certs(path: str) -> bool:
    try:
        with os.scandir(path) as it:
            return any(e.name.endswith(".0") for e in it)
    except OSError:
        return False


def _unused_tls_context() -> ssl.SSLContext:
    """A TLS context for a client that only speaks plain HTTP (loads no certificates)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def _client(tls: bool = True) -> Any:
    loop = asyncio.get_running_loop()
    per_loop = _clients.setdefault(loop, {})
    client = per_loop.get(tls)
    if client is None or client.is_closed:
        verify = ssl_context() if tls else _unused_tls_context()
        client = _httpx().AsyncClient(timeout=None, follow_redirects=False, verify=verify)
        per_loop[tls] = client
    return client


async def aclose() -> None:
    """Close the HTTP connections of the running loop (call before the loop ends)."""
    from ama.ai import http11

    await http11.close_idle()
    loop = asyncio.get_running_loop()
    for client in _clients.pop(loop, {}).values():
        await client.aclose()


def _timeout(options: StreamOptions) -> Any:
    t = options.timeout
    return _httpx().Timeout(t, connect=min(t, 30.0), pool=min(t, 30.0))


async def post_sse(
    url: str,
    headers: dict[str, str],
    body: bytes,
    options: StreamOptions,
    builder: MessageBuilder,
) -> AsyncGenerator[tuple[str, str], None]:
    """POST ``body`` and yield the response's SSE ``(event, data)`` pairs.

    Raises ProviderError for an error status (with ``retry_after`` from the headers), a
    transport failure, a timeout, or a body cut off mid-stream.  Direct connections use
    the small asyncio client of ``http11.py``; proxied ones use httpx.
    """
    builder.requested = True
    if proxy_configured(url):
        async for item in _post_sse_httpx(url, headers, body, options, builder):
            yield item
        return
    from ama.ai import http11

    provider = builder.model.provider
    t = options.timeout
    try:
        resp = await http11.request(
            "POST", url, headers, body, tls=ssl_context, connect_timeout=min(t, 30.0), read_timeout=t
        )
    except http11.HttpError as e:
        raise _transport_error(e, provider, started=False) from e
    try:
        builder.http_status = resp.status_code
        if resp.status_code >= 400:
            raise await _status_error(resp, builder, provider, (http11.HttpError,))

        async def chunks() -> AsyncIterator[bytes]:
            async for chunk in resp.aiter_bytes():
                builder.mark_first_byte()
                yield chunk

        try:
            async for item in iter_sse(chunks()):
                yield item
        except http11.HttpError as e:
            raise _transport_error(e, provider, started=True) from e
    finally:
        await resp.aclose()


async def _status_error(resp: Any, builder: MessageBuilder, provider: str, transport: tuple) -> ProviderError:
    """The error for an HTTP error status, with the message from (the start of) its body.
    ``transport``: exceptions that cut the body short; the status is reported anyway."""
    raw = bytearray()
    try:
        async for chunk in resp.aiter_bytes():
            builder.mark_first_byte()
            raw += chunk
            if len(raw) > _MAX_ERROR_BODY:
                break
    except transport:
        pass
    message, err_type = error_message_from_body(resp.status_code, bytes(raw))
    return error_for_status(
        resp.status_code, message, error_type=err_type, retry_after=parse_retry_after(resp.headers), provider=provider
    )


def _transport_error(e: Exception, provider: str, *, started: bool) -> ProviderError:
    kind = getattr(e, "kind", "")
    if kind == "timeout":
        return ProviderError("timeout", f"{provider}: request timed out ({e})", retryable=True, provider=provider)
    if kind == "protocol":
        return ProviderError("network", f"{provider}: bad HTTP response ({e})", retryable=True, provider=provider)
    if started:
        return ProviderError("network", f"{provider}: connection dropped mid-response ({e})", retryable=True, provider=provider)
    return ProviderError("network", f"{provider}: {e}", retryable=True, provider=provider)


async def _post_sse_httpx(
    url: str,
    headers: dict[str, str],
    body: bytes,
    options: StreamOptions,
    builder: MessageBuilder,
) -> AsyncGenerator[tuple[str, str], None]:
    httpx = _httpx()
    provider = builder.model.provider
    try:
        async with _client(url.startswith("https:")).stream("POST", url, content=body, headers=headers, timeout=_timeout(options)) as resp:
            builder.http_status = resp.status_code
            if resp.status_code >= 400:
                raise await _status_error(resp, builder, provider, ())

            async def chunks() -> AsyncIterator[bytes]:
                async for chunk in resp.aiter_bytes():
                    builder.mark_first_byte()
                    yield chunk

            async for item in iter_sse(chunks()):
                yield item
    except ProviderError:
        raise
    except httpx.TimeoutException as e:
        raise ProviderError(
            "timeout", f"{provider}: request timed out ({type(e).__name__})", retryable=True, provider=provider
        ) from e
    except httpx.RemoteProtocolError as e:
        raise ProviderError(
            "network", f"{provider}: connection dropped mid-response ({e})", retryable=True, provider=provider
        ) from e
    except httpx.TransportError as e:
        raise ProviderError(
            "network", f"{provider}: {type(e).__name__}: {e or 'connection failed'}", retryable=True, provider=provider
        ) from e
    except (httpx.HTTPError, httpx.InvalidURL) as e:
        raise ProviderError("invalid_request", f"{provider}: {e}", provider=provider) from e
