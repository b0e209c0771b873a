"""Errors raised by the Noise channel.

Local misuse (our code called things in the wrong order) is kept apart from remote faults (the peer or
the network sent something we must refuse). Every remote fault maps to a stream Reset at the relay edge.

    NoiseError
    ├── NoiseUsageError              local: wrong turn, wrong role, object already failed or finished
    ├── NoiseKeyError                a public key JSON or raw key is malformed
    ├── NoiseLimitError              a size limit of exec_server.md §2 would be or was exceeded
    └── NoiseProtocolError           remote: the peer's bytes are unacceptable
        ├── NoiseHandshakeError      malformed or unauthenticated handshake message
        │   └── NoiseAuthorizationRejected  the executor answered with the rejection marker
        ├── NoiseDecryptError        a transport record failed authentication
        ├── NoiseReorderError        the reorder window or its buffers overflowed
        └── NoiseFramingError        a length prefix or reassembled message is invalid
"""

__all__ = [
    "NoiseAuthorizationRejected",
    "NoiseDecryptError",
    "NoiseError",
    "NoiseFramingError",
    "NoiseHandshakeError",
    "NoiseKeyError",
    "NoiseLimitError",
    "NoiseProtocolError",
    "NoiseReorderError",
    "NoiseUsageError",
]


class NoiseError(Exception):
    """Base class of every Noise channel error."""


class NoiseUsageError(NoiseError):
    """The caller used an object out of turn, or after it failed or finished."""


class NoiseKeyError(NoiseError, ValueError):
    """A public or private key is malformed (bad JSON shape, suite, base64 or length)."""


class NoiseLimitError(NoiseError):
    """A size limit was exceeded (message, record, payload or authorization length)."""


class NoiseProtocolError(NoiseError):
    """The peer sent bytes the channel must refuse; the stream is unusable afterwards."""


class NoiseHandshakeError(NoiseProtocolError):
    """A handshake message is malformed, has the wrong size or fails authentication."""


class NoiseAuthorizationRejected(NoiseHandshakeError):
    """Handshake message 2 carried the registry rejection marker: the harness key is not authorized."""


class NoiseDecryptError(NoiseProtocolError):
    """A transport record failed AES-GCM authentication (tampered, replayed into a new slot, or reordered)."""


class NoiseReorderError(NoiseProtocolError):
    """A record arrived too far ahead of the next expected sequence number, or the pending buffer is full."""


class NoiseFramingError(NoiseProtocolError):
    """A decrypted record stream holds an invalid length prefix or an oversized message."""
