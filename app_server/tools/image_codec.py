"""Image bytes made ready for the model as Codex 0.169 makes them: decode, fit to a patch budget, re-encode.

Facts (Codex's prompt-image preparation, checked against the 0.169 binary, tests/data/images/):

* Formats: PNG, JPEG, GIF and WebP decode (by their magic bytes); anything else, BMP included (0.169 builds
  no BMP decoder), and undecodable bytes fail.
* Budget per detail: ``high`` fits in 2048 px per side and 2500 patches of 32x32 px, ``original`` in 6000 px
  and 10000 patches. Too big: scale to the side limit (rounded), then, if still over the patch budget,
  scale by the patch ratio, shrunk so the patch grid is whole, floored (:func:`fit_dimensions`).
* An image that fits is sent as its own bytes if PNG, JPEG or WebP; a GIF becomes a PNG (its first frame).
  A resized image (a triangle filter, Pillow's antialiased bilinear) keeps its format if PNG, JPEG
  (quality 85) or WebP (lossless), else becomes PNG; PNG and WebP output is RGBA. An RGB ICC profile and
  EXIF data are carried over.
* Bounds: input whose base64 form exceeds 1 GiB is too large (:class:`ImageTooLarge`). ``view_image``
  decodes under the image crate's default allocation limit, 512 MiB of pixels (:data:`MAX_DECODED_BYTES`,
  estimated here from the header's size and mode before any pixel is decoded); a user's image has no such
  limit in Codex (a 12000x12000 RGBA PNG is sent, shrunk). pycodex bounds it by Pillow's decompression-bomb
  guard instead (about 179 million pixels: the same bound as 512 MiB for RGB, looser for RGBA, stricter for
  grey or palette images), failing closed as an undecodable image; past half of it Pillow only warns.

Pillow is imported on first use (a ``LazyModule`` handle, ``app_server/loading.py``): start-up never loads it.
Callers run :func:`prepare` off the event loop; it is CPU work.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from app_server.lazy import LazyModule

if TYPE_CHECKING:
    import PIL.Image as pil
else:
    pil = LazyModule("PIL.Image")

__all__ = [
    "HIGH",
    "MAX_BASE64_BYTES",
    "MAX_DECODED_BYTES",
    "ORIGINAL",
    "ImageTooLarge",
    "Limits",
    "Prepared",
    "UnprocessableImage",
    "fit_dimensions",
    "limits_for",
    "prepare",
    "too_large",
]


@dataclass(frozen=True, slots=True)
class Limits:
    """A detail's budget: the longest side and the count of 32x32 patches."""

    max_dimension: int
    max_patches: int


HIGH: Final = Limits(2048, 2500)
ORIGINAL: Final = Limits(6000, 10_000)
PATCH: Final = 32
#: The largest base64 payload Codex accepts (a sanity guard against pathological inputs).
MAX_BASE64_BYTES: Final = 1024 * 1024 * 1024
#: The image crate's default allocation limit for one decoded image.
MAX_DECODED_BYTES: Final = 512 * 1024 * 1024

#: Pillow format name per MIME type Codex decodes.
_FORMATS: Final = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WEBP"}
#: Formats whose bytes go out as they are when the image fits.
_KEPT: Final = frozenset({"image/png", "image/jpeg", "image/webp"})
#: Bytes per pixel as the image crate decodes each Pillow mode (palettes expand; GIF always to RGBA).
_DECODED_BPP: Final = {"1": 1, "L": 1, "LA": 2, "I;16": 2, "I;16B": 2, "I;16L": 2, "RGB": 3, "YCbCr": 3,
                       "CMYK": 3, "P": 3, "PA": 4, "RGBA": 4}


class UnprocessableImage(Exception):
    """The bytes are no image Codex decodes (unknown or unsupported format, corrupt, over the pixel budget)."""


class ImageTooLarge(Exception):
    """The input is over Codex's size guard."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """What goes to the model: the bytes, their MIME type and the image's size."""

    data: bytes
    mime: str
    width: int
    height: int


def limits_for(detail: str | None) -> Limits:
    """The budget of an ``input_image`` ``detail`` (``original``, else the ``high`` budget)."""
    return ORIGINAL if detail == "original" else HIGH


def _fits(width: int, height: int, limits: Limits) -> bool:
    patches = math.ceil(width / PATCH) * math.ceil(height / PATCH)
    return width <= limits.max_dimension and height <= limits.max_dimension and patches <= limits.max_patches


def fit_dimensions(width: int, height: int, limits: Limits) -> tuple[int, int]:
    """The size Codex sends a ``width`` x ``height`` image at under ``limits`` (the same size if it fits)."""
    width, height = max(width, 1), max(height, 1)
    if _fits(width, height, limits):
        return width, height
    side = min(limits.max_dimension / max(width, height), 1.0)
    # Rust's f64::round rounds halves away from zero; Python's round() would round them to even.
    width, height = max(math.floor(width * side + 0.5), 1), max(math.floor(height * side + 0.5), 1)
    if _fits(width, height, limits):
        return width, height
    scale = math.sqrt(PATCH * PATCH * limits.max_patches / width / height)
    wide, high = width * scale / PATCH, height * scale / PATCH
    scale *= min(math.floor(wide) / wide, math.floor(high) / high)
    return max(math.floor(width * scale), 1), max(math.floor(height * scale), 1)


def too_large(size: int) -> bool:
    """Whether ``size`` bytes of input are over Codex's guard (their base64 form past 1 GiB)."""
    return 4 * math.ceil(size / 3) > MAX_BASE64_BYTES


def _metadata(image: Any) -> dict[str, Any]:
    """The ICC profile (RGB ones only: safe for every output) and EXIF data to carry into the new encoding."""
    out: dict[str, Any] = {}
    icc = image.info.get("icc_profile")
    if isinstance(icc, bytes) and icc[16:20] == b"RGB ":
        out["icc_profile"] = icc
    exif = image.info.get("exif")
    if isinstance(exif, bytes) and exif:
        out["exif"] = exif
    return out


def _eight_bit(image: pil.Image) -> pil.Image:
    """``image`` with 16-bit grey scaled to 8 bits, as Codex's RGBA8 conversion does (Pillow's own clips)."""
    if image.mode.startswith("I;16"):
        return image.convert("I").point(lambda v: v / 256).convert("L")
    return image


def _encode(image: Any, mime: str, metadata: dict[str, Any]) -> bytes:
    out = io.BytesIO()
    if mime == "image/jpeg":
        image = image if image.mode in ("L", "RGB") else image.convert("RGB")
        image.save(out, format="JPEG", quality=85, **metadata)
    elif mime == "image/webp":
        image.convert("RGBA").save(out, format="WEBP", lossless=True, **metadata)
    else:
        image.convert("RGBA").save(out, format="PNG", **metadata)
    return out.getvalue()


def prepare(data: bytes, source_mime: str | None, detail: str | None, *,
            max_decoded: int | None = None) -> Prepared:
    """``data`` (sniffed as ``source_mime``) as Codex sends it for ``detail``, failing (from the header) an
    image whose decoded pixels would need more than ``max_decoded`` bytes. Raises :class:`ImageTooLarge` or
    :class:`UnprocessableImage`."""
    if too_large(len(data)):
        raise ImageTooLarge(f"image input is too large ({len(data)} bytes)")
    fmt = _FORMATS.get(source_mime or "")
    if fmt is None or source_mime is None:
        raise UnprocessableImage(f"unsupported image format {source_mime or 'unknown'}")
    try:
        with pil.open(io.BytesIO(data), formats=[fmt]) as image:
            width, height = image.size
            bpp = 4 if fmt == "GIF" else _DECODED_BPP.get(image.mode, 4)
            if max_decoded is not None and width * height * bpp > max_decoded:
                raise UnprocessableImage(f"a {width}x{height} image exceeds the decoding memory limit")
            image.load()
            target = fit_dimensions(width, height, limits_for(detail))
            if target == (width, height) and source_mime in _KEPT:
                return Prepared(data, source_mime, width, height)
            metadata = _metadata(image)
            out_mime = source_mime if source_mime in _KEPT else "image/png"
            frame: pil.Image = _eight_bit(image)
            if target != (width, height):
                # Resize in a mode that keeps alpha and that every filter supports (palettes do not).
                mode = "RGBA"
                if out_mime == "image/jpeg":
                    mode = frame.mode if frame.mode in ("L", "RGB") else "RGB"
                frame = frame.convert(mode).resize(target, pil.Resampling.BILINEAR)
            return Prepared(_encode(frame, out_mime, metadata), out_mime, *target)
    except UnprocessableImage:
        raise
    except (OSError, ValueError, SyntaxError, EOFError, pil.DecompressionBombError,
            pil.DecompressionBombWarning) as exc:
        # Pillow reports a corrupt or truncated file as any of these; all mean "not an image we can send".
        raise UnprocessableImage(str(exc)) from exc
