"""Base64 for the exec wire's bulk data (output chunks, file blocks), fast when pybase64 is installed.

Output streams as base64 in every ``process/output``; the stdlib encoder took about a third of the
exec-server's CPU per streamed byte, pybase64's SIMD one a few percent. Both produce the same bytes,
and the lenient decoder behaves as ``base64.b64decode`` does (non-alphabet characters are skipped).
Strict decoding of what peers send stays with the stdlib (``protocol.b64decode_strict``): its
padding rules are the reference.
"""

from __future__ import annotations

import binascii

try:
    import pybase64
except ImportError:  # pragma: no cover - the stdlib path is the reference
    pybase64 = None  # type: ignore[assignment]

__all__ = ["decode", "encode"]


def encode(data: bytes | memoryview) -> bytes:
    """Standard padded base64, no newline."""
    if pybase64 is not None:
        return pybase64.b64encode(data)
    return binascii.b2a_base64(data, newline=False)


def decode(text: str | bytes) -> bytes:
    """Lenient decode, as ``base64.b64decode(text)``: raises ``binascii.Error`` on bad padding."""
    if pybase64 is not None:
        return pybase64.b64decode(text)
    return binascii.a2b_base64(text)
