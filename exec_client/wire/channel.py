"""The message-channel interface shared by both ends of a remote (Noise) exec-server stream.

A channel carries whole serialized JSON-RPC messages, one ``bytes`` per message, in order. It is the
seam between the relay plumbing and the JSON-RPC layers: the executor feeds ``recv()`` into its
exec-server connection, and ``exec_client.client.ExecServerClient`` accepts any channel as its
``Transport`` (same three methods).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = ["BatchChannel", "ChannelClosedError", "MessageChannel"]


class MessageChannel(Protocol):
    """A bidirectional stream of complete JSON messages (a Noise relay stream, say)."""

    async def send(self, message: bytes) -> None:
        """Send one complete JSON message; raises :class:`ChannelClosedError` once the stream ended."""
        ...

    async def recv(self) -> bytes | None:
        """The next complete JSON message, or ``None`` once the stream ended (reset, closed, failed)."""
        ...

    async def close(self) -> None:
        """End the stream (idempotent); the peer sees a ``Reset``."""
        ...


class BatchChannel(MessageChannel, Protocol):
    """A channel that also takes several messages at once (a burst of output notifications), so it
    can pack them into shared records without a wakeup per message."""

    async def send_many(self, messages: Sequence[bytes]) -> None:
        """Send the messages in order; same errors as ``send``."""
        ...


class ChannelClosedError(ConnectionError):
    """The stream under a channel ended; ``reason`` says why (a Reset reason, a close, an error)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"remote exec-server stream closed: {reason}")
        self.reason = reason
