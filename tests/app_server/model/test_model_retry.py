"""Retry waits of the Responses client: server hints honoured (and capped), connection failures bounded.

Sleeps are injected and recorded, so no test waits on the clock; what the server saw is counted in its log.
"""

from __future__ import annotations

import email.utils
import socket
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import certifi
import pytest

from app_server.model import ModelClient, ModelError, ProviderConfig, RequestContext, RetryNotice, errors
from app_server.model.client import verifying_tls_context
from app_server.model.events import ResponseCompleted, ResponseEvent
from app_server.model.retry import MAX_BACKOFF_S, RetryPolicy, default_backoff, no_backoff, worst_case_seconds
from app_server.model.retry_hints import parse_retry_after, parse_try_again_in, retry_hint
from tests.support.fake_model import FakeModel, message

CTX = RequestContext(thread_id="thr-r", turn_id="turn-r", originator="pycodex_tests", user_agent="pycodex_tests/0.1")
BODY = {"model": "mock-model", "input": []}
OK = {"output": [message("done")]}
TOO_MANY = "exceeded retry limit, last status: 429 Too Many Requests"
Start = Callable[..., Awaitable[FakeModel]]


class Sleeps:
    """An injected `sleep` that records each requested delay and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def provider(base_url: str, **overrides: Any) -> ProviderConfig:
    base = ProviderConfig(
        id="mock_provider", name="Mock provider", base_url=base_url,
        request_max_retries=0, stream_max_retries=0, stream_idle_timeout_ms=5_000,
    )
    return replace(base, **overrides)


def client_for(prov: ProviderConfig, sleeps: Sleeps, **extra: Any) -> ModelClient:
    return ModelClient(prov, env={}, backoff=no_backoff, network_backoff=no_backoff, sleep=sleeps, **extra)


async def run(client: ModelClient, notices: list[RetryNotice] | None = None) -> list[ResponseEvent]:
    async with client:
        return [e async for e in client.stream(BODY, CTX, on_retry=None if notices is None else notices.append)]


async def fail(client: ModelClient, notices: list[RetryNotice] | None = None) -> ModelError:
    with pytest.raises(ModelError) as info:
        await run(client, notices)
    return info.value


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- hint parsing -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "expected"),
    [("2", 2.0), ("0", 0.0), ("1.5", 1.5), ("-3", 0.0), ("", None), ("soon", None), ("nan", None), ("inf", None)],
)
def test_retry_after_seconds_form(value: str, expected: float | None) -> None:
    assert parse_retry_after(value, now=1_000_000.0) == expected


def test_retry_after_http_date_form_is_relative_to_now() -> None:
    now = 1_700_000_000.0
    assert parse_retry_after(email.utils.formatdate(now + 30, usegmt=True), now) == 30.0
    assert parse_retry_after(email.utils.formatdate(now - 30, usegmt=True), now) == 0.0  # already past


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Please try again in 11.054s. Visit https://platform.openai.com", 11.054),
        ("Please try again in 28ms.", 0.028),
        ("Rate limit exceeded. Try again in 35 seconds.", 35.0),
        ("Rate limit exceeded.", None),
    ],
)
def test_try_again_in_text(text: str, expected: float | None) -> None:
    assert parse_try_again_in(text) == (None if expected is None else pytest.approx(expected))


def test_retry_after_ms_wins_over_retry_after_and_the_body() -> None:
    headers = {"retry-after-ms": "250", "retry-after": "9"}
    assert retry_hint(headers, "try again in 7s", now=0.0) == 0.25
    assert retry_hint({"retry-after-ms": "x", "retry-after": "9"}, "", now=0.0) == 9.0
    assert retry_hint({}, "try again in 7s", now=0.0) == 7.0


# -- 429 and friends against the fake server ----------------------------------------------------------------
async def test_429_with_retry_after_seconds_waits_that_long_then_succeeds(fake_model: Start) -> None:
    model = await fake_model([{"status": 429, "body": "slow down", "headers": {"Retry-After": "2"}}, OK])
    sleeps = Sleeps()
    events = await run(client_for(provider(model.url, request_max_retries=2), sleeps))
    assert isinstance(events[-1], ResponseCompleted)
    assert sleeps.delays == [2.0]
    assert len(model.requests()) == 2


async def test_429_with_an_http_date_waits_until_that_time(fake_model: Start) -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    model = await fake_model([{"status": 429, "body": "", "headers": {"Retry-After": when}}, OK])
    sleeps = Sleeps()
    events = await run(client_for(provider(model.url, request_max_retries=2), sleeps))
    assert isinstance(events[-1], ResponseCompleted)
    [delay] = sleeps.delays
    assert 20.0 < delay <= 30.0  # whole-second date, minus however long the request took
    assert len(model.requests()) == 2


async def test_429_hints_in_retry_after_ms_and_in_the_body_are_honoured(fake_model: Start) -> None:
    body = {"error": {"message": "Rate limit reached. Please try again in 1.5s.", "code": "rate_limit_exceeded"}}
    model = await fake_model(
        [{"status": 429, "body": "", "headers": {"retry-after-ms": "250"}}, {"status": 429, "body": body}, OK]
    )
    sleeps = Sleeps()
    events = await run(client_for(provider(model.url, request_max_retries=2), sleeps))
    assert isinstance(events[-1], ResponseCompleted)
    assert sleeps.delays == [0.25, 1.5]
    assert len(model.requests()) == 3


async def test_a_rate_limited_response_failed_waits_for_its_try_again_in(fake_model: Start) -> None:
    failed = {"code": "rate_limit_exceeded", "message": "Rate limit reached. Please try again in 28ms."}
    model = await fake_model([{"output": [], "failed": failed}, OK])
    sleeps, notices = Sleeps(), list[RetryNotice]()
    events = await run(client_for(provider(model.url, stream_max_retries=1), sleeps), notices)
    assert isinstance(events[-1], ResponseCompleted)
    assert sleeps.delays == [pytest.approx(0.028)]
    assert [n.payload.message for n in notices] == ["Reconnecting... 1/1"]


async def test_a_retry_after_beyond_the_cap_fails_at_once_and_says_why(fake_model: Start) -> None:
    model = await fake_model([{"status": 429, "body": "", "headers": {"Retry-After": "3600"}}, OK])
    sleeps, notices = Sleeps(), list[RetryNotice]()
    prov = provider(model.url, request_max_retries=2, stream_max_retries=2)
    err = await fail(client_for(prov, sleeps, max_retry_after=60.0), notices)
    assert err.payload.message.startswith(TOO_MANY)
    assert "retry after 3600s" in err.payload.message and "60s" in err.payload.message
    assert err.payload.codex_error_info == {"responseTooManyFailedAttempts": {"httpStatusCode": 429}}
    assert (sleeps.delays, notices) == ([], [])
    assert len(model.requests()) == 1


async def test_a_429_without_a_hint_backs_off_and_fails_when_the_budget_is_spent(fake_model: Start) -> None:
    model = await fake_model([{"status": 429, "body": "busy"}] * 6)
    sleeps, notices = Sleeps(), list[RetryNotice]()
    prov = provider(model.url, request_max_retries=1, stream_max_retries=1)
    err = await fail(client_for(prov, sleeps), notices)
    assert err.payload.message == TOO_MANY
    assert len(model.requests()) == 4  # (1 + request retries) * (1 + stream retries)
    assert len(sleeps.delays) == 3
    assert [n.payload.message for n in notices] == ["Reconnecting... 1/1"]


# -- a provider that cannot be reached -------------------------------------------------------------------
@pytest.mark.parametrize("request_retries", [0, 2])
async def test_a_closed_port_fails_naming_provider_url_and_cause(request_retries: int) -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    sleeps, notices = Sleeps(), list[RetryNotice]()
    err = await fail(client_for(provider(base_url, request_max_retries=request_retries), sleeps), notices)
    assert err.payload.message == (
        f"Connection failed: error sending request to model provider `mock_provider` ({base_url}): "
        "connection refused"
    )
    assert err.payload.codex_error_info == {"responseStreamConnectionFailed": {"httpStatusCode": None}}
    assert notices == []  # request-level retries are silent
    assert len(sleeps.delays) == request_retries


async def test_connection_failures_are_announced_then_stop_at_stream_max_retries() -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    sleeps, notices = Sleeps(), list[RetryNotice]()
    err = await fail(client_for(provider(base_url, request_max_retries=1, stream_max_retries=2), sleeps), notices)
    assert "connection refused" in err.payload.message
    assert [n.payload.message for n in notices] == ["Reconnecting... waiting for network"] * 2
    assert len(sleeps.delays) == 3 * 1 + 2  # one silent retry per announced attempt, plus the two announced waits


async def test_an_unresolvable_host_is_a_dns_failure() -> None:
    base_url = "http://pycodex-model.invalid/v1"  # .invalid never resolves (RFC 6761)
    err = await fail(client_for(provider(base_url), Sleeps()))
    assert err.payload.message.startswith(
        f"Connection failed: error sending request to model provider `mock_provider` ({base_url}): DNS lookup failed"
    )


async def test_https_to_a_plain_http_server_is_a_tls_failure(fake_model: Start) -> None:
    model = await fake_model([OK])
    base_url = model.url.replace("http://", "https://")
    err = await fail(client_for(provider(base_url), Sleeps()))
    assert err.payload.message.startswith(
        f"Connection failed: error sending request to model provider `mock_provider` ({base_url}): TLS handshake failed"
    )


def test_model_clients_share_one_verifying_tls_context_per_ca_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    shared = verifying_tls_context()
    assert shared.verify_mode == ssl.CERT_REQUIRED and shared.check_hostname
    assert shared.cert_store_stats()["x509_ca"] > 0  # the CA bundle is loaded
    assert verifying_tls_context() is shared
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())  # another CA setting gets a context of its own
    assert verifying_tls_context() is not shared


# -- the budget -------------------------------------------------------------------------------------------
def test_the_worst_case_wait_is_finite_and_adds_up() -> None:
    policy = RetryPolicy(stream_max_retries=2, max_retry_after=60.0)
    # 3 announced attempts x 3 requests each, every one up to 2 x 10 s, and 8 sleeps of at most 60 s.
    assert worst_case_seconds(policy, request_max_retries=2, attempt_timeout=10.0) == 9 * 20.0 + 8 * 60.0
    # Codex allows up to 100 retries: the doubling backoff must neither overflow nor exceed the cap.
    assert policy.delay(errors.stream_closed(), 100, default_backoff) == MAX_BACKOFF_S


async def test_recorded_sleeps_stay_within_the_budget_and_idle_zero_is_bounded(fake_model: Start) -> None:
    model = await fake_model([{"status": 503, "body": "", "headers": {"Retry-After": "59"}}] * 4)
    sleeps = Sleeps()
    prov = provider(model.url, request_max_retries=1, stream_max_retries=1, stream_idle_timeout_ms=0)
    client = client_for(prov, sleeps)
    budget = client.worst_case_seconds()
    await fail(client)
    assert sleeps.delays == [59.0] * 3
    assert prov.idle_timeout_s == 300.0  # 0 does not mean "wait forever"
    assert sum(sleeps.delays) < budget < float("inf")
