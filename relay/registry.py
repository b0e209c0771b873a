"""The development environment registry: ``register``, ``connect`` and ``validate`` over HTTP.

Development tool, not a production control plane: state lives in memory, tokens are static bearer
strings, and every decision is local. Routes (exec_server.md §5), all ``POST`` with JSON bodies and
``Authorization: Bearer <token>`` checked against the configured token set:

* ``/cloud/environment/{id}/register`` — an executor registers its static key; the answer names the
  rendezvous URL (with a per-registration ticket), ``noise_hybrid_ik_v1`` and a fresh
  ``executor_registration_id``. Registering again replaces the previous registration.
* ``/cloud/environment/{id}/connect`` — a harness asks for the bundle: rendezvous URL (single-use
  ticket), the executor key to pin, and a ``harness_key_authorization`` bound by HMAC to the harness key.
* ``/cloud/environment/{id}/validate`` — the executor checks a harness key before handshake message 2
  (header ``x-codex-noise-stream-id``). A wrong authorization is 401 (the executor then sends the
  authenticated rejection marker); otherwise the configurable :class:`AuthorizationPolicy` decides.
"""

from __future__ import annotations

import base64
import enum
import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import quote

from exec_client.wire.noise import SECURITY_PROFILE, HybridPublicKey, NoiseKeyError
from pycodex.json_types import JsonObj
from relay.http import HttpRequest, HttpResponse, json_error, json_response

__all__ = [
    "STREAM_ID_HEADER",
    "AuthorizationDecision",
    "AuthorizationPolicy",
    "DevRegistry",
    "Registration",
    "ValidationRequest",
    "fixed_policy",
]

log = logging.getLogger(__name__)

STREAM_ID_HEADER = "x-codex-noise-stream-id"
_PREFIX = "/cloud/environment/"
_HARNESS_TICKET_TTL_S = 300.0
_MAX_HARNESS_TICKETS = 4096


class AuthorizationDecision(enum.Enum):
    """What ``/validate`` answers for a correctly authorized harness key."""

    ALLOW = "allow"  # 200 {"valid": true}: the executor completes the handshake
    INVALID = "invalid"  # 200 {"valid": false}: the executor resets the stream
    UNAUTHORIZED = "unauthorized"  # 401: the executor sends the authenticated rejection marker
    FORBIDDEN = "forbidden"  # 403: the executor resets the stream
    UNAVAILABLE = "unavailable"  # 503: the executor resets the stream


@dataclass(frozen=True)
class ValidationRequest:
    """What the validate route asks the authorization policy about: which harness key wants which stream."""

    environment_id: str
    stream_id: str
    harness_key: HybridPublicKey


AuthorizationPolicy = Callable[[ValidationRequest], AuthorizationDecision]


def fixed_policy(decision: AuthorizationDecision) -> AuthorizationPolicy:
    """A policy answering every correctly authorized key the same way."""
    return lambda _request: decision


@dataclass(frozen=True)
class Registration:
    """An executor's registration of one environment: its Noise key and the ticket of its rendezvous URL."""

    environment_id: str
    registration_id: str
    executor_key: HybridPublicKey
    #: Capability in the executor's rendezvous URL; valid until the environment registers again.
    ticket: str = ""


class DevRegistry:
    """In-memory registry state plus its HTTP handler (:meth:`handle`)."""

    def __init__(
        self,
        tokens: Iterable[str],
        *,
        policy: AuthorizationPolicy | None = None,
        rendezvous_url: str = "",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._token_digests = [hashlib.sha256(t.encode()).digest() for t in tokens if t]
        if not self._token_digests:
            raise ValueError("the development registry needs at least one non-empty bearer token")
        self._policy = policy or fixed_policy(AuthorizationDecision.ALLOW)
        #: Base ``ws://host:port`` of the rendezvous; set once it is listening.
        self.rendezvous_url = rendezvous_url
        self._clock = clock
        self._secret = secrets.token_bytes(32)
        self._registrations: dict[str, Registration] = {}
        self._harness_tickets: dict[str, tuple[str, float]] = {}
        #: Per-environment executor tokens (digest -> environment id), minted for one box each: they let
        #: that box ``register`` and ``validate`` as its own environment and nothing else.
        self._scoped: dict[bytes, str] = {}
        #: Recent requests (method, path, stream id header) without credentials, for tests and logs.
        self.request_log: list[tuple[str, str, str | None]] = []

    # -- state queries used by the rendezvous -----------------------------------------------------

    def registration(self, environment_id: str) -> Registration | None:
        """The environment's current registration, or None if it never registered."""
        return self._registrations.get(environment_id)

    def check_environment_ticket(self, environment_id: str, ticket: str) -> bool:
        """True if ``ticket`` is the environment's current executor ticket (compared in constant time)."""
        reg = self._registrations.get(environment_id)
        return reg is not None and hmac.compare_digest(reg.ticket.encode(), ticket.encode())

    def claim_harness_ticket(self, environment_id: str, ticket: str) -> bool:
        """Single use: a harness gets a fresh ticket from ``/connect`` before every dial."""
        entry = self._harness_tickets.pop(ticket, None)
        if entry is None:
            return False
        env, expires = entry
        return env == environment_id and self._clock() < expires

    def grant(self, environment_id: str) -> str:
        """A new bearer token accepted only for ``environment_id``'s register and validate routes."""
        token = secrets.token_urlsafe(32)
        self._scoped[hashlib.sha256(token.encode()).digest()] = environment_id
        return token

    def revoke(self, environment_id: str) -> None:
        """Withdraw the environment's granted tokens and forget its registration (its box is gone)."""
        self._scoped = {d: env for d, env in self._scoped.items() if env != environment_id}
        self._registrations.pop(environment_id, None)

    # -- HTTP ---------------------------------------------------------------------------------------

    async def handle(self, request: HttpRequest) -> HttpResponse:
        """Serve one registry request: ``register``, ``connect`` or ``validate`` of an environment."""
        if not request.path.startswith(_PREFIX):
            return json_error(404, "not_found", f"no route for {request.path}")
        environment_id, _, action = request.path[len(_PREFIX) :].rpartition("/")
        if not environment_id or action not in ("register", "connect", "validate"):
            return json_error(404, "not_found", f"no route for {request.path}")
        if request.method != "POST":
            return json_error(405, "method_not_allowed", f"{action} takes POST")
        self.request_log.append((request.method, request.path, request.headers.get(STREAM_ID_HEADER)))
        del self.request_log[:-256]
        header = request.headers.get("authorization", "")
        if not (self._authorized(header) or self._granted(header, environment_id, action)):
            return json_error(401, "unauthorized", "missing or invalid bearer token")
        try:
            body = json.loads(request.body)
        except (ValueError, UnicodeDecodeError):
            return json_error(400, "invalid_json", "request body is not JSON")
        if not isinstance(body, dict):
            return json_error(400, "invalid_json", "request body must be a JSON object")
        if action == "register":
            return self._register(environment_id, body)
        if action == "connect":
            return self._connect(environment_id, body)
        return self._validate(environment_id, request.headers.get(STREAM_ID_HEADER, ""), body)

    def _authorized(self, header: str) -> bool:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return False
        digest = hashlib.sha256(token.strip().encode()).digest()
        # Compare against every digest so timing does not tell which token is close.
        return sum(hmac.compare_digest(digest, known) for known in self._token_digests) > 0

    def _granted(self, header: str, environment_id: str, action: str) -> bool:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip() or action == "connect":
            return False  # a box's token never opens harness streams
        return self._scoped.get(hashlib.sha256(token.strip().encode()).digest()) == environment_id

    def _register(self, environment_id: str, body: JsonObj) -> HttpResponse:
        if body.get("security_profile") != SECURITY_PROFILE:
            return json_error(
                400, "unsupported_security_profile", f"security_profile must be {SECURITY_PROFILE!r}"
            )
        try:
            key = HybridPublicKey.from_json(body.get("executor_public_key"))
        except NoiseKeyError as exc:
            return json_error(400, "invalid_public_key", f"executor_public_key: {exc}")
        registration = Registration(
            environment_id, f"reg-{secrets.token_hex(8)}", key, ticket=secrets.token_urlsafe(24)
        )
        self._registrations[environment_id] = registration
        log.info("environment %s registered (%s)", environment_id, registration.registration_id)
        return json_response(
            200,
            {
                "environment_id": environment_id,
                "url": self._relay_url(environment_id, "environment", registration.ticket),
                "security_profile": SECURITY_PROFILE,
                "executor_registration_id": registration.registration_id,
            },
        )

    def _connect(self, environment_id: str, body: JsonObj) -> HttpResponse:
        registration = self._registrations.get(environment_id)
        if registration is None:
            return json_error(
                404, "environment_not_found", f"environment {environment_id!r} is not registered"
            )
        try:
            harness_key = HybridPublicKey.from_json(body.get("harness_public_key"))
        except NoiseKeyError as exc:
            return json_error(400, "invalid_public_key", f"harness_public_key: {exc}")
        self._expire_tickets()
        ticket = secrets.token_urlsafe(24)
        self._harness_tickets[ticket] = (environment_id, self._clock() + _HARNESS_TICKET_TTL_S)
        return json_response(
            200,
            {
                "environment_id": environment_id,
                "url": self._relay_url(environment_id, "harness", ticket),
                "security_profile": SECURITY_PROFILE,
                "executor_registration_id": registration.registration_id,
                "executor_public_key": registration.executor_key.to_json(),
                "harness_key_authorization": self._authorization(registration, harness_key),
            },
        )

    def _validate(self, environment_id: str, stream_id: str, body: JsonObj) -> HttpResponse:
        if not stream_id:
            return json_error(400, "missing_stream_id", f"the {STREAM_ID_HEADER} header is required")
        registration = self._registrations.get(environment_id)
        if registration is None or body.get("executor_registration_id") != registration.registration_id:
            return json_error(404, "registration_not_found", "unknown or superseded executor registration")
        try:
            harness_key = HybridPublicKey.from_json(body.get("harness_public_key"))
        except NoiseKeyError as exc:
            return json_error(400, "invalid_public_key", f"harness_public_key: {exc}")
        presented = body.get("harness_key_authorization")
        expected = self._authorization(registration, harness_key)
        if not isinstance(presented, str) or not hmac.compare_digest(presented.encode(), expected.encode()):
            return json_error(401, "harness_key_unauthorized", "the harness key authorization is not valid")
        decision = self._policy(ValidationRequest(environment_id, stream_id, harness_key))
        log.info("validate %s stream %s: %s", environment_id, stream_id, decision.value)
        if decision is AuthorizationDecision.ALLOW:
            return json_response(200, {"valid": True})
        if decision is AuthorizationDecision.INVALID:
            return json_response(200, {"valid": False})
        if decision is AuthorizationDecision.UNAUTHORIZED:
            return json_error(
                401, "harness_key_unauthorized", "the registry policy rejected this harness key"
            )
        if decision is AuthorizationDecision.FORBIDDEN:
            return json_error(403, "forbidden", "the registry policy forbids this harness key")
        return json_error(503, "unavailable", "the registry policy is unavailable")

    # -- helpers ------------------------------------------------------------------------------------

    def _authorization(self, registration: Registration, harness_key: HybridPublicKey) -> str:
        """Opaque to both peers: an HMAC binding the harness key to this registration."""
        message = b"\0".join(
            (
                registration.environment_id.encode(),
                registration.registration_id.encode(),
                harness_key.x25519,
                harness_key.mlkem768,
            )
        )
        mac = hmac.new(self._secret, message, hashlib.sha256).digest()
        return "v1." + base64.urlsafe_b64encode(mac).decode().rstrip("=")

    def _relay_url(self, environment_id: str, role: str, ticket: str) -> str:
        if not self.rendezvous_url:
            raise RuntimeError("the rendezvous URL is not set yet")
        return f"{self.rendezvous_url}/relay/{quote(environment_id, safe='')}?role={role}&ticket={ticket}"

    def _expire_tickets(self) -> None:
        now = self._clock()
        for ticket, (_, expires) in list(self._harness_tickets.items()):
            if expires <= now:
                del self._harness_tickets[ticket]
        while len(self._harness_tickets) >= _MAX_HARNESS_TICKETS:
            del self._harness_tickets[next(iter(self._harness_tickets))]
