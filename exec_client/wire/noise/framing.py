"""Pure record-layer helpers under the Noise transport (exec_server.md §6.3, §8).

Owns the 4-byte big-endian length prefix around each JSON message, cutting the framed stream into
records of at most 61440 bytes, reassembling messages from decrypted records (any split is accepted),
and the bounded reorder window that releases ciphertexts in ``seq`` order before decryption (Noise
nonces are implicit, so records must be decrypted strictly in order).
"""

from __future__ import annotations

from collections.abc import Iterable

from .constants import (
    JSON_MESSAGE_MAX_BYTES,
    LENGTH_PREFIX_BYTES,
    RECORD_PLAINTEXT_MAX,
    REORDER_MAX_DISTANCE,
    REORDER_MAX_PENDING_BYTES,
    REORDER_MAX_PENDING_RECORDS,
)
from .errors import NoiseFramingError, NoiseLimitError, NoiseReorderError, NoiseUsageError

__all__ = ["MessageReassembler", "ReorderBuffer", "frame_message", "frame_messages", "split_records"]

_SEQ_LIMIT = 2**32  # relay seq is a uint32 that never wraps


def frame_message(message: bytes) -> bytes:
    """Prefix one serialized JSON message with its length (u32 big-endian).

    Raises:
        NoiseUsageError: the message is empty (the receiver treats length 0 as a protocol error).
        NoiseLimitError: the message exceeds 64 MiB.
    """
    return _length_prefix(message) + message


def _length_prefix(message: bytes) -> bytes:
    if not message:
        raise NoiseUsageError("cannot send an empty message")
    if len(message) > JSON_MESSAGE_MAX_BYTES:
        raise NoiseLimitError(
            f"message of {len(message)} bytes exceeds the {JSON_MESSAGE_MAX_BYTES}-byte limit"
        )
    return len(message).to_bytes(LENGTH_PREFIX_BYTES, "big")


def frame_messages(messages: Iterable[bytes]) -> bytes:
    """``frame_message`` of each, back to back, joined in one copy (a burst of output notifications)."""
    parts: list[bytes] = []
    for message in messages:
        parts.append(_length_prefix(message))
        parts.append(message)
    return b"".join(parts)


def split_records(framed: bytes, record_size: int = RECORD_PLAINTEXT_MAX) -> list[memoryview]:
    """Cut a framed byte string into record plaintexts of at most ``record_size`` bytes (views of it,
    not copies: the cipher reads them once)."""
    if not 0 < record_size <= RECORD_PLAINTEXT_MAX:
        raise NoiseUsageError(f"record size must be 1..{RECORD_PLAINTEXT_MAX}, got {record_size}")
    view = memoryview(framed)
    return [view[i : i + record_size] for i in range(0, len(framed), record_size)]


class MessageReassembler:
    """Turns decrypted record plaintexts back into whole messages (without their length prefix).

    One record may complete several messages and a message (or even its prefix) may span records.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()

    @property
    def buffered(self) -> int:
        """Bytes held for a message not yet complete."""
        return len(self._buffer)

    def push(self, record: bytes) -> list[bytes]:
        """Append one record plaintext; return every message it completes.

        Raises:
            NoiseFramingError: record over 61440 bytes, or a length prefix of 0 or over 64 MiB.
        """
        if len(record) > RECORD_PLAINTEXT_MAX:
            raise NoiseFramingError(f"record plaintext of {len(record)} bytes exceeds {RECORD_PLAINTEXT_MAX}")
        if self._buffer:
            self._buffer += record
            data: bytes | bytearray = self._buffer
        else:
            data = record  # nothing held over (the common case): slice the messages out of the record itself
        messages: list[bytes] = []
        start = 0
        with memoryview(data) as view:  # one copy a message (bytes of a view), none for a bytearray slice
            while len(data) - start >= LENGTH_PREFIX_BYTES:
                length = int.from_bytes(view[start : start + LENGTH_PREFIX_BYTES], "big")
                # Checked before the body arrives, so a bad peer cannot make us buffer up to 4 GiB.
                if length == 0 or length > JSON_MESSAGE_MAX_BYTES:
                    raise NoiseFramingError(
                        f"message length prefix {length} is outside 1..{JSON_MESSAGE_MAX_BYTES}"
                    )
                end = start + LENGTH_PREFIX_BYTES + length
                if len(data) < end:
                    break
                messages.append(bytes(view[start + LENGTH_PREFIX_BYTES : end]))
                start = end
            if data is not self._buffer:
                self._buffer += view[start:]  # the start of a message the next record completes
        if data is self._buffer and start:
            del self._buffer[:start]
        return messages


class ReorderBuffer:
    """Releases ciphertexts strictly in ``seq`` order from a bounded window.

    Duplicates (already released or already pending) are ignored and the first copy wins. A record
    more than 64 ahead of the next expected ``seq``, or one that would overflow 64 pending records or
    1 MiB of pending bytes, is a protocol error.
    """

    def __init__(self) -> None:
        self.next_seq = 0
        self._pending: dict[int, bytes | memoryview] = {}
        self._pending_bytes = 0
        self.duplicates = 0

    @property
    def pending(self) -> int:
        """Records held back waiting for an earlier sequence number."""
        return len(self._pending)

    def push(self, seq: int, ciphertext: bytes | memoryview) -> list[bytes | memoryview]:
        """Accept one record; return the ciphertexts that are now contiguous, in order.

        Raises:
            NoiseReorderError: gap too wide, pending buffer full, or the sequence space is exhausted.
        """
        if not 0 <= seq < _SEQ_LIMIT:
            raise NoiseReorderError(f"sequence number {seq} is not a uint32")
        if seq < self.next_seq or seq in self._pending:
            self.duplicates += 1
            return []
        if seq > self.next_seq:
            if seq - self.next_seq > REORDER_MAX_DISTANCE:
                raise NoiseReorderError(
                    f"record seq {seq} is more than {REORDER_MAX_DISTANCE} ahead of expected {self.next_seq}"
                )
            if (
                len(self._pending) >= REORDER_MAX_PENDING_RECORDS
                or self._pending_bytes + len(ciphertext) > REORDER_MAX_PENDING_BYTES
            ):
                raise NoiseReorderError("pending out-of-order records exceed 64 records or 1 MiB")
            self._pending[seq] = ciphertext
            self._pending_bytes += len(ciphertext)
            return []
        ready = [ciphertext]
        self._advance()
        while self.next_seq in self._pending:
            record = self._pending.pop(self.next_seq)
            self._pending_bytes -= len(record)
            ready.append(record)
            self._advance()
        return ready

    def _advance(self) -> None:
        self.next_seq += 1
        if self.next_seq >= _SEQ_LIMIT:
            raise NoiseReorderError("relay sequence numbers exhausted")
