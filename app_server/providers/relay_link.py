"""The relay between the app-server and its boxes: in-process on loopback, or one that runs elsewhere.

In-process (the default) the app-server starts pycodex's relay on 127.0.0.1 with a harness token only it
knows, and mints one token per box (``DevRegistry.grant``) that lets that box register and validate as its
own environment id and nothing else; the token is withdrawn when the box is released. A relay elsewhere
(``relay_url``: a cluster's relay Service) takes one configured token for both sides, since minting needs
the relay's own process.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app_server.lazy import LazyModule
from app_server.providers.base import Box, ProviderError
from exec_client.environment import ExecServerEnvironment

if TYPE_CHECKING:
    from exec_client import remote as exec_client_remote
    from exec_client.remote import RemoteEnvironmentConnector
    from relay import server as relay_server
    from relay.server import RunningRelay
else:
    exec_client_remote = LazyModule("exec_client.remote")
    relay_server = LazyModule("relay.server")

__all__ = ["ExternalRelay", "RelayLink"]

CLIENT_NAME = "codex-environment"
_POLL_S = 0.05


@dataclass(frozen=True)
class ExternalRelay:
    """A relay the app-server does not run: its registry URL and the bearer token it accepts."""

    registry_url: str
    token: str = field(repr=False)


class RelayLink:
    """Starts (or names) the relay, hands out box tokens, waits for registrations, connects harnesses."""

    def __init__(self, external: ExternalRelay | None = None) -> None:
        self._external = external
        self._harness_token = external.token if external is not None else secrets.token_urlsafe(32)
        self._relay: RunningRelay | None = None
        self._lock = asyncio.Lock()

    async def registry_url(self) -> str:
        """The registry URL boxes register with (the in-process relay starts on first use)."""
        if self._external is not None:
            return self._external.registry_url
        async with self._lock:
            if self._relay is None:
                self._relay = await relay_server.start_relay([self._harness_token])
            return self._relay.registry_url

    def grant(self, environment_id: str) -> str:
        """A registration token for the box of ``environment_id`` (``registry_url`` must have run)."""
        if self._relay is None:
            assert self._external is not None, "registry_url() starts the relay before any grant"
            return self._external.token
        return self._relay.registry.grant(environment_id)

    def revoke(self, environment_id: str) -> None:
        """Withdraw the box's token and registration (a no-op on a relay elsewhere)."""
        if self._relay is not None:
            self._relay.registry.revoke(environment_id)
            self._relay.rendezvous.drop_environment(environment_id)

    def _connected(self, environment_id: str) -> bool:
        if self._relay is None:
            return False
        return self._relay.rendezvous.executor_connected(environment_id)

    async def wait_registered(self, box: Box, timeout: float) -> None:
        """Until the box's exec-server is on the rendezvous; raises if the box exits or time runs out.

        On a relay elsewhere there is no rendezvous to look at: the first harness connection (with its
        retries) is the check.
        """
        if self._relay is None:
            return
        deadline = time.monotonic() + timeout
        while not self._connected(box.environment_id):
            if box.exited.is_set():
                raise ProviderError(f"the box exited before it registered with the relay: {box.why}")
            if time.monotonic() > deadline:
                raise ProviderError(f"the box did not register with the relay within {timeout:.0f}s")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(box.exited.wait(), _POLL_S)

    async def connect(self, environment_id: str) -> tuple[ExecServerEnvironment, RemoteEnvironmentConnector]:
        """An initialized exec-server environment on the box, through the relay."""
        url = await self.registry_url()
        config = exec_client_remote.NoiseRemoteConfig(url, environment_id, self._harness_token)
        connector = exec_client_remote.RemoteEnvironmentConnector(config, handshake_timeout=15.0)
        try:
            client = await connector.open_client(CLIENT_NAME)
        except BaseException:
            await connector.aclose()
            raise
        return ExecServerEnvironment(client), connector

    async def close(self) -> None:
        """Stop the in-process relay (bounded)."""
        if self._relay is not None:
            relay, self._relay = self._relay, None
            await relay.close()
