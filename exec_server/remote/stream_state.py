"""Sans-IO state of one executor-side Noise relay stream (exec_server.md §6.3, §7).

Phases: ``AWAITING_HANDSHAKE`` (after Resume) → ``VALIDATING`` (message 1 read, registry asked) →
``ACTIVE`` (message 2 sent, records flow) → ``CLOSED``. Every fault raises :class:`StreamProtocolError`;
the caller answers it with ``Reset{noise_relay_protocol_error}`` and forgets the stream.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from exec_client.wire.noise import (
    AUTHORIZATION_REJECTED_MARKER,
    HandshakeState,
    HybridPublicKey,
    HybridStaticKey,
    NoiseError,
    NoiseTransport,
    relay_prologue,
)
from exec_client.wire.relay_frames import data_frames

__all__ = ["ExecutorIdentity", "ExecutorStream", "HarnessHello", "StreamPhase", "StreamProtocolError"]


class StreamProtocolError(Exception):
    """The harness (or the relay) broke the stream protocol; the stream must be reset."""


class StreamPhase(enum.Enum):
    """Where one relay stream is: handshake, validating with the registry, active or closed."""

    AWAITING_HANDSHAKE = "awaiting_handshake"
    VALIDATING = "validating"
    ACTIVE = "active"
    CLOSED = "closed"


@dataclass(frozen=True)
class ExecutorIdentity:
    """What binds every stream of this executor: its key and the ids in the Noise prologue."""

    static_key: HybridStaticKey
    environment_id: str
    registration_id: str


@dataclass(frozen=True)
class HarnessHello:
    """What handshake message 1 revealed, to be checked with the registry before message 2."""

    harness_key: HybridPublicKey
    authorization: str


class ExecutorStream:
    """The executor's side of one relay stream: its Noise handshake, then its transport."""

    def __init__(self, identity: ExecutorIdentity, stream_id: str) -> None:
        self.stream_id = stream_id
        self.phase = StreamPhase.AWAITING_HANDSHAKE
        prologue = relay_prologue(identity.environment_id, identity.registration_id, stream_id)
        self._handshake = HandshakeState.responder(identity.static_key, prologue)
        self._transport: NoiseTransport | None = None

    @property
    def transport(self) -> NoiseTransport | None:
        """The Noise transport once the handshake completed, else None."""
        return self._transport

    def read_hello(self, message_1: bytes) -> HarnessHello:
        """Read handshake message 1 and return what the harness said (its key and payload)."""
        if self.phase is not StreamPhase.AWAITING_HANDSHAKE:
            raise StreamProtocolError(f"handshake frame in phase {self.phase.value}")
        try:
            payload = self._handshake.read_message(message_1)
        except NoiseError as exc:
            self.phase = StreamPhase.CLOSED
            raise StreamProtocolError(f"handshake message 1 refused: {exc}") from exc
        key = self._handshake.remote_static
        assert key is not None  # set by a successful read of message 1
        self.phase = StreamPhase.VALIDATING
        return HarnessHello(key, payload.decode("utf-8"))  # UTF-8 checked by the handshake

    def accept(self) -> bytes:
        """Handshake message 2 with an empty payload; the stream becomes active."""
        self._require(StreamPhase.VALIDATING)
        message = self._handshake.write_message(b"")
        self._transport = NoiseTransport.from_handshake(self._handshake)
        self.phase = StreamPhase.ACTIVE
        return message

    def reject(self) -> bytes:
        """Handshake message 2 carrying the registry rejection marker; the stream is over."""
        self._require(StreamPhase.VALIDATING)
        message = self._handshake.write_message(AUTHORIZATION_REJECTED_MARKER)
        self.phase = StreamPhase.CLOSED
        return message

    def open_record(self, seq: int, ciphertext: bytes) -> list[bytes]:
        """Messages completed by one ``Data`` record (duplicates are ignored by the transport)."""
        if self.phase is not StreamPhase.ACTIVE or self._transport is None:
            raise StreamProtocolError(f"data frame in phase {self.phase.value}")
        try:
            return self._transport.open_record(seq, ciphertext)
        except NoiseError as exc:
            self.phase = StreamPhase.CLOSED
            raise StreamProtocolError(f"record seq {seq} refused: {exc}") from exc

    def seal_frames(self, message: bytes) -> list[bytes]:
        """Encrypt one JSON message into encoded ``Data`` frames, in seq order."""
        return self.seal_batch([message])

    def seal_batch(self, messages: list[bytes]) -> list[bytes]:
        """Encrypt JSON messages, packed back to back, into encoded ``Data`` frames, in seq order."""
        if self.phase is not StreamPhase.ACTIVE or self._transport is None:
            raise StreamProtocolError(f"cannot send in phase {self.phase.value}")
        return data_frames(self.stream_id, self._transport.seal_messages(messages))

    def close(self) -> None:
        """The stream ended; any later frame on it is a protocol error."""
        self.phase = StreamPhase.CLOSED

    def _require(self, phase: StreamPhase) -> None:
        if self.phase is not phase:
            raise StreamProtocolError(f"stream is {self.phase.value}, expected {phase.value}")
