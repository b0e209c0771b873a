"""Harness connections to a Noise remote environment: connect bundle, dial, handshake, resume.

:class:`RemoteEnvironmentConnector` keeps one harness key per process (as the app-server does) and,
for every stream, asks the registry for a fresh bundle (``POST …/connect``), pins the executor key it
returns, dials the rendezvous and runs the handshake. ``open_client`` wraps the stream in an
``ExecServerClient`` and initializes it, resuming the previous session after a transport loss.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Unpack

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidHandshake, InvalidStatus

from exec_client.client import ClientOptions, ExecServerClient
from exec_client.remote.config import NoiseRemoteConfig
from exec_client.remote.errors import RemoteConnectError
from exec_client.remote.stream import HarnessStream, open_harness_stream
from exec_client.wire.backoff import Backoff
from exec_client.wire.errors import ExecServerError
from exec_client.wire.noise import HybridStaticKey
from exec_client.wire.registry import (
    RegistryError,
    RegistryResponseError,
    new_http_client,
    request_connect,
)
from exec_client.wire.relay_frames import MAX_RELAY_MESSAGE_BYTES

__all__ = ["RemoteEnvironmentConnector"]

log = logging.getLogger(__name__)

_INVALID_REQUEST = -32600


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, RegistryError):
        return exc.status >= 500 or exc.status == 429
    if isinstance(exc, RemoteConnectError):
        return exc.retryable
    return isinstance(exc, RegistryResponseError | OSError | TimeoutError | InvalidHandshake)


class RemoteEnvironmentConnector:
    """Opens harness streams to one remote environment; reuse it across reconnects."""

    def __init__(
        self,
        config: NoiseRemoteConfig,
        *,
        static_key: HybridStaticKey | None = None,
        http: httpx.AsyncClient | None = None,
        handshake_timeout: float = 30.0,
        backoff: Backoff | None = None,
    ) -> None:
        self.config = config
        self.static_key = static_key or HybridStaticKey.generate()
        self._http = http or new_http_client()
        self._owns_http = http is None
        self._handshake_timeout = handshake_timeout
        self._backoff = backoff or Backoff()
        #: Session to resume on the next ``open_client`` (set by every successful initialize).
        self.session_id: str | None = None

    async def open_stream(self) -> HarnessStream:
        """One attempt: connect bundle, dial, handshake. Raises on any failure (see ``open_stream_retrying``)."""
        cfg = self.config
        bundle = await request_connect(
            self._http,
            cfg.registry_url,
            cfg.environment_id,
            cfg.auth_token,
            self.static_key.public_key,
            chatgpt_account_id=cfg.chatgpt_account_id,
        )
        ws = await self._dial(bundle.url)
        try:
            return await open_harness_stream(ws, bundle, self.static_key, timeout=self._handshake_timeout)
        except BaseException:
            await ws.close()
            raise

    async def _dial(self, url: str) -> ClientConnection:
        try:
            return await connect(
                url,
                compression=None,
                max_size=MAX_RELAY_MESSAGE_BYTES,
                open_timeout=self._handshake_timeout,
                ping_interval=30,
                ping_timeout=60,
                user_agent_header=None,
            )
        except InvalidStatus as exc:
            raise RemoteConnectError(
                f"rendezvous refused the websocket: HTTP {exc.response.status_code}"
            ) from exc
        except (OSError, TimeoutError, InvalidHandshake) as exc:
            raise RemoteConnectError(f"cannot reach the rendezvous: {exc}") from exc

    async def open_stream_retrying(self, *, attempts: int = 6) -> HarnessStream:
        """Retry transient failures with backoff; an authorization rejection or a 4xx is raised at once."""
        last: BaseException | None = None
        for attempt in range(max(1, attempts)):
            try:
                stream = await self.open_stream()
            except Exception as exc:
                if not _retryable(exc) or attempt == attempts - 1:
                    raise
                last = exc
                delay = self._backoff.next_delay()
                log.info("remote environment connect failed (%s); retrying in %.1fs", exc, delay)
                await asyncio.sleep(delay)
                continue
            self._backoff.reset()
            return stream
        raise RemoteConnectError(f"could not open a remote stream: {last}")

    async def open_client(
        self, client_name: str = "pycodex", *, attempts: int = 6, **client_kwargs: Unpack[ClientOptions]
    ) -> ExecServerClient:
        """A ready client: stream opened, ``initialize`` sent (resuming ``session_id`` if set).

        If the executor no longer knows the session (it expired), a fresh session is started on a
        new stream; ``session_id`` then changes, which the caller can observe.
        """
        for _ in range(2):
            stream = await self.open_stream_retrying(attempts=attempts)
            client = ExecServerClient(stream, **client_kwargs)
            try:
                await client.initialize(client_name, resume_session_id=self.session_id)
            except ExecServerError as exc:
                await client.close()
                if exc.code == _INVALID_REQUEST and self.session_id and "unknown session" in exc.message:
                    log.info("remote session %s is gone; starting a new one", self.session_id)
                    self.session_id = None
                    continue
                raise
            except BaseException:
                await client.close()
                raise
            self.session_id = client.session_id
            return client
        raise RemoteConnectError("could not initialize a session on the remote executor")

    async def aclose(self) -> None:
        """Close the HTTP client if the connector created it."""
        if self._owns_http:
            with contextlib.suppress(Exception):
                await self._http.aclose()
