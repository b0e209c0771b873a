"""Harness configuration of a Noise remote environment, read from the app-server's environment variables.

``CODEX_EXEC_SERVER_NOISE_REGISTRY_URL`` (base URL), ``CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID``,
``CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN`` and optional ``CODEX_EXEC_SERVER_NOISE_CHATGPT_ACCOUNT_ID``
(exec_server.md §5.4). The token never appears in ``repr`` or error messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

__all__ = [
    "ACCOUNT_ID_ENV_VAR",
    "AUTH_TOKEN_ENV_VAR",
    "ENVIRONMENT_ID_ENV_VAR",
    "REGISTRY_URL_ENV_VAR",
    "NoiseRemoteConfig",
    "RemoteConfigError",
]

REGISTRY_URL_ENV_VAR = "CODEX_EXEC_SERVER_NOISE_REGISTRY_URL"
ENVIRONMENT_ID_ENV_VAR = "CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID"
AUTH_TOKEN_ENV_VAR = "CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN"
ACCOUNT_ID_ENV_VAR = "CODEX_EXEC_SERVER_NOISE_CHATGPT_ACCOUNT_ID"
_REQUIRED = (REGISTRY_URL_ENV_VAR, ENVIRONMENT_ID_ENV_VAR, AUTH_TOKEN_ENV_VAR)


class RemoteConfigError(ValueError):
    """The Noise remote environment variables are incomplete or malformed."""


@dataclass(frozen=True)
class NoiseRemoteConfig:
    """How a harness reaches a remote environment: registry URL, environment id and its credentials."""

    registry_url: str
    environment_id: str
    auth_token: str = field(repr=False)
    chatgpt_account_id: str | None = None

    def __post_init__(self) -> None:
        url = urlsplit(self.registry_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise RemoteConfigError(
                f"{REGISTRY_URL_ENV_VAR} must be an http(s) URL, got {self.registry_url!r}"
            )
        if not self.environment_id:
            raise RemoteConfigError(f"{ENVIRONMENT_ID_ENV_VAR} must not be empty")
        if not self.auth_token:
            raise RemoteConfigError(f"{AUTH_TOKEN_ENV_VAR} must not be empty")

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> NoiseRemoteConfig | None:
        """None when no Noise variable is set; the config when all three required ones are.

        Raises:
            RemoteConfigError: some but not all required variables are set, or one is malformed.
        """
        present = [name for name in _REQUIRED if environ.get(name, "").strip()]
        if not present:
            return None
        missing = [name for name in _REQUIRED if name not in present]
        if missing:
            raise RemoteConfigError(f"Noise remote environment is incomplete: {', '.join(missing)} not set")
        account = environ.get(ACCOUNT_ID_ENV_VAR, "").strip() or None
        return cls(
            registry_url=environ[REGISTRY_URL_ENV_VAR].strip(),
            environment_id=environ[ENVIRONMENT_ID_ENV_VAR].strip(),
            auth_token=environ[AUTH_TOKEN_ENV_VAR].strip(),
            chatgpt_account_id=account,
        )
