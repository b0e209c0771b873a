"""The Responses client's retries and final errors, against httpx mocked at the transport (respx).

`tests/test_model_client.py` and `tests/test_model_retry.py` drive a fake server in a subprocess, which is the
right test for the wire. Here the answers are set per request with `respx`, so each test can say exactly what
the n-th request gets (a 429 with a hint, a 5xx, a refused connection, then a streamed success) and count the
requests that were made. Sleeps are injected and recorded: no test waits on the clock.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import httpx
import pytest
import respx

from app_server.model import ModelClient, ModelError, ProviderConfig, RequestContext, RetryNotice
from app_server.model.errors import CONNECTION_FAILED, HIGH_DEMAND, WAITING_FOR_NETWORK
from app_server.model.events import ResponseCompleted, ResponseCreated, ResponseEvent

BASE_URL = "http://model.test/v1"
URL = f"{BASE_URL}/responses"
CTX = RequestContext(
    thread_id="thr-x", turn_id="turn-x", originator="pycodex_tests", user_agent="pycodex_tests/0.1"
)
BODY = {"model": "mock-model", "input": []}
TOO_MANY = "exceeded retry limit, last status: 429 Too Many Requests"


def sse(*events: dict[str, object]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


OK_STREAM = sse(
    {"type": "response.created", "response": {"id": "resp_1"}},
    {"type": "response.completed", "response": {"id": "resp_1"}},
)


def ok() -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=OK_STREAM)


class Sleeps:
    """An injected `sleep` that records each requested delay and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def attempt_backoff(attempt: int, rng: random.Random) -> float:
    """A recognisable backoff: attempt n sleeps n/10 s (so the test can tell which attempt slept)."""
    return attempt / 10


def network_backoff(attempt: int, rng: random.Random) -> float:
    return 5.0 + attempt


def client(sleeps: Sleeps, *, request_max_retries: int = 0, stream_max_retries: int = 0) -> ModelClient:
    provider = ProviderConfig(
        id="mock_provider", name="Mock provider", base_url=BASE_URL, stream_idle_timeout_ms=5_000,
        request_max_retries=request_max_retries, stream_max_retries=stream_max_retries,
    )
    return ModelClient(
        provider, env={}, backoff=attempt_backoff, network_backoff=network_backoff, sleep=sleeps
    )


async def run(model: ModelClient, notices: list[RetryNotice] | None = None) -> list[ResponseEvent]:
    async with model:
        on_retry = None if notices is None else notices.append
        return [e async for e in model.stream(BODY, CTX, on_retry=on_retry)]


async def fail(model: ModelClient, notices: list[RetryNotice] | None = None) -> ModelError:
    with pytest.raises(ModelError) as info:
        await run(model, notices)
    return info.value


@pytest.fixture
def mock() -> Iterator[respx.MockRouter]:
    # assert_all_called: a test that sets an answer the client never asked for is wrong about the client.
    with respx.mock(assert_all_mocked=True, assert_all_called=True) as router:
        yield router


def kinds(events: list[ResponseEvent]) -> list[type[ResponseEvent]]:
    return [type(e) for e in events]


# -- 429 and the server's hint -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("headers", "body", "delay"),
    [
        ({"Retry-After": "3"}, "", 3.0),
        ({"retry-after": "0.5"}, "", 0.5),
        ({"retry-after-ms": "1500", "Retry-After": "9"}, "", 1.5),  # the millisecond header wins
        ({}, json.dumps({"error": {"message": "Rate limit reached. Please try again in 2.25s."}}), 2.25),
        ({}, "slow down; try again in 40ms", 0.04),
    ],
    ids=["Retry-After", "retry-after-fraction", "retry-after-ms", "try-again-in-s", "try-again-in-ms"],
)
async def test_a_429_waits_as_long_as_the_server_asks_then_succeeds(
    mock: respx.MockRouter, headers: dict[str, str], body: str, delay: float
) -> None:
    route = mock.post(URL).mock(side_effect=[httpx.Response(429, headers=headers, text=body), ok()])
    sleeps, notices = Sleeps(), list[RetryNotice]()
    events = await run(client(sleeps, request_max_retries=1), notices)
    assert kinds(events) == [ResponseCreated, ResponseCompleted]
    assert route.call_count == 2
    assert sleeps.delays == [delay]
    assert notices == []  # a request-level retry is silent, as in Codex


async def test_a_retry_after_beyond_the_cap_fails_at_once_and_says_why(mock: respx.MockRouter) -> None:
    route = mock.post(URL).mock(return_value=httpx.Response(429, headers={"Retry-After": "120"}))
    sleeps = Sleeps()
    err = await fail(client(sleeps, request_max_retries=3, stream_max_retries=3))
    assert route.call_count == 1
    assert sleeps.delays == []
    assert err.payload.message == (
        f"{TOO_MANY} (the server asked to retry after 120s, longer than the 60s this client waits; giving up)"
    )
    assert err.http_status == 429


async def test_a_429_without_a_hint_backs_off_per_attempt_and_reports_the_retry_limit(
    mock: respx.MockRouter,
) -> None:
    route = mock.post(URL).mock(return_value=httpx.Response(429, text="{}"))
    sleeps = Sleeps()
    err = await fail(client(sleeps, request_max_retries=2))
    assert route.call_count == 3
    assert sleeps.delays == [0.1, 0.2]
    assert err.payload.message == TOO_MANY
    assert err.payload.codex_error_info == {"responseTooManyFailedAttempts": {"httpStatusCode": 429}}


async def test_a_usage_limit_429_is_not_retried(mock: respx.MockRouter) -> None:
    body = json.dumps({"error": {"type": "usage_limit_reached", "message": "You've hit your usage limit."}})
    route = mock.post(URL).mock(return_value=httpx.Response(429, headers={"Retry-After": "1"}, text=body))
    sleeps = Sleeps()
    err = await fail(client(sleeps, request_max_retries=3, stream_max_retries=3))
    assert route.call_count == 1
    assert sleeps.delays == []
    assert err.payload.codex_error_info == "usageLimitExceeded"


# -- 5xx -----------------------------------------------------------------------------------------------------
async def test_5xx_answers_are_retried_silently_then_the_stream_succeeds(mock: respx.MockRouter) -> None:
    route = mock.post(URL).mock(
        side_effect=[httpx.Response(500), httpx.Response(502), httpx.Response(503, text="busy"), ok()]
    )
    sleeps, notices = Sleeps(), list[RetryNotice]()
    events = await run(client(sleeps, request_max_retries=3), notices)
    assert kinds(events) == [ResponseCreated, ResponseCompleted]
    assert route.call_count == 4
    assert sleeps.delays == [0.1, 0.2, 0.3]
    assert notices == []


async def test_5xx_past_both_budgets_ends_with_the_high_demand_error(mock: respx.MockRouter) -> None:
    route = mock.post(URL).mock(return_value=httpx.Response(500, text="oops"))
    sleeps, notices = Sleeps(), list[RetryNotice]()
    err = await fail(client(sleeps, request_max_retries=1, stream_max_retries=2), notices)
    # Each of the 1 + 2 announced attempts makes 1 + 1 requests.
    assert route.call_count == 6
    # Per attempt: the silent request retry sleeps backoff(1); between attempts the announced retry n sleeps
    # backoff(n).
    assert sleeps.delays == [0.1, 0.1, 0.1, 0.2, 0.1]
    assert [n.payload.message for n in notices] == ["Reconnecting... 1/2", "Reconnecting... 2/2"]
    assert all(n.payload.additional_details == HIGH_DEMAND for n in notices)
    assert err.payload.message == HIGH_DEMAND
    assert err.payload.codex_error_info == "internalServerError"


async def test_a_401_is_announced_and_its_final_message_names_status_detail_and_url(
    mock: respx.MockRouter,
) -> None:
    body = json.dumps({"error": {"message": "Incorrect API key provided"}})
    route = mock.post(URL).mock(return_value=httpx.Response(401, text=body))
    sleeps, notices = Sleeps(), list[RetryNotice]()
    err = await fail(client(sleeps, request_max_retries=3, stream_max_retries=1), notices)
    assert route.call_count == 2  # not a request-level retry: one announced restart
    assert sleeps.delays == [0.1]
    assert [n.payload.message for n in notices] == ["Reconnecting... 1/1"]
    assert err.payload.message == (
        f"unexpected status 401 Unauthorized: Incorrect API key provided, url: {URL}"
    )
    assert err.http_status == 401


# -- connections that cannot be opened -----------------------------------------------------------------------
def refused(request: httpx.Request) -> httpx.Response:
    # respx re-raises a side effect's exception `from` its own wrapper, so an OS error set as the cause here
    # would not reach the client: the message is what names the failure. (Finding ConnectionRefusedError in
    # the chain httpx really builds is tested against a closed port in tests/test_model_retry.py.)
    raise httpx.ConnectError("[Errno 111] Connection refused", request=request)


async def test_a_refused_connection_then_success(mock: respx.MockRouter) -> None:
    refusals = [httpx.ConnectError("refused"), httpx.ConnectError("refused")]
    route = mock.post(URL).mock(side_effect=[*refusals, ok()])
    sleeps, notices = Sleeps(), list[RetryNotice]()
    events = await run(client(sleeps, request_max_retries=2), notices)
    assert kinds(events) == [ResponseCreated, ResponseCompleted]
    assert route.call_count == 3
    assert sleeps.delays == [0.1, 0.2]
    assert notices == []


async def test_connection_failures_wait_for_network_then_fail_naming_provider_url_and_cause(
    mock: respx.MockRouter,
) -> None:
    route = mock.post(URL).mock(side_effect=refused)
    sleeps, notices = Sleeps(), list[RetryNotice]()
    err = await fail(client(sleeps, request_max_retries=1, stream_max_retries=2), notices)
    assert route.call_count == 6
    # The announced "waiting for network" retries use the network backoff (5 + n), the silent ones the other.
    assert sleeps.delays == [0.1, 6.0, 0.1, 7.0, 0.1]
    assert [n.payload.message for n in notices] == [WAITING_FOR_NETWORK, WAITING_FOR_NETWORK]
    assert err.payload.message == (
        f"{CONNECTION_FAILED} to model provider `mock_provider` ({BASE_URL}): [Errno 111] Connection refused"
    )
    assert err.payload.codex_error_info == {"responseStreamConnectionFailed": {"httpStatusCode": None}}


async def test_a_connect_timeout_is_named_as_such(mock: respx.MockRouter) -> None:
    route = mock.post(URL).mock(side_effect=httpx.ConnectTimeout("timed out"))
    err = await fail(client(Sleeps()))
    assert route.call_count == 1
    assert err.payload.message.endswith(f"({BASE_URL}): connect timed out")


async def test_a_transport_error_mid_request_is_a_broken_stream_retried_as_announced(
    mock: respx.MockRouter,
) -> None:
    route = mock.post(URL).mock(side_effect=[httpx.ReadError("peer reset"), ok()])
    sleeps, notices = Sleeps(), list[RetryNotice]()
    events = await run(client(sleeps, stream_max_retries=1), notices)
    assert kinds(events) == [ResponseCreated, ResponseCompleted]
    assert route.call_count == 2
    assert sleeps.delays == [0.1]
    assert [n.payload.message for n in notices] == ["Reconnecting... 1/1"]
    assert "peer reset" in (notices[0].payload.additional_details or "")
