"""Base64 for the exec wire's bulk data (output chunks, file blocks), fast when pybase64 is installed.

Output streams as base64 in every ``process/output``; the stdlib encoder took about a third of the
exec-server's CPU per streamed byte, pybase64's SIMD one a few percent. Both produce the same bytes,
and the lenient decoder behaves as ``base64.b64decode`` does (non-alphabet characters are skipped,
bad padding raises ``binascii.Error``). Strict decoding of what peers send stays with the stdlib
(``protocol.b64decode_strict``): its padding rules are the reference. With pybase64 ``encode`` is its
own (no Python frame per chunk on the output path).
"""

from __future__ import annotations

import binascii
from collections.abc import Callable

__all__ = ["decode", "encode"]

#: Standard padded base64 of bytes, no newline.
encode: Callable[[bytes | memoryview], bytes]
#: Lenient decode, as ``base64.b64decode(text)``.
decode: Callable[[str | bytes], bytes]

try:
    from pybase64 import b64decode as _pybase64_decode
    from pybase64 import b64encode as encode

    def decode(text: str | bytes) -> bytes:
        # pybase64's lenient decoder scans for stray characters without SIMD: ~4x slower on an output
        # chunk than its validating one. Well-formed text (every chunk a peer sends) takes the fast one,
        # the rest the lenient one, so the answers are the lenient decoder's either way.
        try:
            return _pybase64_decode(text, validate=True)
        except binascii.Error:
            return _pybase64_decode(text)

except ImportError:  # pragma: no cover - the stdlib path is the reference

    def encode(data: bytes | memoryview) -> bytes:
        return binascii.b2a_base64(data, newline=False)

    def decode(text: str | bytes) -> bytes:
        return binascii.a2b_base64(text)
