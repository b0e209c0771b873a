"""Model errors and their mapping to Codex's TurnError payloads (message + codexErrorInfo).

The texts and categories were observed on Codex 0.169.0 against a fake Responses server. Both the HTTP
client and the scripted provider build their errors here, so a turn cannot tell them apart.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass

from app_server.model.retry_hints import parse_try_again_in
from pycodex.json_types import JsonObj

HIGH_DEMAND = "We’re currently experiencing high demand, which may cause temporary errors."
USAGE_LIMIT = "You’ve hit your usage limit. Try again later."
CONTEXT_WINDOW = (
    "Codex ran out of room in the model's context window. "
    "Start a new thread or clear earlier history before retrying."
)
DISCONNECTED = "stream disconnected before completion: "
STREAM_CLOSED = DISCONNECTED + "stream closed before response.completed"
IDLE_TIMEOUT = DISCONNECTED + "idle timeout waiting for SSE"
CONNECTION_FAILED = "Connection failed: error sending request"
WAITING_FOR_NETWORK = "Reconnecting... waiting for network"

# response.failed codes that retrying cannot fix.
_FATAL_FAILED_CODES = frozenset({"context_length_exceeded", "insufficient_quota", "usage_not_included"})

_REASONS = {
    400: "Bad Request",
    401: "Unauthorized",
    402: "Payment Required",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    409: "Conflict",
    413: "Payload Too Large",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
}


@dataclass(frozen=True)
class TurnErrorPayload:
    """The wire `TurnError`: `{message, codexErrorInfo, additionalDetails, misalignment}`."""

    message: str
    codex_error_info: str | JsonObj
    additional_details: str | None = None

    def to_wire(self) -> JsonObj:
        """The v2 TurnError dict."""
        return {
            "message": self.message,
            "codexErrorInfo": self.codex_error_info,
            "additionalDetails": self.additional_details,
            "misalignment": None,
        }


class RetryScope(enum.Enum):
    """Which retry budget an error may use (Codex has two, plus an unbounded network wait)."""

    NONE = "none"  # fatal: fail the turn now
    STREAM = "stream"  # stream_max_retries, each retry announced
    REQUEST = "request"  # request_max_retries silently, then stream_max_retries
    NETWORK = "network"  # could not connect: like REQUEST, but announced as "waiting for network"


class ModelError(Exception):
    """A model request failed. `payload` is what the turn reports; `scope` drives retries.

    `retry_after` is the server's requested delay in seconds (Retry-After and friends), if any.
    """

    def __init__(
        self,
        payload: TurnErrorPayload,
        scope: RetryScope,
        http_status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(payload.message)
        self.payload = payload
        self.scope = scope
        self.http_status = http_status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        """Whether an announced retry may follow this failure."""
        return self.scope is not RetryScope.NONE

    def __repr__(self) -> str:
        return (
            f"ModelError({self.payload.message!r}, scope={self.scope.value}, http_status={self.http_status})"
        )


@dataclass(frozen=True)
class RetryNotice:
    """Handed to `on_retry` before a retry. `payload` is what Codex sends in `error` with willRetry=true."""

    attempt: int  # 1-based
    max_attempts: int | None  # None while waiting for the network
    cause: ModelError
    payload: TurnErrorPayload


def retry_notice(attempt: int, max_attempts: int | None, cause: ModelError) -> RetryNotice:
    """The ``error`` notice (willRetry) of retry ``attempt`` of ``max_attempts`` after ``cause``."""
    if cause.scope is RetryScope.NETWORK:
        message = WAITING_FOR_NETWORK
    else:
        message = f"Reconnecting... {attempt}/{max_attempts}"
    payload = TurnErrorPayload(
        message=message,
        codex_error_info={"responseStreamDisconnected": {"httpStatusCode": cause.http_status}},
        additional_details=cause.payload.message,
    )
    return RetryNotice(attempt=attempt, max_attempts=max_attempts, cause=cause, payload=payload)


def _json_error(body: str) -> JsonObj:
    try:
        data = json.loads(body)
    except ValueError:
        return {}
    error = data.get("error") if isinstance(data, dict) else None
    return error if isinstance(error, dict) else {}


def from_http_status(status: int, body: str, url: str, retry_after: float | None = None) -> ModelError:
    """Map a non-2xx answer to the error Codex reports for it; `retry_after` is the server's hint."""
    error = _json_error(body)
    kind = error.get("type") or error.get("code")
    if status == 429 and kind == "usage_limit_reached":
        return ModelError(TurnErrorPayload(USAGE_LIMIT, "usageLimitExceeded"), RetryScope.NONE, status)
    if status == 429:
        # Codex gives up on the first 429; we retry it like a 5xx, after the server's hint if it sent one.
        return ModelError(
            TurnErrorPayload(
                f"exceeded retry limit, last status: 429 {_REASONS[429]}",
                {"responseTooManyFailedAttempts": {"httpStatusCode": 429}},
            ),
            RetryScope.REQUEST,
            status,
            retry_after,
        )
    if status >= 500:
        # Codex drops the status here: its retry notices say `httpStatusCode: null` for a 5xx.
        return ModelError(
            TurnErrorPayload(HIGH_DEMAND, "internalServerError"), RetryScope.REQUEST, None, retry_after
        )
    if status == 400:
        if kind == "context_length_exceeded" or error.get("code") == "context_length_exceeded":
            return ModelError(
                TurnErrorPayload(CONTEXT_WINDOW, "contextWindowExceeded"), RetryScope.NONE, status
            )
        message = error.get("message")
        if isinstance(message, str) and message:
            # Codex 0.169 puts the whole JSON body in the message; the provider's own sentence is what a user
            # (or an SDK showing `turn.error.message`) needs. The body stays in additionalDetails.
            return ModelError(TurnErrorPayload(message, "other", additional_details=body), RetryScope.NONE, status)
        return ModelError(TurnErrorPayload(body, "other"), RetryScope.NONE, status)
    detail = error.get("message") if isinstance(error.get("message"), str) else body
    reason = _REASONS.get(status, "")
    status_text = f"{status} {reason}".rstrip()
    return ModelError(
        TurnErrorPayload(
            f"unexpected status {status_text}: {detail}, url: {url}",
            {"httpConnectionFailed": {"httpStatusCode": status}},
        ),
        RetryScope.STREAM,
        status,
        retry_after,
    )


def from_response_failed(code: str | None, message: str) -> ModelError:
    """Map a `response.failed` event (also `error` / `response.incomplete`)."""
    if code == "context_length_exceeded":
        return ModelError(TurnErrorPayload(CONTEXT_WINDOW, "contextWindowExceeded"), RetryScope.NONE)
    if code in ("insufficient_quota", "usage_not_included"):
        return ModelError(TurnErrorPayload(USAGE_LIMIT, "usageLimitExceeded"), RetryScope.NONE)
    scope = RetryScope.NONE if code in _FATAL_FAILED_CODES else RetryScope.STREAM
    # As in Codex, only a rate-limit failure's "try again in 1.5s" text sets the delay.
    hint = parse_try_again_in(message) if code == "rate_limit_exceeded" else None
    return ModelError(TurnErrorPayload(DISCONNECTED + message, "other"), scope, retry_after=hint)


def stream_closed() -> ModelError:
    """The stream ended before ``response.completed`` (retried like a disconnect)."""
    return ModelError(TurnErrorPayload(STREAM_CLOSED, "other"), RetryScope.STREAM)


def idle_timeout() -> ModelError:
    """Nothing arrived from the provider within its idle timeout (retried like a disconnect)."""
    return ModelError(TurnErrorPayload(IDLE_TIMEOUT, "other"), RetryScope.STREAM)


def stream_broken(reason: str) -> ModelError:
    """The connection failed while reading the body (reset, protocol error, undecodable event)."""
    return ModelError(TurnErrorPayload(DISCONNECTED + reason, "other"), RetryScope.STREAM)


def connection_failed(provider_id: str, base_url: str, cause: str) -> ModelError:
    """The request could not be sent. Codex says only "error sending request"; we say where and why."""
    return ModelError(
        TurnErrorPayload(
            f"{CONNECTION_FAILED} to model provider `{provider_id}` ({base_url}): {cause}",
            {"responseStreamConnectionFailed": {"httpStatusCode": None}},
        ),
        RetryScope.NETWORK,
    )


def retry_hint_too_long(cause: ModelError, hint: float, cap: float) -> ModelError:
    """The server asked for a longer wait than we hold a turn open for: fail now and say so."""
    message = (
        f"{cause.payload.message} (the server asked to retry after {hint:g}s, "
        f"longer than the {cap:g}s this client waits; giving up)"
    )
    payload = TurnErrorPayload(message, cause.payload.codex_error_info, cause.payload.additional_details)
    return ModelError(payload, RetryScope.NONE, cause.http_status, hint)


def missing_env_key(env_key: str) -> ModelError:
    """The provider names an `env_key` that is not set: Codex fails the turn without a request."""
    return ModelError(
        TurnErrorPayload(f"Missing environment variable: `{env_key}`.", "other"), RetryScope.NONE
    )


NO_API_KEY = (
    "No API key for model provider `{provider}`: set OPENAI_API_KEY (or CODEX_API_KEY), log in with an API key, "
    "or choose another provider with `model_provider` in CODEX_HOME/config.toml. "
    "To try pycodex offline, run `pycodex demo` or pass `--model scripted`."
)


def no_api_key(provider_id: str) -> ModelError:
    """The OpenAI provider has no key at all (no login, no variable): fail the turn without a request.

    Codex sends the request anyway and fails on OpenAI's 401 after its retries; the turn error keeps that
    shape (`httpConnectionFailed` 401, so a client treats it as an auth failure) and says how to fix it.
    """
    return ModelError(
        TurnErrorPayload(NO_API_KEY.format(provider=provider_id), {"httpConnectionFailed": {"httpStatusCode": 401}}),
        RetryScope.NONE,
        401,
    )
