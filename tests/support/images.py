"""Small real image files for the image tests (PNG built by hand: pycodex has no image library)."""

from __future__ import annotations

import base64
import struct
import zlib

__all__ = ["GIF_1X1", "data_url", "png"]

#: A 1x1 GIF.
GIF_1X1 = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,"
           b"\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")


def png(width: int, height: int, *, noise: bool = False) -> bytes:
    """A ``width`` x ``height`` RGB PNG (red, or pseudo-random pixels with ``noise`` so it stays large)."""
    row_bytes = width * 3
    if noise:
        seed = 12345
        rows = []
        for _ in range(height):
            row = bytearray(row_bytes)
            for i in range(row_bytes):
                seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
                row[i] = seed >> 23
            rows.append(b"\x00" + bytes(row))
        raw = b"".join(rows)
    else:
        raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def data_url(data: bytes, mime: str = "image/png") -> str:
    """``data`` as a base64 ``data:`` URL."""
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"
