"""Serve one remote stream with the exec-server's transport-independent ``Connection``.

``connection_session_factory(registry)`` returns the ``make_session`` callable that
``run_remote_executor`` needs: every active Noise stream becomes one exec-server connection, so
sessions, resume and -32010 behave exactly as on the websocket listener.
"""

from __future__ import annotations

import logging

from exec_client.wire.channel import BatchChannel
from exec_server.connection import Connection
from exec_server.remote.mux import SessionFactory
from exec_server.router import ExecRouter
from exec_server.session import SessionRegistry

__all__ = ["connection_session_factory"]

log = logging.getLogger(__name__)


def connection_session_factory(registry: SessionRegistry, *, concurrent_requests: int = 1) -> SessionFactory:
    """A factory serving each active Noise stream as one exec-server connection (one router for all)."""
    router = ExecRouter()

    async def serve(channel: BatchChannel) -> None:
        conn = Connection(
            registry,
            channel.send,
            transport="noise",
            parse_error_prefix="failed to parse JSON-RPC message from exec-server noise stream",
            concurrent_requests=concurrent_requests,
            router=router,
            send_many=channel.send_many,
        )
        try:
            if not await conn.serve(channel):
                await channel.close()  # Codex drops such a peer; here: Reset its stream
        except ConnectionError as exc:
            log.info("remote stream ended while answering: %s", exc)
        finally:
            await conn.close()

    return serve
