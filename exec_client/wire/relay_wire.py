"""The protobuf wire primitives of relay frames, and their error tree.

Hand-written rather than generated: the frame has a dozen fields, prost's exact byte layout must be
matched (zero scalars omitted, the chosen body always written), and decoding sits on the relay's hot
path, so the few primitives it needs are kept here cheap and allocation-light. :mod:`relay_frames`
builds the frame kinds on them.

Errors: every decoding failure raises :class:`RelayFrameDecodeError` with a stable :class:`DropReason`.
"""

from __future__ import annotations

import enum
import functools
from typing import Final

__all__ = ["DropReason", "RelayFrameDecodeError"]

U32_MAX: Final = 2**32 - 1

VARINT: Final = 0
FIXED64: Final = 1
LEN: Final = 2
FIXED32: Final = 5


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


# -- encoding ------------------------------------------------------------------------------------------


_SMALL_VARINTS: Final = tuple(bytes([v]) for v in range(0x80))


def put_varint(out: bytearray, value: int) -> None:
    """Append ``value`` as a protobuf varint."""
    if value < 0x80:  # the common case (field keys, small counters), kept cheap: frames are hot
        out += _SMALL_VARINTS[value]
        return
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


@functools.cache
def key_bytes(number: int, wire_type: int) -> bytes:
    """The encoded key of field ``number`` with ``wire_type``."""
    out = bytearray()
    put_varint(out, (int(number) << 3) | wire_type)
    return bytes(out)


def put_key(out: bytearray, number: int, wire_type: int) -> None:
    """Append the key of field ``number``."""
    out += key_bytes(number, wire_type)


def put_uint(out: bytearray, number: int, value: int) -> None:
    """Append a uint32 field (ValueError if it does not fit)."""
    if not 0 <= value <= U32_MAX:
        raise ValueError(f"relay frame field {number} value {value} does not fit in uint32")
    if value:
        out += key_bytes(number, VARINT)
        put_varint(out, value)


def put_bytes(out: bytearray, number: int, value: bytes) -> None:
    """Append a length-delimited field; an empty value is omitted, as proto3 does."""
    if value:
        out += key_bytes(number, LEN)
        put_varint(out, len(value))
        out += value


# -- decoding ------------------------------------------------------------------------------------------


def fields(data: memoryview) -> list[tuple[int, int, int | memoryview]]:
    """Split a message into ``(field number, wire type, value)``; fixed-width values are skipped.
    Length-delimited values are views of ``data``: a ~60 KB payload is copied once, where it is used."""
    result: list[tuple[int, int, int | memoryview]] = []
    pos, end = 0, len(data)
    while pos < end:
        key = data[pos]  # keys of these messages fit one byte: no call for them
        if key < 0x80:
            pos += 1
        else:
            key, pos = read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise RelayFrameDecodeError(DropReason.BAD_WIRE_TYPE, "field number 0")
        if wire_type == VARINT:
            value, pos = read_varint(data, pos)
            result.append((number, wire_type, value))
        elif wire_type == LEN:
            length, pos = read_varint(data, pos)
            if length > end - pos:
                raise RelayFrameDecodeError(DropReason.TRUNCATED, f"field {number} claims {length} bytes")
            result.append((number, wire_type, data[pos : pos + length]))
            pos += length
        elif wire_type in (FIXED64, FIXED32):
            pos += 8 if wire_type == FIXED64 else 4
            if pos > end:
                raise RelayFrameDecodeError(DropReason.TRUNCATED, f"fixed-width field {number} cut off")
        else:
            raise RelayFrameDecodeError(DropReason.BAD_WIRE_TYPE, f"field {number} has wire type {wire_type}")
    return result


def read_varint(data: memoryview, pos: int) -> tuple[int, int]:
    """Read a varint at ``pos``; returns the value and the position after it."""
    if pos + 1 < len(data):  # one or two bytes: keys, small values, and lengths up to 16 KiB
        first = data[pos]
        if first < 0x80:
            return first, pos + 1
        second = data[pos + 1]
        if second < 0x80:
            return (first & 0x7F) | second << 7, pos + 2
    elif pos < len(data) and data[pos] < 0x80:
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


def as_uint32(number: int, wire_type: int, value: int | memoryview) -> int:
    """A decoded field as a uint32 (``RelayFrameDecodeError`` for the wrong wire type or range)."""
    if wire_type != VARINT or not isinstance(value, int):
        raise RelayFrameDecodeError(DropReason.BAD_WIRE_TYPE, f"field {number} must be a varint")
    if value > U32_MAX:
        raise RelayFrameDecodeError(
            DropReason.VALUE_OUT_OF_RANGE, f"field {number} value {value} exceeds uint32"
        )
    return value


def as_view(number: int, wire_type: int, value: int | memoryview) -> memoryview:
    """A decoded length-delimited field as a view (``RelayFrameDecodeError`` for the wrong wire type)."""
    if wire_type != LEN or not isinstance(value, memoryview):
        raise RelayFrameDecodeError(DropReason.BAD_WIRE_TYPE, f"field {number} must be length-delimited")
    return value


def as_bytes(number: int, wire_type: int, value: int | memoryview) -> bytes:
    """A decoded length-delimited field as bytes."""
    return bytes(as_view(number, wire_type, value))


def as_str(number: int, wire_type: int, value: int | memoryview) -> str:
    """A decoded length-delimited field as UTF-8 text (``RelayFrameDecodeError`` if it is not)."""
    try:
        return str(as_view(number, wire_type, value), "utf-8")
    except UnicodeDecodeError:
        raise RelayFrameDecodeError(DropReason.INVALID_UTF8, f"field {number} is not UTF-8") from None
