"""Images for the model as Codex 0.169 sends them: user image inputs and the ``view_image`` tool.

A ``localImage`` input becomes three parts of the user message, ``<image name=[Image #N] path="P">``, the
``input_image`` (a ``data:`` URL of the prepared image) and ``</image>``; an ``image`` input becomes its
``input_image`` alone, a ``data:`` URL prepared the same way, any other URL as given. N counts the turn's
image inputs of both kinds. A local image that cannot be read becomes one text part (``Codex could not read
the local image at `P`: ...``); one that cannot be decoded keeps the wrapper around ``image content omitted
because it could not be processed`` (``... exceeded the supported size limit ...`` for one over Codex's
size guard).

``view_image`` answers with a ``function_call_output`` whose output is a content list holding the one
``input_image``, after an ``imageView`` item (id = the call id, the absolute path) started and completed.

The ``detail`` is the model's: ``original`` for a model with catalog metadata, ``high`` otherwise. Each
image is prepared for it by ``app_server/tools/image_codec.py`` (off the event loop): decoded, shrunk to
the detail's budget, re-encoded where Codex re-encodes (GIF always becomes PNG; BMP and other formats are
refused). A model whose catalog ``inputModalities`` lack ``image`` gets, in each request, ``image content
omitted because you do not support image input`` in place of every image (the history keeps them), as
Codex normalises its prompt.

Known gaps: Codex prepares images as it builds each request and caches the results (32 entries, by content
digest); pycodex prepares each once, as it enters the history, with no cache (the wire is the same). A
resized or re-encoded image has Codex's size and MIME type, not its exact bytes (another encoder). Remote
(non-``data:``) image URLs are passed on as given. ``view_image`` of an input over the size guard answers
the undecodable-image text (not checked against Codex).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from app_server.lazy import LazyModule
from app_server.protocol import notices
from app_server.protocol.base import to_wire
from app_server.protocol.items import ImageViewItem
from app_server.store import new_uuid7
from app_server.threads import items as it
from app_server.threads.model_metadata import catalog_entry, has_model_metadata
from app_server.tools.contracts import ToolOutcome
from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.threads.sampling import ToolCall
    from app_server.tools import image_codec as codec
    from app_server.tools.contracts import ToolContext
else:
    codec = LazyModule("app_server.tools.image_codec")

__all__ = [
    "NOT_SUPPORTED",
    "OMITTED",
    "image_detail",
    "image_mime",
    "load_user_content",
    "model_input",
    "supports_images",
    "view_image",
]

#: The text that stands for an image whose bytes could not be processed.
OMITTED = "image content omitted because it could not be processed"
#: What replaces each image sent to a model whose catalog `inputModalities` lack "image".
NOT_SUPPORTED = "image content omitted because you do not support image input"
#: The text that stands for a user image over Codex's size guard.
TOO_LARGE = "image content omitted because it exceeded the supported size limit; use a smaller image"
#: ``view_image``'s answer for a file that is no image it can send.
UNSUPPORTED = "unable to process image: invalid or unsupported image data"

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
)


def image_mime(data: bytes) -> str | None:
    """The MIME type of ``data`` by its magic bytes (PNG, JPEG, GIF, WebP, BMP), or None if none matches."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    for magic, mime in _MAGIC:
        if data.startswith(magic) and len(data) > len(magic):
            return mime
    return None


def image_detail(model: str) -> str:
    """The ``detail`` Codex gives ``model``'s images: ``original`` with catalog metadata, else ``high``."""
    return "original" if has_model_metadata(model) else "high"


@cache
def supports_images(model: str) -> bool:
    """Whether ``model`` takes images: its catalog entry's ``inputModalities`` (a model outside the catalog
    gets Codex's fallback metadata, which takes them)."""
    entry = catalog_entry(model)
    modalities = None if entry is None else entry.get("inputModalities")
    return not isinstance(modalities, list) or "image" in modalities


def _strip_parts(parts: list[JsonObj]) -> list[JsonObj]:
    return [_text(NOT_SUPPORTED) if isinstance(p, dict) and p.get("type") == "input_image" else p for p in parts]


def model_input(history: list[JsonObj], model: str) -> list[JsonObj]:
    """The request's ``input``: the history, with every image (in messages and tool output lists) replaced
    by Codex's text when ``model`` takes no images. The history itself keeps the images."""
    if supports_images(model):
        return history
    out: list[JsonObj] = []
    for item in history:
        if item.get("type") == "message" and isinstance(item.get("content"), list):
            item = dict(item, content=_strip_parts(item["content"]))
        elif item.get("type") in ("function_call_output", "custom_tool_call_output") \
                and isinstance(item.get("output"), list):
            item = dict(item, output=_strip_parts(item["output"]))
        out.append(item)
    return out


def _data_url(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _input_image(url: str, detail: str) -> JsonObj:
    return {"type": "input_image", "image_url": url, "detail": detail}


def _text(text: str) -> JsonObj:
    return {"type": "input_text", "text": text}


def _os_error(exc: OSError) -> str:
    """``exc`` worded as Rust's io::Error displays it."""
    if exc.errno is None:
        return str(exc)
    return f"{exc.strerror} (os error {exc.errno})"


def _prepared_part(data: bytes, detail: str, max_decoded: int | None = None) -> JsonObj:
    """``data`` prepared for the model as an ``input_image``, or the text that stands for it."""
    try:
        image = codec.prepare(data, image_mime(data), detail, max_decoded=max_decoded)
    except codec.ImageTooLarge:
        return _text(TOO_LARGE)
    except codec.UnprocessableImage:
        return _text(OMITTED)
    return _input_image(_data_url(image.data, image.mime), detail)


def _url_part(url: str, detail: str) -> JsonObj:
    """An ``image`` input: a ``data:`` URL of base64 image bytes, prepared; any other URL as given."""
    if not url:
        return _text(OMITTED)
    if url[:5].lower() != "data:":
        return _input_image(url, detail)
    head, sep, payload = url.partition(",")
    if not sep or "base64" not in (p.lower() for p in head.split(";")):
        return _text(OMITTED)
    if len(payload) > codec.MAX_BASE64_BYTES:
        return _text(TOO_LARGE)
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return _text(OMITTED)
    return _prepared_part(data, detail)


def _local_parts(path: str, cwd: Path, number: int, detail: str) -> list[JsonObj]:
    file = cwd / path
    try:
        # A file over the size guard is never read whole: its size says enough.
        middle = _text(TOO_LARGE) if codec.too_large(file.stat().st_size) else None
        data = b"" if middle else file.read_bytes()
    except OSError as exc:
        return [_text(f"Codex could not read the local image at `{path}`: {_os_error(exc)}")]
    return [_text(f'<image name=[Image #{number}] path="{path}">'), middle or _prepared_part(data, detail),
            _text("</image>")]


def _user_content(inputs: list[JsonObj], cwd: Path, detail: str) -> list[JsonObj]:
    content: list[JsonObj] = []
    number = 0
    for part in inputs:
        kind = part.get("type")
        if kind == "text":
            content.append(_text(str(part.get("text", ""))))
        elif kind == "localImage":
            number += 1
            content += _local_parts(str(part.get("path", "")), cwd, number, detail)
        elif kind == "image":
            number += 1
            content.append(_url_part(str(part.get("url") or ""), detail))
        elif kind == "mention":
            content.append(_text(f"[mention {part.get('name')}: {part.get('path')}]"))
    return content


async def load_user_content(inputs: list[JsonObj], *, cwd: Path, model: str) -> list[JsonObj]:
    """The content parts of the user message a turn's ``inputs`` make (local images read from ``cwd``)."""
    return await asyncio.to_thread(_user_content, inputs, cwd, image_detail(model))


def _output(call: ToolCall, output: str | list[JsonObj]) -> JsonObj:
    return {"type": "function_call_output", "id": f"fco_{new_uuid7()}", "call_id": call.call_id,
            "output": output}


async def _read(ctx: ToolContext, path: Path) -> bytes | str:
    """The file's bytes through the thread's environment, or Codex's text of why not."""
    where = ctx.thread.services.environment
    await where.spawner()
    environment = where.execution_environment
    try:
        if environment is None:
            if not path.exists():
                raise FileNotFoundError(2, "No such file or directory")
            if not path.is_file():
                return f"image path `{path}` is not a file"
            return await asyncio.to_thread(path.read_bytes)
        meta = await environment.metadata(path)
        if not meta.is_file:
            return f"image path `{path}` is not a file"
        return await environment.read_file(path)
    except OSError as exc:
        return f"unable to locate image at `{path}`: {_os_error(exc)}"


async def view_image(ctx: ToolContext, call: ToolCall) -> ToolOutcome:
    """Run ``view_image``: attach the file at ``path`` (relative to the cwd) for the model to see."""
    try:
        args = json.loads(call.arguments or "{}")
    except json.JSONDecodeError as exc:
        return ToolOutcome(_output(call, f"failed to parse function arguments: {exc}"))
    raw = args.get("path") if isinstance(args, dict) else None
    if not isinstance(raw, str):
        return ToolOutcome(_output(call, "failed to parse function arguments: missing field `path`"))
    thread, turn = ctx.thread, ctx.turn
    path = Path(thread.settings.cwd) / raw
    data = await _read(ctx, path)
    if isinstance(data, str):
        return ToolOutcome(_output(call, data))
    detail = image_detail(thread.settings.model)
    part = await asyncio.to_thread(_prepared_part, data, detail, codec.MAX_DECODED_BYTES)
    if part["type"] != "input_image":
        return ToolOutcome(_output(call, UNSUPPORTED))
    started = it.now_ms()
    item = to_wire(ImageViewItem(id=call.call_id, path=str(path), started_at_ms=started))
    await thread.emit(notices.item_started(item, thread.id, turn.id))
    await ctx.complete_item(dict(item, completedAtMs=it.now_ms()))
    return ToolOutcome(_output(call, [part]))
