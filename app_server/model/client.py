"""The Responses API client: one streamed `POST {base_url}/responses` per model request, with retries.

Retry rules follow Codex 0.169 (observed with a fake server) except where Codex can hang a turn:
* HTTP 5xx, 429 and a connection that cannot be opened are first retried silently up to
  `request_max_retries` times;
* then any retryable failure (those, 401/403/404..., `response.failed`, a truncated stream, an idle
  timeout) restarts the request up to `stream_max_retries` times, each announced through `on_retry`
  ("Reconnecting... n/max", or "Reconnecting... waiting for network" for a connection failure -
  Codex retries that one forever, we stop at `stream_max_retries`);
* a retry waits as long as the server asks (`retry-after-ms`, `Retry-After`, "try again in Xs"), up to
  `max_retry_after` seconds (default 60); a longer hint fails at once, saying so (Codex would wait);
* 400, a 429 `usage_limit_reached` and context-window errors fail at once.
Every wait is bounded (see `ModelClient.worst_case_seconds`), so every turn ends.

Auth: a provider that requires OpenAI auth (the built-in `openai`) sends the stored API-key login
(`stored_key`, CODEX_HOME/auth.json) as `authorization: Bearer`, ahead of any environment variable, as
Codex does. Otherwise `authorization: Bearer $<env_key>` when the provider names an `env_key` (the built-in
`openai` names CODEX_API_KEY/OPENAI_API_KEY, pycodex's fallback where Codex sends nothing); if that variable
is unset or empty the request fails before it is sent ("Missing environment variable: `X`."), as in Codex;
for a provider that takes OpenAI auth (no login and no key at all) the error says how to configure a model.
Without either, `experimental_bearer_token` is sent as the bearer token. `env_http_headers` add
headers from environment variables that are set (the built-in OpenAI provider maps OpenAI-Organization
and OpenAI-Project to OPENAI_ORGANIZATION and OPENAI_PROJECT this way, as Codex does).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import socket
import ssl
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from functools import cache

import httpx

from app_server.model import errors
from app_server.model.errors import RetryScope
from app_server.model.events import (
    EventParseError,
    ResponseCompleted,
    ResponseEvent,
    ResponseFailed,
    parse_event,
)
from app_server.model.provider import ProviderConfig, RequestContext
from app_server.model.retry import (
    DEFAULT_MAX_RETRY_AFTER_S,
    Backoff,
    RetryCallback,
    RetryPolicy,
    Sleep,
    default_backoff,
    default_network_backoff,
    stream_with_retries,
    worst_case_seconds,
)
from app_server.model.retry_hints import retry_hint
from app_server.model.sse import SseDecoder, SseError
from pycodex.jsonrpc.codec import dumps
from pycodex.trace import recorder as trace

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 30.0
#: An error answer's body is only read this far (it ends up in a message, not in memory forever).
MAX_ERROR_BODY = 64 * 1024


def verifying_tls_context() -> ssl.SSLContext:
    """The certificate-verifying TLS context httpx builds by default (its CA bundle, or $SSL_CERT_FILE /
    $SSL_CERT_DIR when set), built once per process for each such setting and shared by the model clients.

    Loading the CA bundle costs ~25 ms of CPU, and every app-server builds a model client for its provider
    (a test run starts thousands); the context is only read after it is built."""
    return _tls_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@cache
def _tls_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    del cert_file, cert_dir  # the cache key: httpx reads the same two variables itself
    return httpx.create_ssl_context()


def connect_failure_cause(exc: BaseException) -> str:
    """Name why a connection could not be opened, from the exception chain httpx hands us."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return "connection refused"
        if isinstance(current, socket.gaierror):
            return f"DNS lookup failed ({current.strerror or current})"
        if isinstance(current, ssl.SSLError):
            return f"TLS handshake failed ({current.reason or current})"
        if isinstance(current, httpx.ConnectTimeout | TimeoutError):
            return "connect timed out"
        current = current.__cause__ or current.__context__
    return str(exc) or type(exc).__name__


class ModelClient:
    """Streams typed Responses events from an HTTP provider.

    `http` may be shared; a client created here is closed by `aclose()`. `env` is where `env_key` is
    looked up (default: `os.environ`). The backoff functions are injectable so tests run fast.
    """

    def __init__(
        self,
        provider: ProviderConfig,
        *,
        http: httpx.AsyncClient | None = None,
        env: Mapping[str, str] | None = None,
        backoff: Backoff = default_backoff,
        network_backoff: Backoff = default_network_backoff,
        network_retry_limit: int | None = None,
        max_retry_after: float = DEFAULT_MAX_RETRY_AFTER_S,
        sleep: Sleep = asyncio.sleep,
        stored_key: Callable[[], str | None] | None = None,
    ) -> None:
        self._url = provider.checked_responses_url()
        self._provider = provider
        self._base_url = provider.base_url or ""
        self._owns_http = http is None
        self._http = http or httpx.AsyncClient(
            timeout=httpx.Timeout(connect=CONNECT_TIMEOUT_S, read=None, write=30.0, pool=30.0),
            verify=verifying_tls_context(),
            # No cap on open connections (Codex's reqwest pool has none): with httpx's default of 100, the
            # 101st concurrent turn waits for a slot, and every pool change scans each waiting request
            # against each connection, which made 500 concurrent turns' CPU superlinear.
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=20),
        )
        self._env: Mapping[str, str] = os.environ if env is None else env
        self._stored_key = stored_key
        self._backoff = backoff
        self._policy = RetryPolicy(
            stream_max_retries=provider.stream_max_retries,
            backoff=backoff,
            network_backoff=network_backoff,
            network_retry_limit=network_retry_limit,
            max_retry_after=max_retry_after,
            sleep=sleep,
        )
        self._rng = random.Random()

    @property
    def provider(self) -> ProviderConfig:
        """The provider this client talks to."""
        return self._provider

    def worst_case_seconds(self) -> float:
        """How long one model request can wait on an unresponsive provider before it fails."""
        timeout = max(self._provider.idle_timeout_s, CONNECT_TIMEOUT_S)
        return worst_case_seconds(self._policy, self._provider.request_max_retries, timeout)

    async def aclose(self) -> None:
        """Close the HTTP client if this client created it."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def build_request(self, body: Mapping[str, object], ctx: RequestContext) -> httpx.Request:
        """The streamed ``POST /responses`` of ``body``: Codex's headers, the auth, the provider's query.

        Raises ``ModelError`` when the provider's ``env_key`` is not set.
        """
        headers = self._provider.static_headers(self._env)
        headers.update(ctx.headers())
        stored = self._stored_key() if self._stored_key and self._provider.requires_openai_auth else None
        if stored:
            headers["authorization"] = f"Bearer {stored}"
        elif self._provider.env_key:
            key = self._env.get(self._provider.env_key)
            if not key and self._provider.requires_openai_auth:
                raise errors.no_api_key(self._provider.id)
            if not key:
                raise errors.missing_env_key(self._provider.env_key)
            headers["authorization"] = f"Bearer {key}"
        elif self._provider.experimental_bearer_token:
            headers["authorization"] = f"Bearer {self._provider.experimental_bearer_token}"
        payload = dict(body)
        payload["stream"] = True
        # The body carries the whole history: encode it once, with orjson when installed. Its items were
        # parsed from strict JSON or built by us, so it holds no NaN to refuse.
        if not any(name.lower() == "content-type" for name in headers):
            headers["content-type"] = "application/json"
        return self._http.build_request(
            "POST", self._url, params=dict(self._provider.query_params) or None, headers=headers,
            content=dumps(payload, finite_checked=True),
        )

    def stream(
        self, body: Mapping[str, object], ctx: RequestContext, on_retry: RetryCallback | None = None
    ) -> AsyncIterator[ResponseEvent]:
        """Yield the events of one model response, ending after `ResponseCompleted`.

        Raises `ModelError` when the request finally fails. A retry after events were already yielded
        is preceded by `ResponseRestarted`.
        """
        return stream_with_retries(lambda: self._attempt(body, ctx), self._policy, on_retry)

    async def _attempt(
        self, body: Mapping[str, object], ctx: RequestContext
    ) -> AsyncGenerator[ResponseEvent, None]:
        """One announced attempt: silent request retries (5xx, 429, no connection), then one streamed response."""
        idle = self._provider.idle_timeout_s
        request_retries = 0
        while True:
            request = self.build_request(body, ctx)
            sent = time.monotonic()
            trace.record_http_request(request)
            try:
                try:
                    async with asyncio.timeout(idle):
                        response = await self._http.send(request, stream=True)
                except TimeoutError:
                    raise errors.idle_timeout() from None
                except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                    logger.debug("connect to %s failed: %r", self._url, exc)
                    cause = connect_failure_cause(exc)
                    raise errors.connection_failed(self._provider.id, self._base_url, cause) from exc
                except httpx.TransportError as exc:
                    raise errors.stream_broken(str(exc) or type(exc).__name__) from exc
            except errors.ModelError as failure:
                if not self._retry_request(failure, request_retries):
                    raise
                request_retries += 1
                await self._policy.sleep(self._policy.delay(failure, request_retries, self._backoff))
                continue
            logger.debug("model request to %s: HTTP %d after %.0f ms", self._url, response.status_code,
                         (time.monotonic() - sent) * 1000)
            try:
                if response.status_code // 100 != 2:
                    raw = await self._error_body(response, idle)
                    hint = retry_hint(response.headers, raw, time.time())
                    err = errors.from_http_status(response.status_code, raw, str(request.url), hint)
                    if not self._retry_request(err, request_retries):
                        raise err
                    request_retries += 1
                    await response.aclose()  # do not hold the connection through the wait
                    await self._policy.sleep(self._policy.delay(err, request_retries, self._backoff))
                    continue
                count = 0
                async with contextlib.aclosing(self._events(response, idle)) as events:
                    async for event in events:
                        count += 1
                        yield event
                logger.debug("model response streamed: %d events in %.0f ms", count, (time.monotonic() - sent) * 1000)
                return
            finally:
                await response.aclose()

    def _retry_request(self, err: errors.ModelError, done: int) -> bool:
        """Whether `err` gets one of the silent request-level retries."""
        silent = err.scope in (RetryScope.REQUEST, RetryScope.NETWORK)
        return silent and done < self._provider.request_max_retries

    @staticmethod
    async def _error_body(response: httpx.Response, idle: float) -> str:
        """The first `MAX_ERROR_BODY` bytes of an error answer ("" when it cannot be read in time)."""
        raw = bytearray()
        try:
            async with asyncio.timeout(idle):
                async for chunk in response.aiter_bytes():
                    raw.extend(chunk)
                    if len(raw) >= MAX_ERROR_BODY:
                        break
        except (TimeoutError, httpx.TransportError):
            pass
        return bytes(raw[:MAX_ERROR_BODY]).decode("utf-8", "replace")

    async def _events(
        self, response: httpx.Response, idle: float
    ) -> AsyncGenerator[ResponseEvent, None]:
        decoder = SseDecoder()
        chunks = response.aiter_bytes().__aiter__()
        while True:
            try:
                async with asyncio.timeout(idle):
                    chunk = await chunks.__anext__()
            except StopAsyncIteration:
                break
            except TimeoutError:
                raise errors.idle_timeout() from None
            except httpx.RemoteProtocolError:
                raise errors.stream_closed() from None
            except httpx.TransportError as exc:
                raise errors.stream_broken(str(exc) or type(exc).__name__) from exc
            try:
                decoded = decoder.feed(chunk)
            except SseError as exc:
                raise errors.stream_broken(str(exc)) from exc
            for sse in decoded:
                trace.record("in", "model", id(response.request), sse.data)
                try:
                    event = parse_event(sse)
                except EventParseError as exc:
                    # Codex skips events it cannot decode; so do we.
                    logger.debug("skipping undecodable SSE event: %s", exc)
                    continue
                if isinstance(event, ResponseFailed):
                    raise errors.from_response_failed(event.code, event.message)
                yield event
                if isinstance(event, ResponseCompleted):
                    return
        decoder.finish()
        raise errors.stream_closed()
