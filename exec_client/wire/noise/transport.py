"""Sans-IO encrypted JSON message channel used after the handshake (exec_server.md §6.3, §8).

Owns the transport ciphers, the per-direction record ``seq`` counters (from 0, one record per relay
``Data`` frame), the reorder window and message reassembly. Callers hand in serialized JSON messages
and ``(seq, ciphertext)`` pairs taken from ``Data`` frames, and get sealed records and whole messages
back. Any receive-side failure poisons the object: the relay edge must Reset the stream.
"""

from __future__ import annotations

from dataclasses import dataclass

from .constants import NOISE_MAX_MESSAGE_LEN, RECORD_PLAINTEXT_MAX, RECORD_TAG_LEN
from .errors import NoiseFramingError, NoiseLimitError, NoiseProtocolError, NoiseUsageError
from .framing import MessageReassembler, ReorderBuffer, frame_messages, split_records
from .handshake import HandshakeState, TransportCiphers

__all__ = ["NoiseTransport", "SealedRecord"]

_RECORD_CIPHERTEXT_MAX = RECORD_PLAINTEXT_MAX + RECORD_TAG_LEN
_SEQ_LIMIT = 2**32


@dataclass(frozen=True)
class SealedRecord:
    """One encrypted record, to be sent as ``RelayData(seq=seq, payload=ciphertext)``."""

    seq: int
    ciphertext: bytes

    def __repr__(self) -> str:
        return f"SealedRecord(seq={self.seq}, {len(self.ciphertext)} bytes)"


class NoiseTransport:
    """Both directions of an established Noise relay stream.

    ``seal_message(json_bytes)`` → records to send; ``open_record(seq, ciphertext)`` → messages now
    complete (possibly none: a gap, a duplicate or a partial message).
    """

    def __init__(self, ciphers: TransportCiphers, *, record_size: int = RECORD_PLAINTEXT_MAX) -> None:
        self._send = ciphers.send
        self._receive = ciphers.receive
        self._record_size = record_size
        self._reorder = ReorderBuffer()
        self._reassembler = MessageReassembler()
        self._next_send_seq = 0
        self._failure: str | None = None

    @classmethod
    def from_handshake(cls, handshake: HandshakeState) -> NoiseTransport:
        """Split a completed handshake into a transport."""
        return cls(handshake.split())

    @property
    def next_send_seq(self) -> int:
        """The sequence number of the next record we send."""
        return self._next_send_seq

    @property
    def next_receive_seq(self) -> int:
        """The sequence number of the next record we deliver."""
        return self._reorder.next_seq

    @property
    def duplicates_ignored(self) -> int:
        """Records dropped because their sequence number was already delivered."""
        return self._reorder.duplicates

    @property
    def failed(self) -> bool:
        """A receive failed; the stream must be reset."""
        return self._failure is not None

    def seal_message(self, message: bytes) -> list[SealedRecord]:
        """Frame one serialized JSON message and encrypt it into records of ≤ 61440 plaintext bytes.

        Raises:
            NoiseUsageError: empty message, or the transport already failed.
            NoiseLimitError: message over 64 MiB, or the send sequence space is exhausted.
        """
        return self.seal_messages([message])

    def seal_messages(self, messages: list[bytes]) -> list[SealedRecord]:
        """Frame several messages back to back and encrypt them into as few records as fit.

        The receiver's reassembler reads length-prefixed messages from the record stream, so a burst
        (e.g. process output) needs far fewer records, frames and websocket messages this way.
        """
        self._check_usable()
        framed = frame_messages(messages)
        chunks = split_records(framed, self._record_size)
        if self._next_send_seq + len(chunks) > _SEQ_LIMIT:
            raise NoiseLimitError("relay send sequence numbers exhausted")
        records = []
        for chunk in chunks:
            records.append(SealedRecord(self._next_send_seq, self._send.encrypt_with_ad(b"", chunk)))
            self._next_send_seq += 1
        return records

    def open_record(self, seq: int, ciphertext: bytes | memoryview) -> list[bytes]:
        """Accept one received record; return the messages it (and any records it unblocks) complete.

        Duplicates are ignored. Raises a ``NoiseProtocolError`` subclass on tampering, oversize records,
        a too-wide gap or bad framing, and ``NoiseUsageError`` once the transport has failed.
        """
        self._check_usable()
        try:
            if len(ciphertext) > min(_RECORD_CIPHERTEXT_MAX, NOISE_MAX_MESSAGE_LEN):
                raise NoiseFramingError(
                    f"record of {len(ciphertext)} bytes exceeds {RECORD_PLAINTEXT_MAX} plaintext bytes + tag"
                )
            messages: list[bytes] = []
            for ready in self._reorder.push(seq, ciphertext):
                messages += self._reassembler.push(self._receive.decrypt_with_ad(b"", ready))
            return messages
        except NoiseProtocolError as exc:
            self._failure = str(exc)
            raise

    def _check_usable(self) -> None:
        if self._failure is not None:
            raise NoiseUsageError(f"transport unusable after earlier failure: {self._failure}")
