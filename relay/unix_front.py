"""The relay on a unix socket: one listener in front of the registry and the rendezvous, for boxes without a network.

A box with no network (``--network none``) still reaches the relay through a socket file bind-mounted into
it. One socket serves both endpoints: each connection is routed by its first request line (``/relay/…``
is a rendezvous websocket, anything else a registry call) and its bytes are copied, unchanged, to that
endpoint's loopback listener. The relay never sees more than before: registry JSON and Noise ciphertext.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path

__all__ = ["UnixFront", "start_unix_front"]

log = logging.getLogger(__name__)

#: A connection that sends no request line within this long is dropped (as the registry's own idle limit).
FIRST_LINE_TIMEOUT_S = 30.0
_MAX_LINE = 16 * 1024
_CHUNK = 1 << 16


async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Copy ``source`` to ``sink`` until end of file, then half-close ``sink`` (the other way may go on)."""
    with contextlib.suppress(ConnectionError, OSError):
        while data := await source.read(_CHUNK):
            sink.write(data)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()


class UnixFront:
    """A unix socket listener that forwards each connection to the registry or the rendezvous."""

    def __init__(self, path: Path, host: str, registry_port: int, rendezvous_port: int) -> None:
        self.path = path
        self._host = host
        self._registry_port = registry_port
        self._rendezvous_port = rendezvous_port
        self._server: asyncio.AbstractServer | None = None
        self._made_dir = False

    async def start(self) -> None:
        """Bind the socket (a stale file of an earlier relay is replaced). A missing parent directory is
        made private (0700) and removed again at ``close``: it goes even when the relay's owner was killed."""
        if not self.path.parent.exists():
            self.path.parent.mkdir(mode=0o700)
            self._made_dir = True
        self.path.unlink(missing_ok=True)
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.path), limit=_MAX_LINE)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream: asyncio.StreamWriter | None = None
        try:
            line = await asyncio.wait_for(reader.readline(), FIRST_LINE_TIMEOUT_S)
            parts = line.split(b" ")
            if not line.endswith(b"\n") or len(parts) != 3:
                return  # not HTTP: nothing to route
            port = self._rendezvous_port if parts[1].startswith(b"/relay/") else self._registry_port
            up_reader, upstream = await asyncio.open_connection(self._host, port)
            upstream.write(line)
            await asyncio.gather(_pump(reader, upstream), _pump(up_reader, writer))
        except (TimeoutError, ConnectionError, OSError, ValueError, asyncio.LimitOverrunError) as exc:
            log.debug("unix relay connection ended: %s", exc)
        finally:
            for end in (upstream, writer):
                if end is not None:
                    end.close()
                    with contextlib.suppress(Exception):
                        await end.wait_closed()

    async def close(self) -> None:
        """Stop listening and remove the socket file (connections in flight end with the relay)."""
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 5)
        self.path.unlink(missing_ok=True)
        if self._made_dir:
            with contextlib.suppress(OSError):
                self.path.parent.rmdir()


async def start_unix_front(path: Path, host: str, registry_port: int, rendezvous_port: int) -> UnixFront:
    """A started ``UnixFront`` on ``path`` for the relay listening on ``host``."""
    front = UnixFront(path, host, registry_port, rendezvous_port)
    await front.start()
    return front
