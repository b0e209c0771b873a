"""asyncio edges of the JSON-RPC core, and the ``Endpoint`` every connection sits on.

The contract is a message ``Transport`` (``send``/``recv``/``close``, one complete JSON-RPC message
each): ``StreamTransport`` (LF-delimited stdio and child pipes), ``WebSocketTransport`` (one message
per text frame, either side) and ``memory_pair`` (in-process, tests and ``pycodex exec``). A transport
knows nothing about JSON-RPC. ``Endpoint`` adds the peer, pending requests with deadlines, the bounded
inbound queue and fail-all on close; servers write through an ``Outbox`` (ordered, bounded, one writer
task per connection) so a slow reader backpressures its own producers instead of growing memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pycodex.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from pycodex.transport.base import (
        ConnectionHandler,
        MessageHandler,
        Outbox,
        Transport,
        TransportClosed,
        serve_transport,
    )
    from pycodex.transport.endpoint import Endpoint, EndpointClosed
    from pycodex.transport.memory import memory_pair
    from pycodex.transport.stdio import StreamTransport, serve_stdio
    from pycodex.transport.websocket import WebSocketTransport, listen_websocket, serve_websocket

#: Exported name -> its submodule; resolved on first use (a stdio server never needs websockets).
_HOME = {
    "ConnectionHandler": "base", "MessageHandler": "base", "Outbox": "base", "Transport": "base",
    "TransportClosed": "base", "serve_transport": "base", "Endpoint": "endpoint", "EndpointClosed": "endpoint",
    "memory_pair": "memory", "StreamTransport": "stdio", "serve_stdio": "stdio",
    "WebSocketTransport": "websocket", "listen_websocket": "websocket", "serve_websocket": "websocket",
}

__all__ = [
    "ConnectionHandler",
    "Endpoint",
    "EndpointClosed",
    "MessageHandler",
    "Outbox",
    "StreamTransport",
    "Transport",
    "TransportClosed",
    "WebSocketTransport",
    "listen_websocket",
    "memory_pair",
    "serve_stdio",
    "serve_transport",
    "serve_websocket",
]


def __getattr__(name: str) -> object:
    """Import an exported name's submodule on first use (see ``_HOME``)."""
    return _lazy(name)


_lazy = lazy_getattr(__name__, _HOME)
