"""Errors of the harness side of a Noise remote environment.

RemoteConnectError                 a stream could not be opened (worth retrying unless a subclass says not)
├── RemoteAuthorizationRejected    the executor's registry refused this harness key: do not retry
└── RemoteStreamReset              the executor or rendezvous reset the stream during the handshake
"""

from __future__ import annotations

__all__ = ["RemoteAuthorizationRejected", "RemoteConnectError", "RemoteStreamReset"]


class RemoteConnectError(ConnectionError):
    """Opening a stream to the remote executor failed."""

    retryable = True


class RemoteAuthorizationRejected(RemoteConnectError):
    """The executor answered the handshake with the registry's authentication-rejected marker."""

    retryable = False

    def __init__(self, environment_id: str) -> None:
        super().__init__(
            f"the registry rejected this harness for remote environment {environment_id!r} "
            "(authentication rejected by the executor's /validate)"
        )
        self.environment_id = environment_id


class RemoteStreamReset(RemoteConnectError):
    """A Reset frame ended the stream before the handshake finished."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"remote exec-server stream was reset during the handshake: {reason}")
        self.reason = reason
