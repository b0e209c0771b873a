"""The remote executor: register once, then keep one rendezvous websocket up and multiplex it.

As Codex 0.169.0 does (exec_server.md §5.1, §6.1): the static key is generated once per process;
registration happens once (a failure is fatal); after any websocket loss the executor dials the same
URL again without re-registering, first after ~0.7 s, then with exponential backoff and jitter. All
streams die with the websocket and their sessions stay resumable. Keepalive: a Ping every 30 s, and
the connection is dropped when no Pong came 60 s after a Ping.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect, unix_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from exec_client.wire.backoff import Backoff
from exec_client.wire.noise import HybridStaticKey
from exec_client.wire.registry import Registration
from exec_client.wire.relay_frames import MAX_RELAY_MESSAGE_BYTES
from exec_server.remote.mux import SessionFactory, StreamMux
from exec_server.remote.registration import RegistryClient, ValidationOutcome
from exec_server.remote.stream_state import ExecutorIdentity, HarnessHello
from pycodex.transport.websocket import WebSocketTransport

__all__ = ["Keepalive", "RemoteExecutor"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Keepalive:
    """Websocket keepalive of the executor: ping every ``ping_interval``, give up after ``pong_timeout``."""

    ping_interval: float = 30.0
    pong_timeout: float = 60.0


def _redacted(url: str) -> str:
    """The rendezvous URL may carry a capability ticket in its query: never log it."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


class RemoteExecutor:
    """An exec-server that serves through the relay: registers, dials the rendezvous, reconnects."""

    def __init__(
        self,
        registry: RegistryClient,
        make_session: SessionFactory,
        *,
        static_key: HybridStaticKey | None = None,
        backoff: Backoff | None = None,
        keepalive: Keepalive | None = None,
        open_timeout: float = 30.0,
        unix_socket: str | None = None,
    ) -> None:
        self._registry = registry
        #: Dial the rendezvous over this unix socket (a relay's ``--listen-unix``) instead of its URL's host.
        self._unix_socket = unix_socket
        self._make_session = make_session
        self.static_key = static_key or HybridStaticKey.generate()
        self._backoff = backoff or Backoff()
        self._keepalive = keepalive or Keepalive()
        self._open_timeout = open_timeout
        self.registration: Registration | None = None
        #: Websocket connections made so far (the first plus every reconnect).
        self.connections = 0
        #: The multiplexer of the live websocket, if any (for tests and status).
        self.mux: StreamMux | None = None
        self.connected = asyncio.Event()

    async def register(self) -> Registration:
        """Register with the registry (our Noise public key); the answer names the environment and its
        rendezvous."""
        self.registration = await self._registry.register(self.static_key.public_key)
        log.info(
            "registered environment %s (registration %s)",
            self.registration.environment_id,
            self.registration.executor_registration_id,
        )
        return self.registration

    async def serve_forever(self) -> None:
        """Dial, serve, and redial after every loss until cancelled. ``register`` must have succeeded."""
        if self.registration is None:
            raise RuntimeError("register() must succeed before serve_forever()")
        registration = self.registration
        identity = ExecutorIdentity(
            self.static_key, registration.environment_id, registration.executor_registration_id
        )
        while True:  # a daemon loop: runs until cancelled; each turn is one websocket connection
            try:
                ws = await self._dial(registration.url)
            except (OSError, TimeoutError, InvalidHandshake) as exc:
                delay = self._backoff.next_delay()
                log.warning("cannot reach the rendezvous (%s); retrying in %.1fs", _describe(exc), delay)
                await asyncio.sleep(delay)
                continue
            self._backoff.reset()
            await self._serve_connection(ws, identity)
            delay = self._backoff.next_delay()
            log.info("rendezvous connection lost; reconnecting in %.1fs", delay)
            await asyncio.sleep(delay)

    async def _dial(self, url: str) -> ClientConnection:
        log.info("dialing rendezvous %s", _redacted(url))
        # A relay's unix socket (``--remote unix://PATH``) carries the same websocket as its TCP listener.
        dial = connect if self._unix_socket is None else functools.partial(unix_connect, self._unix_socket)
        return await dial(
            url,
            additional_headers={"X-Request-ID": f"req_{uuid.uuid4().hex}"},
            compression=None,
            max_size=MAX_RELAY_MESSAGE_BYTES,
            # Output streams as many ~11 KB frames: a deep write buffer keeps the socket full instead of
            # waiting for a drain every few frames (the default high-water mark is 32 KiB).
            write_limit=1 << 20,
            open_timeout=self._open_timeout,
            ping_interval=self._keepalive.ping_interval,
            ping_timeout=self._keepalive.pong_timeout,
            # A peer that stopped answering pings will not answer a close frame either.
            close_timeout=min(10.0, self._keepalive.pong_timeout),
            user_agent_header=None,
        )

    async def _serve_connection(self, ws: ClientConnection, identity: ExecutorIdentity) -> None:
        self.connections += 1

        async def send_frame(frame: bytes) -> None:
            try:
                await ws.send(frame)
            except ConnectionClosed as exc:
                raise ConnectionError(str(exc)) from exc

        edge = WebSocketTransport(ws)

        async def send_frames(frames: Sequence[bytes]) -> None:
            await edge.send_many(frames, binary=True)  # a sealed batch: one socket write

        mux = StreamMux(identity, send_frame, self._validate, self._make_session, send_frames)
        self.mux = mux
        self.connected.set()
        try:
            async for message in ws:
                await mux.on_message(message)
        except ConnectionClosed as exc:
            log.info("rendezvous websocket closed: %s", exc)
        finally:
            self.connected.clear()
            self.mux = None
            await mux.close()
            await ws.close()

    async def _validate(self, stream_id: str, hello: HarnessHello) -> ValidationOutcome:
        assert self.registration is not None
        return await self._registry.validate(
            self.registration.executor_registration_id, stream_id, hello.harness_key, hello.authorization
        )


def _describe(exc: BaseException) -> str:
    if isinstance(exc, InvalidStatus):
        return f"HTTP {exc.response.status_code}"
    return str(exc) or type(exc).__name__
