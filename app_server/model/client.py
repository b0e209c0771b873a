"""The Responses API client: one streamed `POST {base_url}/responses` per model request, with retries.

Retry rules follow what Codex 0.169 does (observed with a fake server):
* HTTP 5xx is first retried silently up to `request_max_retries` times;
* then any retryable failure (5xx, 401/403/404..., `response.failed`, a truncated stream, an idle
  timeout) restarts the request up to `stream_max_retries` times, each announced through `on_retry`
  ("Reconnecting... n/max");
* a connection that cannot be opened is retried while "waiting for network", without limit unless
  `network_retry_limit` is set;
* 400, 429 and context-window errors fail at once.

Auth: `authorization: Bearer $<env_key>` when the provider names an `env_key`; if that variable is
unset or empty the request fails before it is sent ("Missing environment variable: `X`."), as in Codex.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any

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
    Backoff,
    RetryCallback,
    RetryPolicy,
    default_backoff,
    default_network_backoff,
    stream_with_retries,
)
from app_server.model.sse import SseDecoder, SseError

logger = logging.getLogger(__name__)


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
    ) -> None:
        if provider.wire_api != "responses":
            raise ValueError(f"model provider `{provider.id}`: unsupported wire_api `{provider.wire_api}`")
        self._provider = provider
        self._url = provider.responses_url()
        self._owns_http = http is None
        self._http = http or httpx.AsyncClient(
            timeout=httpx.Timeout(connect=30.0, read=None, write=30.0, pool=30.0)
        )
        self._env: Mapping[str, str] = os.environ if env is None else env
        self._backoff = backoff
        self._policy = RetryPolicy(
            stream_max_retries=provider.stream_max_retries,
            backoff=backoff,
            network_backoff=network_backoff,
            network_retry_limit=network_retry_limit,
        )
        self._rng = random.Random()

    @property
    def provider(self) -> ProviderConfig:
        return self._provider

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def build_request(self, body: Mapping[str, Any], ctx: RequestContext) -> httpx.Request:
        headers = dict(self._provider.http_headers)
        headers.update(ctx.headers())
        if self._provider.env_key:
            key = self._env.get(self._provider.env_key)
            if not key:
                raise errors.missing_env_key(self._provider.env_key)
            headers["authorization"] = f"Bearer {key}"
        payload = dict(body)
        payload["stream"] = True
        return self._http.build_request(
            "POST", self._url, params=dict(self._provider.query_params) or None, headers=headers, json=payload
        )

    def stream(
        self, body: Mapping[str, Any], ctx: RequestContext, on_retry: RetryCallback | None = None
    ) -> AsyncIterator[ResponseEvent]:
        """Yield the events of one model response, ending after `ResponseCompleted`.

        Raises `ModelError` when the request finally fails. A retry after events were already yielded
        is preceded by `ResponseRestarted`.
        """
        return stream_with_retries(lambda: self._attempt(body, ctx), self._policy, on_retry)

    async def _attempt(
        self, body: Mapping[str, Any], ctx: RequestContext
    ) -> AsyncGenerator[ResponseEvent, None]:
        """One announced attempt: silent request retries for 5xx, then one streamed response."""
        # 0 disables the idle timeout rather than failing every request at once.
        idle = self._provider.stream_idle_timeout_ms / 1000.0 or None
        request_retries = 0
        while True:
            request = self.build_request(body, ctx)
            try:
                async with asyncio.timeout(idle):
                    response = await self._http.send(request, stream=True)
            except TimeoutError:
                raise errors.idle_timeout() from None
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                logger.debug("connect to %s failed: %r", self._url, exc)
                raise errors.connection_failed() from exc
            except httpx.TransportError as exc:
                raise errors.stream_broken(str(exc) or type(exc).__name__) from exc
            try:
                if response.status_code // 100 != 2:
                    try:
                        async with asyncio.timeout(idle):
                            raw = await response.aread()
                    except (TimeoutError, httpx.TransportError):
                        raw = b""
                    err = errors.from_http_status(
                        response.status_code, raw.decode("utf-8", "replace"), str(request.url)
                    )
                    if (
                        err.scope is RetryScope.REQUEST
                        and request_retries < self._provider.request_max_retries
                    ):
                        request_retries += 1
                        await asyncio.sleep(self._backoff(request_retries, self._rng))
                        continue
                    raise err
                async with contextlib.aclosing(self._events(response, idle)) as events:
                    async for event in events:
                        yield event
                return
            finally:
                await response.aclose()

    async def _events(
        self, response: httpx.Response, idle: float | None
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
