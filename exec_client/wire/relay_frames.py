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
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Protocol

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
    "data_frames",
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
_U32_MAX: Final = 2**32 - 1


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


_VARINT: Final = 0
_FIXED64: Final = 1
_LEN: Final = 2
_FIXED32: Final = 5


class DropReason(enum.Enum):
    """Why a received frame was refused (stable names for counters and logs)."""

    TRUNCATED = "truncated"
    BAD_VARINT = "bad_varint"
    BAD_WIRE_TYPE = "bad_wire_type"
    VALUE_OUT_OF_RANGE = "value_out_of_range"
    INVALID_UTF8 = "invalid_utf8"
    MISSING_BODY = "missing_body"
    UNSUPPORTED_VERSION = "unsupported_version"
    INVALID_STREAM_ID = "invalid_stream_id"
    SEGMENTED_DATA = "segmented_data"
    EMPTY_DATA_PAYLOAD = "empty_data_payload"
    INVALID_RESET_REASON = "invalid_reset_reason"
    EMPTY_HANDSHAKE_PAYLOAD = "empty_handshake_payload"


class RelayFrameDecodeError(ValueError):
    """A received frame is malformed or fails validation; count ``reason`` and drop the frame."""

    def __init__(self, reason: DropReason, detail: str) -> None:
        super().__init__(f"invalid relay frame ({reason.value}): {detail}")
        self.reason = reason
        self.detail = detail


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
    _put_uint(out, _Field.VERSION, frame.version)
    _put_bytes(out, _Field.STREAM_ID, frame.stream_id.encode("utf-8"))
    _put_uint(out, _Field.ACK, frame.ack)
    _put_uint(out, _Field.ACK_BITS, frame.ack_bits)
    body = _encode_body(frame.body)
    _put_key(out, _BODY_FIELD[type(frame.body)], _LEN)
    _put_varint(out, len(body))
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
    _put_uint(head, _Field.VERSION, RELAY_FRAME_VERSION)
    _put_bytes(head, _Field.STREAM_ID, stream_id.encode("utf-8"))
    _put_key(head, _BODY_FIELD[RelayData], _LEN)
    frame_head = bytes(head)
    segments = bytearray()  # one unsegmented record: RelayData's defaults
    unsegmented = RelayData(seq=0, payload=b"")
    _put_uint(segments, _Field.DATA_SEGMENT_INDEX, unsegmented.segment_index)
    _put_uint(segments, _Field.DATA_SEGMENT_COUNT, unsegmented.segment_count)
    frames = []
    for record in records:
        payload = record.ciphertext
        body_head = bytearray()
        _put_uint(body_head, _Field.DATA_SEQ, record.seq)
        body_head += segments
        if payload:
            _put_key(body_head, _Field.DATA_PAYLOAD, _LEN)
            _put_varint(body_head, len(payload))
        body_length = bytearray()
        _put_varint(body_length, len(body_head) + len(payload))
        frames.append(b"".join((frame_head, body_length, body_head, payload)))
    return frames


def _encode_body(body: RelayBody) -> bytes:
    out = bytearray()
    if isinstance(body, RelayData):
        _put_uint(out, _Field.DATA_SEQ, body.seq)
        _put_uint(out, _Field.DATA_SEGMENT_INDEX, body.segment_index)
        _put_uint(out, _Field.DATA_SEGMENT_COUNT, body.segment_count)
        _put_bytes(out, _Field.DATA_PAYLOAD, body.payload)
    elif isinstance(body, RelayResume):
        _put_uint(out, _Field.RESUME_NEXT_SEQ, body.next_seq)
    elif isinstance(body, RelayReset):
        _put_bytes(out, _Field.RESET_REASON, body.reason.encode("utf-8"))
    elif isinstance(body, RelayHandshake):
        _put_bytes(out, _Field.HANDSHAKE_PAYLOAD, body.payload)
    return bytes(out)


_SMALL_VARINTS: Final = tuple(bytes([v]) for v in range(0x80))


def _put_varint(out: bytearray, value: int) -> None:
    if value < 0x80:  # the common case (field keys, small counters), kept cheap: frames are hot
        out += _SMALL_VARINTS[value]
        return
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


@functools.cache
def _key_bytes(number: int, wire_type: int) -> bytes:
    out = bytearray()
    _put_varint(out, (int(number) << 3) | wire_type)
    return bytes(out)


def _put_key(out: bytearray, number: int, wire_type: int) -> None:
    out += _key_bytes(number, wire_type)


def _put_uint(out: bytearray, number: int, value: int) -> None:
    if not 0 <= value <= _U32_MAX:
        raise ValueError(f"relay frame field {number} value {value} does not fit in uint32")
    if value:
        out += _key_bytes(number, _VARINT)
        _put_varint(out, value)


def _put_bytes(out: bytearray, number: int, value: bytes) -> None:
    if value:
        out += _key_bytes(number, _LEN)
        _put_varint(out, len(value))
        out += value


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
    for number, wire_type, value in _fields(memoryview(data)):
        if number in (_Field.VERSION, _Field.ACK, _Field.ACK_BITS):
            scalar = _as_uint32(number, wire_type, value)
            if number == _Field.VERSION:
                version = scalar
            elif number == _Field.ACK:
                ack = scalar
            else:
                ack_bits = scalar
        elif number == _Field.STREAM_ID:
            stream_id = _as_str(number, wire_type, value)
        elif _Field.BODY_DATA <= number <= _Field.BODY_HANDSHAKE:
            raw = _as_view(number, wire_type, value)
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


def _decode_body(body_field: int, data: memoryview) -> RelayBody:
    if body_field == _Field.BODY_DATA:
        seq = segment_index = segment_count = 0
        payload = b""
        for number, wire_type, value in _fields(data):
            if number == _Field.DATA_SEQ:
                seq = _as_uint32(number, wire_type, value)
            elif number == _Field.DATA_SEGMENT_INDEX:
                segment_index = _as_uint32(number, wire_type, value)
            elif number == _Field.DATA_SEGMENT_COUNT:
                segment_count = _as_uint32(number, wire_type, value)
            elif number == _Field.DATA_PAYLOAD:
                payload = _as_bytes(number, wire_type, value)
        return RelayData(seq=seq, payload=payload, segment_index=segment_index, segment_count=segment_count)
    if body_field == _Field.BODY_RESUME:
        next_seq = 0
        for number, wire_type, value in _fields(data):
            if number == _Field.RESUME_NEXT_SEQ:
                next_seq = _as_uint32(number, wire_type, value)
        return RelayResume(next_seq=next_seq)
    if body_field == _Field.BODY_RESET:
        reason = ""
        for number, wire_type, value in _fields(data):
            if number == _Field.RESET_REASON:
                reason = _as_str(number, wire_type, value)
        return RelayReset(reason=reason)
    if body_field == _Field.BODY_HANDSHAKE:
        payload = b""
        for number, wire_type, value in _fields(data):
            if number == _Field.HANDSHAKE_PAYLOAD:
                payload = _as_bytes(number, wire_type, value)
        return RelayHandshake(payload=payload)
    for _ in _fields(data):  # empty messages: still reject malformed contents
        pass
    return RelayAck() if body_field == _Field.BODY_ACK else RelayHeartbeat()


def _fields(data: memoryview) -> list[tuple[int, int, int | memoryview]]:
    """Split a message into ``(field number, wire type, value)``; fixed-width values are skipped.
    Length-delimited values are views of ``data``: a ~60 KB payload is copied once, where it is used."""
    result: list[tuple[int, int, int | memoryview]] = []
    pos, end = 0, len(data)
    while pos < end:
        key = data[pos]  # keys of these messages fit one byte: no call for them
        if key < 0x80:
            pos += 1
        else:
            key, pos = _read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise RelayFrameDecodeError(DropReason.BAD_WIRE_TYPE, "field number 0")
        if wire_type == _VARINT:
            value, pos = _read_varint(data, pos)
            result.append((number, wire_type, value))
        elif wire_type == _LEN:
            length, pos = _read_varint(data, pos)
            if length > end - pos:
                raise RelayFrameDecodeError(DropReason.TRUNCATED, f"field {number} claims {length} bytes")
            result.append((number, wire_type, data[pos : pos + length]))
            pos += length
        elif wire_type in (_FIXED64, _FIXED32):
            pos += 8 if wire_type == _FIXED64 else 4
            if pos > end:
                raise RelayFrameDecodeError(DropReason.TRUNCATED, f"fixed-width field {number} cut off")
        else:
            raise RelayFrameDecodeError(DropReason.BAD_WIRE_TYPE, f"field {number} has wire type {wire_type}")
    return result


def _read_varint(data: memoryview, pos: int) -> tuple[int, int]:
    if pos < len(data) and data[pos] < 0x80:  # one byte: keys and small values, the common case
        return data[pos], pos + 1
    value = 0
    for shift in range(0, 70, 7):
        if pos >= len(data):
            raise RelayFrameDecodeError(DropReason.TRUNCATED, "varint cut off")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if value >= 2**64:
                raise RelayFrameDecodeError(DropReason.BAD_VARINT, "varint exceeds 64 bits")
            return value, pos
    raise RelayFrameDecodeError(DropReason.BAD_VARINT, "varint longer than 10 bytes")


def _as_uint32(number: int, wire_type: int, value: int | memoryview) -> int:
    if wire_type != _VARINT or not isinstance(value, int):
        raise RelayFrameDecodeError(DropReason.BAD_WIRE_TYPE, f"field {number} must be a varint")
    if value > _U32_MAX:
        raise RelayFrameDecodeError(
            DropReason.VALUE_OUT_OF_RANGE, f"field {number} value {value} exceeds uint32"
        )
    return value


def _as_view(number: int, wire_type: int, value: int | memoryview) -> memoryview:
    if wire_type != _LEN or not isinstance(value, memoryview):
        raise RelayFrameDecodeError(DropReason.BAD_WIRE_TYPE, f"field {number} must be length-delimited")
    return value


def _as_bytes(number: int, wire_type: int, value: int | memoryview) -> bytes:
    return bytes(_as_view(number, wire_type, value))


def _as_str(number: int, wire_type: int, value: int | memoryview) -> str:
    try:
        return str(_as_view(number, wire_type, value), "utf-8")
    except UnicodeDecodeError:
        raise RelayFrameDecodeError(DropReason.INVALID_UTF8, f"field {number} is not UTF-8") from None


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
