"""Harness side of a Noise remote environment (registry ``connect``, rendezvous, Noise initiator).

Public API:

* ``NoiseRemoteConfig.from_env(os.environ)`` — reads ``CODEX_EXEC_SERVER_NOISE_REGISTRY_URL``,
  ``_ENVIRONMENT_ID``, ``_AUTH_TOKEN`` (+ optional ``_CHATGPT_ACCOUNT_ID``); None when unset.
* ``RemoteEnvironmentConnector(config)`` — ``await open_stream()`` (one attempt),
  ``await open_stream_retrying(attempts=6)``, ``await open_client(client_name)`` (an initialized
  ``ExecServerClient``; resumes ``connector.session_id`` after a reconnect), ``await aclose()``.
* ``HarnessStream`` — the established stream, a ``MessageChannel`` (``send``/``recv``/``close``).
* ``MessageChannel`` — the channel protocol both ends use; ``ChannelClosedError``.
* Errors: ``RemoteConnectError`` > ``RemoteAuthorizationRejected``, ``RemoteStreamReset``;
  ``RegistryError`` (HTTP status from the registry), ``RegistryResponseError``.
* Re-exported from ``exec_client.wire`` (where the executor imports them): ``post_json``,
  ``environment_path``, ``parse_register``, ``Registration``, ``data_frames``, ``Backoff``, the channel.
"""

from exec_client.remote.config import (
    ACCOUNT_ID_ENV_VAR,
    AUTH_TOKEN_ENV_VAR,
    ENVIRONMENT_ID_ENV_VAR,
    REGISTRY_URL_ENV_VAR,
    NoiseRemoteConfig,
    RemoteConfigError,
)
from exec_client.remote.connector import RemoteEnvironmentConnector
from exec_client.remote.errors import RemoteAuthorizationRejected, RemoteConnectError, RemoteStreamReset
from exec_client.remote.stream import HarnessStream, open_harness_stream
from exec_client.wire.backoff import Backoff
from exec_client.wire.channel import ChannelClosedError, MessageChannel
from exec_client.wire.registry import (
    ConnectBundle,
    Registration,
    RegistryError,
    RegistryResponseError,
    environment_path,
    new_http_client,
    parse_register,
    post_json,
    request_connect,
)
from exec_client.wire.relay_frames import MAX_RELAY_MESSAGE_BYTES, data_frames

__all__ = [
    "ACCOUNT_ID_ENV_VAR",
    "AUTH_TOKEN_ENV_VAR",
    "ENVIRONMENT_ID_ENV_VAR",
    "MAX_RELAY_MESSAGE_BYTES",
    "REGISTRY_URL_ENV_VAR",
    "Backoff",
    "ChannelClosedError",
    "ConnectBundle",
    "HarnessStream",
    "MessageChannel",
    "NoiseRemoteConfig",
    "Registration",
    "RegistryError",
    "RegistryResponseError",
    "RemoteAuthorizationRejected",
    "RemoteConfigError",
    "RemoteConnectError",
    "RemoteEnvironmentConnector",
    "RemoteStreamReset",
    "data_frames",
    "environment_path",
    "new_http_client",
    "open_harness_stream",
    "parse_register",
    "post_json",
    "request_connect",
]
