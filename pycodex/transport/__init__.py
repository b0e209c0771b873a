"""asyncio edges of the JSON-RPC core: stdio (LF-delimited) and WebSocket (one message per text frame).

A transport knows nothing about JSON-RPC. It feeds complete raw messages to a ``MessageHandler`` and
offers an ``Outbox`` that writes messages in order, one writer task per connection, with a bounded queue
so a slow reader backpressures the producer instead of growing memory.
"""

from pycodex.transport.base import ConnectionHandler, MessageHandler, Outbox
from pycodex.transport.stdio import serve_stdio
from pycodex.transport.websocket import serve_websocket

__all__ = ["ConnectionHandler", "MessageHandler", "Outbox", "serve_stdio", "serve_websocket"]
