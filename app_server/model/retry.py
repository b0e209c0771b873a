"""The announced retry loop shared by the HTTP client and the scripted provider.

Codex restarts a failed model request up to `stream_max_retries` times and tells the client about each
retry with an `error` notification (willRetry=true, "Reconnecting... n/max"); a connection that cannot
be opened is retried while "waiting for network". Fatal errors end the loop at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import random
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

from app_server.model import errors
from app_server.model.errors import ModelError, RetryNotice, RetryScope
from app_server.model.events import ResponseEvent, ResponseRestarted

logger = logging.getLogger(__name__)

RetryCallback = Callable[[RetryNotice], Awaitable[None] | None]
Backoff = Callable[[int, random.Random], float]


def default_backoff(attempt: int, rng: random.Random) -> float:
    """Codex's schedule: 200 ms doubled per attempt, with ±10 % jitter."""
    return 0.2 * 2.0 ** max(attempt - 1, 0) * rng.uniform(0.9, 1.1)


def default_network_backoff(attempt: int, rng: random.Random) -> float:
    """While waiting for the network Codex polls every few seconds, growing slowly."""
    return min(5.0 * attempt, 30.0) * rng.uniform(0.9, 1.1)


def no_backoff(attempt: int, rng: random.Random) -> float:
    return 0.0


@dataclass(frozen=True)
class RetryPolicy:
    stream_max_retries: int
    backoff: Backoff = default_backoff
    network_backoff: Backoff = default_network_backoff
    network_retry_limit: int | None = None  # None: wait for the network forever, as Codex does
    rng: random.Random = field(default_factory=random.Random, compare=False)


async def announce(on_retry: RetryCallback | None, notice: RetryNotice) -> None:
    if on_retry is None:
        return
    result = on_retry(notice)
    if inspect.isawaitable(result):
        await result


async def stream_with_retries(
    attempt: Callable[[], AsyncGenerator[ResponseEvent, None]],
    policy: RetryPolicy,
    on_retry: RetryCallback | None,
) -> AsyncIterator[ResponseEvent]:
    """Run `attempt()` until one succeeds or a failure may not be retried (then raise it)."""
    stream_retries = 0
    network_retries = 0
    while True:
        yielded = False
        try:
            async with contextlib.aclosing(attempt()) as events:
                async for event in events:
                    yielded = True
                    yield event
            return
        except ModelError as err:
            if err.scope is RetryScope.NETWORK:
                network_retries += 1
                if policy.network_retry_limit is not None and network_retries > policy.network_retry_limit:
                    raise
                notice = errors.retry_notice(network_retries, None, err)
                delay = policy.network_backoff(network_retries, policy.rng)
            elif err.retryable and stream_retries < policy.stream_max_retries:
                stream_retries += 1
                notice = errors.retry_notice(stream_retries, policy.stream_max_retries, err)
                delay = policy.backoff(stream_retries, policy.rng)
            else:
                raise
            logger.info("model request failed: %s (%s)", err.payload.message, notice.payload.message)
            await announce(on_retry, notice)
            if yielded:
                yield ResponseRestarted(attempt=notice.attempt)
            await asyncio.sleep(delay)
