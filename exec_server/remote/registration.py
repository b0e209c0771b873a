"""The executor's registry calls: ``register`` once per process, ``validate`` per harness stream.

``register`` sends exactly ``{"security_profile", "executor_public_key"}`` (exec_server.md §5.1);
``validate`` sends the stream id header and ``{"executor_registration_id", "harness_public_key",
"harness_key_authorization"}`` (§5.3) and maps the answer to what the executor does next.
"""

from __future__ import annotations

import asyncio
import enum
import logging

import httpx

from exec_client.wire.noise import SECURITY_PROFILE, HybridPublicKey
from exec_client.wire.registry import (
    Registration,
    RegistryError,
    RegistryResponseError,
    environment_path,
    parse_register,
    post_json,
)

__all__ = ["STREAM_ID_HEADER", "RegistryClient", "ValidationOutcome"]

log = logging.getLogger(__name__)

STREAM_ID_HEADER = "x-codex-noise-stream-id"
VALIDATE_TIMEOUT_S = 10.0


class ValidationOutcome(enum.Enum):
    """What the executor does with a harness handshake after asking ``/validate``."""

    ACCEPT = "accept"  # 200 {"valid": true}: message 2 with an empty payload
    REJECT = "reject"  # 401: message 2 with the rejection marker (an authenticated refusal)
    RESET = "reset"  # {"valid": false}, 403, 5xx, timeout, transport error: Reset the stream


class RegistryClient:
    """The executor's HTTP client of the registry: register, and validate a harness."""

    def __init__(self, http: httpx.AsyncClient, registry_url: str, environment_id: str, token: str) -> None:
        self._http = http
        self._base = registry_url
        self.environment_id = environment_id
        self._token = token

    async def register(self, executor_key: HybridPublicKey) -> Registration:
        """Raises ``RegistryError``/``RegistryResponseError``; the caller exits 1, as Codex does."""
        body = {"security_profile": SECURITY_PROFILE, "executor_public_key": executor_key.to_json()}
        url = environment_path(self._base, self.environment_id, "register")
        registration = parse_register(await post_json(self._http, url, self._token, body))
        if registration.environment_id != self.environment_id:
            raise RegistryResponseError(
                f"register answer names environment {registration.environment_id!r}, "
                f"expected {self.environment_id!r}"
            )
        return registration

    async def validate(
        self,
        registration_id: str,
        stream_id: str,
        harness_key: HybridPublicKey,
        authorization: str,
        *,
        timeout: float = VALIDATE_TIMEOUT_S,
    ) -> ValidationOutcome:
        """Ask the registry whether ``harness_key`` may open ``stream_id``: 401 rejects, any other failure
        resets."""
        body = {
            "executor_registration_id": registration_id,
            "harness_public_key": harness_key.to_json(),
            "harness_key_authorization": authorization,
        }
        url = environment_path(self._base, self.environment_id, "validate")
        try:
            answer = await asyncio.wait_for(
                post_json(self._http, url, self._token, body, headers={STREAM_ID_HEADER: stream_id}), timeout
            )
        except RegistryError as exc:
            log.warning("validate for stream %s: %s", stream_id, exc)
            return ValidationOutcome.REJECT if exc.status == 401 else ValidationOutcome.RESET
        except (RegistryResponseError, TimeoutError) as exc:
            log.warning("validate for stream %s failed: %s", stream_id, exc or "timeout")
            return ValidationOutcome.RESET
        return ValidationOutcome.ACCEPT if answer.get("valid") is True else ValidationOutcome.RESET
