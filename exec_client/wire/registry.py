"""HTTP calls to the environment registry (exec_server.md §5), shared by harness and executor.

Owns the request shape Codex uses (JSON body, ``Authorization: Bearer``, ``Accept: */*``, no
User-Agent), the error text (``environment registry request failed (<status>, <code>): <message>``)
and the strict parsing of the ``register`` and ``connect`` answers. Tokens never enter messages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from http import HTTPStatus

import httpx

from exec_client.wire.noise import SECURITY_PROFILE, HybridPublicKey, NoiseKeyError
from pycodex.json_types import JsonObj

__all__ = [
    "MAX_ANSWER_BYTES",
    "REQUEST_TIMEOUT_S",
    "ConnectBundle",
    "Registration",
    "RegistryError",
    "RegistryResponseError",
    "environment_path",
    "new_http_client",
    "parse_connect",
    "parse_register",
    "post_json",
    "request_connect",
]

REQUEST_TIMEOUT_S = 10.0
#: Registry answers are a few hundred bytes; a bigger one is refused instead of held in memory.
MAX_ANSWER_BYTES = 1024 * 1024


class RegistryError(Exception):
    """The registry answered with an HTTP error (``status``; ``code`` from its error body, if any)."""

    def __init__(self, status: int, code: str | None, message: str) -> None:
        phrase = _phrase(status)
        where = f"{status} {phrase}".strip() + (f", {code}" if code else "")
        super().__init__(f"environment registry request failed ({where}): {message}")
        self.status = status
        self.code = code
        self.detail = message


class RegistryResponseError(Exception):
    """The registry could not be reached, or its answer is not what the protocol requires."""


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def new_http_client(uds: str | None = None) -> httpx.AsyncClient:
    """The HTTP client for registry calls: bounded timeout, no redirects, no proxy settings, no user agent.

    ``uds``: every request goes over that unix socket (a relay's ``--listen-unix``), whatever the URL's host.
    """
    transport = httpx.AsyncHTTPTransport(uds=uds) if uds is not None else None
    client = httpx.AsyncClient(timeout=REQUEST_TIMEOUT_S, follow_redirects=False, trust_env=False,
                               transport=transport)
    client.headers.pop("user-agent", None)  # Codex sends none
    return client


def environment_path(base_url: str, environment_id: str, action: str) -> str:
    """``{base}/cloud/environment/{id}/{action}``; like 0.169.0, the id is used as given."""
    return f"{base_url.rstrip('/')}/cloud/environment/{environment_id}/{action}"


async def post_json(
    http: httpx.AsyncClient,
    url: str,
    token: str,
    body: JsonObj,
    *,
    headers: dict[str, str] | None = None,
) -> JsonObj:
    """POST one registry request; return the JSON object of a 2xx answer.

    Raises:
        RegistryError: a non-2xx status.
        RegistryResponseError: transport failure or a 2xx body that is not a JSON object.
    """
    all_headers = {
        **(headers or {}),
        "Content-Type": "application/json",
        "Authorization": f"Bearer {token}",
        "Accept": "*/*",
    }
    content = json.dumps(body, separators=(",", ":"))
    try:
        async with http.stream("POST", url, content=content, headers=all_headers) as response:
            status, raw = response.status_code, await _read_capped(response)
    except httpx.HTTPError as exc:
        raise RegistryResponseError(f"environment registry request to {url} failed: {exc}") from exc
    if not 200 <= status < 300:
        code, message = _error_body(raw or b"")
        raise RegistryError(status, code, message)
    if raw is None:
        raise RegistryResponseError(f"environment registry answer from {url} exceeds {MAX_ANSWER_BYTES} bytes")
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise RegistryResponseError(f"environment registry answer from {url} is not JSON") from exc
    if not isinstance(value, dict):
        raise RegistryResponseError(f"environment registry answer from {url} is not a JSON object")
    return value


async def _read_capped(response: httpx.Response) -> bytes | None:
    """The answer body, or None once it is (or says it will be) over `MAX_ANSWER_BYTES`."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_ANSWER_BYTES:
        return None
    raw = bytearray()
    async for chunk in response.aiter_bytes():
        raw += chunk
        if len(raw) > MAX_ANSWER_BYTES:
            return None
    return bytes(raw)


def _error_body(content: bytes) -> tuple[str | None, str]:
    try:
        error = json.loads(content)["error"]
        code, message = error["code"], error["message"]
    except (ValueError, KeyError, TypeError):
        return None, "empty or malformed error body"
    if not isinstance(code, str) or not isinstance(message, str):
        return None, "empty or malformed error body"
    return code, message


def _required_str(body: JsonObj, name: str, what: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value:
        raise RegistryResponseError(f"{what} answer lacks a string {name!r}")
    return value


def _check_profile(body: JsonObj, what: str) -> None:
    profile = _required_str(body, "security_profile", what)
    if profile != SECURITY_PROFILE:
        raise RegistryResponseError(
            f"{what} answer has security_profile {profile!r}, expected {SECURITY_PROFILE!r}"
        )


@dataclass(frozen=True)
class Registration:
    """The ``register`` answer the executor keeps for its whole life (reconnects reuse it)."""

    environment_id: str
    url: str
    executor_registration_id: str


def parse_register(body: JsonObj) -> Registration:
    """Parse a ``/register`` answer strictly (``RegistryResponseError`` naming the bad field)."""
    what = "register"
    _check_profile(body, what)
    return Registration(
        environment_id=_required_str(body, "environment_id", what),
        url=_required_str(body, "url", what),
        executor_registration_id=_required_str(body, "executor_registration_id", what),
    )


@dataclass(frozen=True)
class ConnectBundle:
    """The ``connect`` answer: where to dial and which executor key to pin (one per dial)."""

    environment_id: str
    url: str
    executor_registration_id: str
    executor_public_key: HybridPublicKey
    harness_key_authorization: str

    def __repr__(self) -> str:
        return f"ConnectBundle(environment_id={self.environment_id!r}, registration={self.executor_registration_id!r})"


def parse_connect(body: JsonObj) -> ConnectBundle:
    """Parse a ``/connect`` answer strictly (``RegistryResponseError`` naming the bad field)."""
    what = "connect"
    _check_profile(body, what)
    try:
        key = HybridPublicKey.from_json(body.get("executor_public_key"))
    except NoiseKeyError as exc:
        raise RegistryResponseError(f"connect answer has an invalid executor_public_key: {exc}") from exc
    return ConnectBundle(
        environment_id=_required_str(body, "environment_id", what),
        url=_required_str(body, "url", what),
        executor_registration_id=_required_str(body, "executor_registration_id", what),
        executor_public_key=key,
        harness_key_authorization=_required_str(body, "harness_key_authorization", what),
    )


async def request_connect(
    http: httpx.AsyncClient,
    registry_url: str,
    environment_id: str,
    token: str,
    harness_key: HybridPublicKey,
    *,
    chatgpt_account_id: str | None = None,
) -> ConnectBundle:
    """``POST …/connect`` with ``{"harness_public_key": …}``; Codex sends it before every dial."""
    headers = {"chatgpt-account-id": chatgpt_account_id} if chatgpt_account_id else None
    body = {"harness_public_key": harness_key.to_json()}
    url = environment_path(registry_url, environment_id, "connect")
    return parse_connect(await post_json(http, url, token, body, headers=headers))
