"""Thread/turn id helpers: UUIDv7 generation (stdlib 3.11 has none) and id validation."""

from __future__ import annotations

import os
import time
import uuid

from .errors import InvalidThreadIdError


def new_uuid7(now_ms: int | None = None) -> str:
    """A random RFC 9562 UUIDv7 string; time-ordered at millisecond resolution."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    if not 0 <= ms < 1 << 48:
        raise ValueError(f"timestamp out of UUIDv7 range: {ms}")
    rand = int.from_bytes(os.urandom(10), "big")
    rand_a = rand >> 68  # 12 bits
    rand_b = rand & ((1 << 62) - 1)
    value = (ms << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b
    return str(uuid.UUID(int=value))


def uuid7_timestamp_ms(value: str) -> int:
    """The millisecond timestamp embedded in a UUIDv7 string."""
    return uuid.UUID(value).int >> 80


def parse_thread_id(value: object) -> str:
    """Validate a thread id and return its canonical lowercase form.

    Raises InvalidThreadIdError (message starts with ``invalid thread id:``) for anything that is not a UUID;
    the id is later embedded in file names, so nothing else may pass.
    """
    if not isinstance(value, str):
        raise InvalidThreadIdError(f"invalid thread id: expected a string, got {type(value).__name__}")
    try:
        parsed = uuid.UUID(value)
    except ValueError:
        raise InvalidThreadIdError(f"invalid thread id: {value!r} is not a UUID") from None
    return str(parsed)
