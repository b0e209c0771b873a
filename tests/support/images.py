"""Real image files for the image tests: hand-built PNG/GIF bytes, and Pillow-built fixtures per recipe."""

from __future__ import annotations

import base64
import io
import struct
import zlib
from typing import Any

__all__ = ["CORRUPT_PNG", "GIF_1X1", "data_url", "decode", "fixture", "giant_png", "png"]

#: A 1x1 GIF.
GIF_1X1 = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,"
           b"\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")
#: PNG magic bytes followed by garbage: recognised as PNG, undecodable.
CORRUPT_PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


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


def giant_png(width: int, height: int, *, pixels: bool = True) -> bytes:
    """A grey RGBA PNG too big to decode cheaply, compressed row by row (never held raw); with ``pixels``
    false its image data is garbage, so only the header is real."""
    if pixels:
        packer = zlib.compressobj(1)
        row = b"\x00" + b"\x80" * (width * 4)
        idat = b"".join([packer.compress(row) for _ in range(height)] + [packer.flush()])
    else:
        idat = b"garbage"

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def fixture(fmt: str, width: int, height: int) -> bytes:
    """A deterministic ``width`` x ``height`` gradient image in Pillow format ``fmt`` (PNG, JPEG, GIF,
    WEBP, BMP), :data:`CORRUPT_PNG` for ``fmt`` "corrupt", or a :func:`giant_png` for "giant" (the recipes
    the capture script records)."""
    if fmt == "corrupt":
        return CORRUPT_PNG
    if fmt == "giant":
        return giant_png(width, height)
    from PIL import Image

    ramp = Image.linear_gradient("L")
    red = ramp.resize((width, height))
    green = ramp.rotate(90).resize((width, height))
    blue = Image.new("L", (width, height), 96)
    image = Image.merge("RGB", (red, green, blue))
    if fmt == "GIF":
        image = image.convert("P")
    out = io.BytesIO()
    image.save(out, format=fmt, **({"lossless": True} if fmt == "WEBP" else {}))
    return out.getvalue()


def decode(url: str) -> dict[str, Any]:
    """What an ``input_image`` data URL holds: its MIME type, the decoded image's size, and its bytes."""
    from PIL import Image

    head, _, payload = url.partition(",")
    data = base64.b64decode(payload)
    with Image.open(io.BytesIO(data)) as image:
        width, height = image.size
    return {"mime": head.removeprefix("data:").removesuffix(";base64"), "width": width, "height": height,
            "bytes": data}


def data_url(data: bytes, mime: str = "image/png") -> str:
    """``data`` as a base64 ``data:`` URL."""
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"
