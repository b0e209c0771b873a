"""The announced retry loop shared by the HTTP client and the scripted provider.

Codex restarts a failed model request up to `stream_max_retries` times and tells the client about each
retry with an `error` notification (willRetry=true, "Reconnecting... n/max"); a connection that cannot
be opened is announced as "waiting for network". Fatal errors end the loop at once.

Unlike Codex 0.169 (which waits for the network forever and ignores Retry-After), every wait here is
bounded, so a turn always ends: connection failures share the `stream_max_retries` budget, each sleep
is at most `MAX_BACKOFF_S`, and a server that asks for more than `max_retry_after` seconds gets no
retry at all. `worst_case_seconds()` adds it up.
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
Sleep = Callable[[float], Awaitable[None]]

#: No computed backoff sleeps longer than this (Codex's doubling would reach hours at 100 retries).
MAX_BACKOFF_S = 30.0
#: The longest Retry-After (or "try again in") we honour; a longer hint fails the request at once.
DEFAULT_MAX_RETRY_AFTER_S = 60.0


def default_backoff(attempt: int, rng: random.Random) -> float:
    """Codex's schedule: 200 ms doubled per attempt, with ±10 % jitter."""
    return 0.2 * 2.0 ** min(max(attempt - 1, 0), 16) * rng.uniform(0.9, 1.1)


def default_network_backoff(attempt: int, rng: random.Random) -> float:
    """While waiting for the network Codex polls every few seconds, growing slowly."""
    return min(5.0 * attempt, 30.0) * rng.uniform(0.9, 1.1)


def no_backoff(attempt: int, rng: random.Random) -> float:
    """No wait between retries (tests)."""
    return 0.0


@dataclass(frozen=True)
class RetryPolicy:
    """How failed model requests are retried: budgets, backoffs, the cap on a server's hint, the sleep."""

    stream_max_retries: int
    backoff: Backoff = default_backoff
    network_backoff: Backoff = default_network_backoff
    # How many announced "waiting for network" retries; None: the stream_max_retries budget.
    network_retry_limit: int | None = None
    max_retry_after: float = DEFAULT_MAX_RETRY_AFTER_S
    sleep: Sleep = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random, compare=False)

    @property
    def network_retries(self) -> int:
        """How many announced "waiting for network" retries are allowed."""
        return self.stream_max_retries if self.network_retry_limit is None else self.network_retry_limit

    @property
    def max_delay(self) -> float:
        """The longest single sleep between two attempts."""
        return max(MAX_BACKOFF_S, self.max_retry_after)

    def delay(self, err: ModelError, attempt: int, backoff: Backoff) -> float:
        """How long to sleep before retrying `err`; raises when the server wants longer than we wait."""
        if err.retry_after is not None:
            if err.retry_after > self.max_retry_after:
                raise errors.retry_hint_too_long(err, err.retry_after, self.max_retry_after) from err
            return err.retry_after
        return min(max(backoff(attempt, self.rng), 0.0), MAX_BACKOFF_S)


def worst_case_seconds(policy: RetryPolicy, request_max_retries: int, attempt_timeout: float) -> float:
    """An upper bound on how long one model request can take against a provider that sends nothing useful.

    Each announced attempt makes up to `1 + request_max_retries` requests. A request that fails waits at
    most `attempt_timeout` (the connect or idle timeout) for its answer's headers and as long again for
    an error body; between any two requests there is one sleep of at most `policy.max_delay`. (A stream
    that keeps delivering events is progress, not a wait, and is not bounded here.)
    """
    announced = 1 + max(policy.stream_max_retries, policy.network_retries)
    requests = announced * (1 + request_max_retries)
    return requests * 2 * attempt_timeout + (requests - 1) * policy.max_delay


async def announce(on_retry: RetryCallback | None, notice: RetryNotice) -> None:
    """Tell ``on_retry`` about a retry (awaiting what it returns when that is awaitable)."""
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
                if network_retries >= policy.network_retries:
                    raise
                network_retries += 1
                notice = errors.retry_notice(network_retries, None, err)
                delay = policy.delay(err, network_retries, policy.network_backoff)
            elif err.retryable and stream_retries < policy.stream_max_retries:
                stream_retries += 1
                notice = errors.retry_notice(stream_retries, policy.stream_max_retries, err)
                delay = policy.delay(err, stream_retries, policy.backoff)
            else:
                raise
            logger.info("model request failed: %s (%s)", err.payload.message, notice.payload.message)
            await announce(on_retry, notice)
            if yielded:
                yield ResponseRestarted(attempt=notice.attempt)
            await policy.sleep(delay)
