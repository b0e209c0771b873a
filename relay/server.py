"""Start the development registry and rendezvous together (used by the CLI and by tests in-process)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from websockets.asyncio.server import Server

from relay.capture import FrameCapture
from relay.http import HttpRequest, HttpResponse, start_http_server
from relay.registry import AuthorizationPolicy, DevRegistry
from relay.rendezvous import Rendezvous
from relay.unix_front import UnixFront, start_unix_front

__all__ = ["RunningRelay", "start_relay"]

_CLOSE_TIMEOUT_S = 5.0
_REGISTRY_PREFIX = "/cloud/environment/"


@dataclass
class RunningRelay:
    """A relay started in-process: its registry, its rendezvous and the URLs to reach them."""

    registry: DevRegistry
    rendezvous: Rendezvous
    #: ``http://host:port``: what an executor passes as ``--remote`` and a harness as the registry URL.
    registry_url: str
    #: ``ws://host:port``: the base of the URLs the registry hands out.
    rendezvous_url: str
    _http: asyncio.Server
    _ws: Server
    _capture: FrameCapture | None
    #: The unix socket in front of both (``unix_path``), for boxes without a network.
    unix: UnixFront | None = None

    async def close(self) -> None:
        """Stop the listeners and wait (bounded) for them to close."""
        if self.unix is not None:
            await self.unix.close()
        self._http.close()
        self._ws.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._http.wait_closed(), _CLOSE_TIMEOUT_S)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ws.wait_closed(), _CLOSE_TIMEOUT_S)
        if self._capture is not None:
            self._capture.close()


async def start_relay(
    tokens: Iterable[str],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    rendezvous_port: int = 0,
    capture: Path | None = None,
    policy: AuthorizationPolicy | None = None,
    unix_path: Path | None = None,
) -> RunningRelay:
    """Bind the rendezvous first (the registry hands out its URL), then the registry, then (with
    ``unix_path``) the unix socket in front of both (``relay.unix_front``)."""
    registry = DevRegistry(tokens, policy=policy)
    frame_capture = FrameCapture(capture) if capture is not None else None
    rendezvous = Rendezvous(registry, frame_capture)
    ws_server = await rendezvous.start(host, rendezvous_port)
    ws_port = next(iter(ws_server.sockets)).getsockname()[1]
    registry.rendezvous_url = f"ws://{host}:{ws_port}"

    async def handle(request: HttpRequest) -> HttpResponse:
        response = await registry.handle(request)
        if frame_capture is not None:
            # Lets black-box tests (compat_tests/) count route hits of a relay subprocess.
            environment_id, _, route = request.path.removeprefix(_REGISTRY_PREFIX).rpartition("/")
            frame_capture.event(
                "registry_request", environment_id, method=request.method, route=route, status=response.status
            )
        return response

    try:
        http_server = await start_http_server(handle, host, port)
    except OSError:
        ws_server.close()
        raise
    http_port = http_server.sockets[0].getsockname()[1]
    unix: UnixFront | None = None
    if unix_path is not None:
        try:
            unix = await start_unix_front(unix_path, host, http_port, ws_port)
        except OSError:
            http_server.close()
            ws_server.close()
            raise
    return RunningRelay(
        registry=registry,
        rendezvous=rendezvous,
        registry_url=f"http://{host}:{http_port}",
        rendezvous_url=registry.rendezvous_url,
        _http=http_server,
        _ws=ws_server,
        _capture=frame_capture,
        unix=unix,
    )
