"""Codec for ``RelayMessageFrame``, the protobuf frame the Codex rendezvous routes (exec_server.md §6.2).

Owns the field numbers (all in :class:`_Field` below), a small hand-written protobuf wire codec, the
frame kinds as frozen dataclasses and the executor's validation rules. Encoding matches prost byte for
byte: fields in number order, zero scalars and empty strings/bytes omitted, the chosen ``oneof`` body
always written even when empty. Decoding follows prost: unknown fields are skipped, a repeated scalar
keeps its last value, a repeated body of the same kind is merged, a body of another kind replaces it.

Every decoding or validation failure raises :class:`RelayFrameDecodeError` whose ``reason`` is a
stable :class:`DropReason`, so the relay loop can count the reason and drop the frame, as Codex does.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Protocol

from .relay_wire import (
    LEN,
    U32_MAX,
    DropReason,
    RelayFrameDecodeError,
    as_bytes,
    as_str,
    as_uint32,
    as_view,
    fields,
    put_bytes,
    put_key,
    put_uint,
    put_varint,
    read_varint,
)

__all__ = [
    "MAX_RELAY_MESSAGE_BYTES",
    "RELAY_FRAME_VERSION",
    "RELAY_RESET_REASON_PROTOCOL_ERROR",
    "DropReason",
    "RelayAck",
    "RelayBody",
    "RelayData",
    "RelayFrameDecodeError",
    "RelayHandshake",
    "RelayHeartbeat",
    "RelayMessageFrame",
    "RelayReset",
    "RelayResume",
    "data_frame_head",
    "data_frames",
    "decode_data_frame",
    "decode_frame",
    "encode_frame",
    "validate_frame",
]

RELAY_FRAME_VERSION: Final = 1
#: Relay websockets refuse bigger messages, on both ends (exec_server.md §2).
MAX_RELAY_MESSAGE_BYTES: Final = 256 * 1024
#: Reason the 0.169.0 executor puts in every Reset it sends.
RELAY_RESET_REASON_PROTOCOL_ERROR: Final = "noise_relay_protocol_error"
_STREAM_ID_MAX_BYTES: Final = 128
_RESET_REASON_MAX_BYTES: Final = 256


class _Field(enum.IntEnum):
    """Every protobuf field number of package ``codex.exec_server.relay.v1``."""

    # RelayMessageFrame
    VERSION = 1
    STREAM_ID = 2
    ACK = 3
    ACK_BITS = 4
    BODY_DATA = 5
    BODY_ACK = 6
    BODY_RESUME = 7
    BODY_RESET = 8
    BODY_HEARTBEAT = 9
    BODY_HANDSHAKE = 10
    # RelayData
    DATA_SEQ = 1
    DATA_SEGMENT_INDEX = 2
    DATA_SEGMENT_COUNT = 3
    DATA_PAYLOAD = 4
    # RelayResume / RelayReset / RelayHandshake: their only field
    RESUME_NEXT_SEQ = 1
    RESET_REASON = 1
    HANDSHAKE_PAYLOAD = 1


@dataclass(frozen=True)
class RelayData:
    """One transport record (Noise ciphertext, or raw JSON on the legacy cleartext relay)."""

    seq: int = 0
    payload: bytes = b""
    segment_index: int = 0
    segment_count: int = 1

    def __repr__(self) -> str:
        return f"RelayData(seq={self.seq}, segment={self.segment_index}/{self.segment_count}, {len(self.payload)} bytes)"


@dataclass(frozen=True)
class RelayAck:
    """Cumulative acknowledgement frame (defined, never sent by 0.169.0)."""


@dataclass(frozen=True)
class RelayResume:
    """Claims a stream id at the rendezvous; the harness sends it first."""

    next_seq: int = 0


@dataclass(frozen=True)
class RelayReset:
    """Tears a stream down, either way."""

    reason: str = ""


@dataclass(frozen=True)
class RelayHeartbeat:
    """Keepalive frame (defined, never sent by 0.169.0)."""


@dataclass(frozen=True)
class RelayHandshake:
    """Carries one Noise handshake message."""

    payload: bytes = b""

    def __repr__(self) -> str:
        return f"RelayHandshake({len(self.payload)} bytes)"


RelayBody = RelayData | RelayAck | RelayResume | RelayReset | RelayHeartbeat | RelayHandshake

_BODY_FIELD: Final[dict[type, _Field]] = {
    RelayData: _Field.BODY_DATA,
    RelayAck: _Field.BODY_ACK,
    RelayResume: _Field.BODY_RESUME,
    RelayReset: _Field.BODY_RESET,
    RelayHeartbeat: _Field.BODY_HEARTBEAT,
    RelayHandshake: _Field.BODY_HANDSHAKE,
}


@dataclass(frozen=True)
class RelayMessageFrame:
    """One websocket binary message on a relay connection."""

    stream_id: str
    body: RelayBody
    version: int = RELAY_FRAME_VERSION
    ack: int = 0
    ack_bits: int = 0


# -- encoding ---------------------------------------------------------------------------------------


def encode_frame(frame: RelayMessageFrame) -> bytes:
    """Serialize exactly as prost does.

    Raises:
        ValueError: a numeric field does not fit in uint32.
    """
    out = bytearray()
    put_uint(out, _Field.VERSION, frame.version)
    put_bytes(out, _Field.STREAM_ID, frame.stream_id.encode("utf-8"))
    put_uint(out, _Field.ACK, frame.ack)
    put_uint(out, _Field.ACK_BITS, frame.ack_bits)
    body = _encode_body(frame.body)
    put_key(out, _BODY_FIELD[type(frame.body)], LEN)
    put_varint(out, len(body))
    out += body
    return bytes(out)


class _Sealed(Protocol):
    """A Noise record ready to travel (``exec_client.wire.noise.SealedRecord``), without importing Noise."""

    @property
    def seq(self) -> int: ...

    @property
    def ciphertext(self) -> bytes: ...


def data_frames(stream_id: str, records: Iterable[_Sealed]) -> list[bytes]:
    """Encode sealed records as ``Data`` frames: one record a frame, seq from the transport.

    The bytes ``encode_frame`` would write for ``RelayData(seq, payload)`` (tests hold them equal), but
    the ~60 KB payload is copied once, by a join, instead of through two growing buffers.
    """
    head = bytearray()  # version and stream id (ack and ack_bits are 0: omitted)
    put_uint(head, _Field.VERSION, RELAY_FRAME_VERSION)
    put_bytes(head, _Field.STREAM_ID, stream_id.encode("utf-8"))
    put_key(head, _BODY_FIELD[RelayData], LEN)
    frame_head = bytes(head)
    segments = bytearray()  # one unsegmented record: RelayData's defaults
    unsegmented = RelayData(seq=0, payload=b"")
    put_uint(segments, _Field.DATA_SEGMENT_INDEX, unsegmented.segment_index)
    put_uint(segments, _Field.DATA_SEGMENT_COUNT, unsegmented.segment_count)
    frames = []
    for record in records:
        payload = record.ciphertext
        body_head = bytearray()
        put_uint(body_head, _Field.DATA_SEQ, record.seq)
        body_head += segments
        if payload:
            put_key(body_head, _Field.DATA_PAYLOAD, LEN)
            put_varint(body_head, len(payload))
        body_length = bytearray()
        put_varint(body_length, len(body_head) + len(payload))
        frames.append(b"".join((frame_head, body_length, body_head, payload)))
    return frames


def _encode_body(body: RelayBody) -> bytes:
    out = bytearray()
    if isinstance(body, RelayData):
        put_uint(out, _Field.DATA_SEQ, body.seq)
        put_uint(out, _Field.DATA_SEGMENT_INDEX, body.segment_index)
        put_uint(out, _Field.DATA_SEGMENT_COUNT, body.segment_count)
        put_bytes(out, _Field.DATA_PAYLOAD, body.payload)
    elif isinstance(body, RelayResume):
        put_uint(out, _Field.RESUME_NEXT_SEQ, body.next_seq)
    elif isinstance(body, RelayReset):
        put_bytes(out, _Field.RESET_REASON, body.reason.encode("utf-8"))
    elif isinstance(body, RelayHandshake):
        put_bytes(out, _Field.HANDSHAKE_PAYLOAD, body.payload)
    return bytes(out)


# -- decoding ---------------------------------------------------------------------------------------


def decode_frame(data: bytes, *, validate: bool = True) -> RelayMessageFrame:
    """Parse one binary websocket message; with ``validate`` also apply the executor's rules.

    Raises:
        RelayFrameDecodeError: with a :class:`DropReason`; the caller counts it and drops the frame.
    """
    version = ack = ack_bits = 0
    stream_id = ""
    body_field: int | None = None
    body: bytes | memoryview = b""
    for number, wire_type, value in fields(memoryview(data)):
        if number in (_Field.VERSION, _Field.ACK, _Field.ACK_BITS):
            scalar = as_uint32(number, wire_type, value)
            if number == _Field.VERSION:
                version = scalar
            elif number == _Field.ACK:
                ack = scalar
            else:
                ack_bits = scalar
        elif number == _Field.STREAM_ID:
            stream_id = as_str(number, wire_type, value)
        elif _Field.BODY_DATA <= number <= _Field.BODY_HANDSHAKE:
            raw = as_view(number, wire_type, value)
            # prost: the same oneof variant again merges (concatenation); another variant replaces it.
            body = bytes(body) + bytes(raw) if number == body_field else raw
            body_field = number
    if body_field is None:
        raise RelayFrameDecodeError(DropReason.MISSING_BODY, "frame has no body")
    frame = RelayMessageFrame(
        stream_id=stream_id,
        body=_decode_body(body_field, memoryview(body)),
        version=version,
        ack=ack,
        ack_bits=ack_bits,
    )
    if validate:
        validate_frame(frame)
    return frame


def data_frame_head(stream_id: str) -> bytes:
    """The bytes every ``Data`` frame of ``stream_id`` starts with, as prost writes it (version 1, no
    acks), up to the body's length: what :func:`decode_data_frame` recognises."""
    head = bytearray()
    put_uint(head, _Field.VERSION, RELAY_FRAME_VERSION)
    put_bytes(head, _Field.STREAM_ID, stream_id.encode("utf-8"))
    put_key(head, _Field.BODY_DATA, LEN)
    return bytes(head)


_ONE_SEGMENT: Final = bytes([_Field.DATA_SEGMENT_COUNT << 3, 1])  # segment_count = 1; index 0 is omitted
_SEQ_KEY: Final = _Field.DATA_SEQ << 3
_PAYLOAD_KEY: Final = _Field.DATA_PAYLOAD << 3 | LEN


def decode_data_frame(data: bytes, head: bytes) -> tuple[int, memoryview] | None:
    """``(seq, payload)`` of a valid unsegmented ``Data`` frame laid out exactly as prost writes it for
    the stream whose :func:`data_frame_head` is ``head``, the payload a view of ``data``; None for any
    other frame, which :func:`decode_frame` then decodes and judges.

    Output streams as one such frame per ~60 KB record: this reads one in a few slices instead of
    splitting it into fields twice and copying the payload.
    """
    if not data.startswith(head):
        return None
    view = memoryview(data)
    try:
        body_length, pos = read_varint(view, len(head))
        if pos + body_length != len(data):
            return None  # a field after the body (merged or replacing it in prost): the general path
        seq = 0
        if data[pos] == _SEQ_KEY:
            seq, pos = read_varint(view, pos + 1)
        if seq > U32_MAX or data[pos : pos + 2] != _ONE_SEGMENT or data[pos + 2] != _PAYLOAD_KEY:
            return None
        length, pos = read_varint(view, pos + 3)
    except (IndexError, RelayFrameDecodeError):
        return None
    if not length or pos + length != len(data):
        return None
    return seq, view[pos:]


def _decode_body(body_field: int, data: memoryview) -> RelayBody:
    if body_field == _Field.BODY_DATA:
        seq = segment_index = segment_count = 0
        payload = b""
        for number, wire_type, value in fields(data):
            if number == _Field.DATA_SEQ:
                seq = as_uint32(number, wire_type, value)
            elif number == _Field.DATA_SEGMENT_INDEX:
                segment_index = as_uint32(number, wire_type, value)
            elif number == _Field.DATA_SEGMENT_COUNT:
                segment_count = as_uint32(number, wire_type, value)
            elif number == _Field.DATA_PAYLOAD:
                payload = as_bytes(number, wire_type, value)
        return RelayData(seq=seq, payload=payload, segment_index=segment_index, segment_count=segment_count)
    if body_field == _Field.BODY_RESUME:
        next_seq = 0
        for number, wire_type, value in fields(data):
            if number == _Field.RESUME_NEXT_SEQ:
                next_seq = as_uint32(number, wire_type, value)
        return RelayResume(next_seq=next_seq)
    if body_field == _Field.BODY_RESET:
        reason = ""
        for number, wire_type, value in fields(data):
            if number == _Field.RESET_REASON:
                reason = as_str(number, wire_type, value)
        return RelayReset(reason=reason)
    if body_field == _Field.BODY_HANDSHAKE:
        payload = b""
        for number, wire_type, value in fields(data):
            if number == _Field.HANDSHAKE_PAYLOAD:
                payload = as_bytes(number, wire_type, value)
        return RelayHandshake(payload=payload)
    for _ in fields(data):  # empty messages: still reject malformed contents
        pass
    return RelayAck() if body_field == _Field.BODY_ACK else RelayHeartbeat()


# -- validation -------------------------------------------------------------------------------------


def validate_frame(frame: RelayMessageFrame) -> None:
    """Apply the 0.169.0 executor's acceptance rules (exec_server.md §6.2).

    Raises:
        RelayFrameDecodeError: the frame would be silently dropped by Codex.
    """
    if frame.version != RELAY_FRAME_VERSION:
        raise RelayFrameDecodeError(DropReason.UNSUPPORTED_VERSION, f"version {frame.version}")
    sid = frame.stream_id
    if not sid or sid != sid.strip() or len(sid.encode("utf-8")) > _STREAM_ID_MAX_BYTES:
        raise RelayFrameDecodeError(DropReason.INVALID_STREAM_ID, "stream id empty, padded or over 128 bytes")
    body = frame.body
    if isinstance(body, RelayData):
        if body.segment_index != 0 or body.segment_count != 1:
            raise RelayFrameDecodeError(
                DropReason.SEGMENTED_DATA,
                f"segment {body.segment_index}/{body.segment_count}, only 0/1 allowed",
            )
        if not body.payload:
            raise RelayFrameDecodeError(DropReason.EMPTY_DATA_PAYLOAD, f"data seq {body.seq} has no payload")
    elif isinstance(body, RelayReset):
        if not 1 <= len(body.reason.encode("utf-8")) <= _RESET_REASON_MAX_BYTES:
            raise RelayFrameDecodeError(DropReason.INVALID_RESET_REASON, "reset reason must be 1..256 bytes")
    elif isinstance(body, RelayHandshake) and not body.payload:
        raise RelayFrameDecodeError(DropReason.EMPTY_HANDSHAKE_PAYLOAD, "handshake frame has no payload")
