"""A minimal asyncio HTTP/1.1 server for the development registry (JSON in, JSON out).

Owns request parsing with hard limits (head 16 KiB, body 1 MiB, ``Content-Length`` only, no chunked
bodies), keep-alive with an idle timeout, and response serialization. The ``websockets`` server cannot
take request bodies, and the registry is small enough that a hand-written loop beats a new dependency.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from urllib.parse import unquote, urlsplit

__all__ = ["HttpRequest", "HttpResponse", "json_error", "json_response", "start_http_server"]

log = logging.getLogger(__name__)

MAX_HEAD_BYTES = 16 * 1024
MAX_BODY_BYTES = 1024 * 1024
IDLE_TIMEOUT_S = 30.0
BODY_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class HttpRequest:
    """One parsed HTTP/1.1 request to the dev registry."""

    method: str
    #: Percent-decoded path without the query string.
    path: str
    query: str
    #: Header names lower-cased; a repeated header keeps its last value.
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class HttpResponse:
    """The registry's answer: a status and a body, JSON unless said otherwise."""

    status: int
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def json_response(status: int, value: object) -> HttpResponse:
    """A response whose body is ``value`` as compact JSON."""
    return HttpResponse(status, json.dumps(value, separators=(",", ":")).encode())


def json_error(status: int, code: str, message: str) -> HttpResponse:
    """The error body Codex prints as ``(<status>, <code>): <message>``."""
    return json_response(status, {"error": {"code": code, "message": message}})


Handler = Callable[[HttpRequest], Awaitable[HttpResponse]]


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def _read_request(reader: asyncio.StreamReader) -> HttpRequest | None:
    """One request, or None when the client closed an idle connection."""
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), IDLE_TIMEOUT_S)
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise _BadRequest(400, "connection closed inside the request head") from exc
        return None
    except asyncio.LimitOverrunError as exc:
        raise _BadRequest(431, f"request head exceeds {MAX_HEAD_BYTES} bytes") from exc
    lines = head[:-4].decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _BadRequest(400, "malformed request line")
    method, target, _ = parts
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise _BadRequest(400, "malformed header line")
        headers[name.lower()] = value.strip()
    if "transfer-encoding" in headers:
        raise _BadRequest(411, "chunked request bodies are not supported; send Content-Length")
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError as exc:
        raise _BadRequest(400, "Content-Length is not a number") from exc
    if not 0 <= length <= MAX_BODY_BYTES:
        raise _BadRequest(413, f"request body must be at most {MAX_BODY_BYTES} bytes")
    body = await asyncio.wait_for(reader.readexactly(length), BODY_TIMEOUT_S) if length else b""
    split = urlsplit(target)
    return HttpRequest(method.upper(), unquote(split.path), split.query, headers, body)


def _serialize(response: HttpResponse, *, keep_alive: bool) -> bytes:
    try:
        phrase = HTTPStatus(response.status).phrase
    except ValueError:
        phrase = "Status"
    lines = [
        f"HTTP/1.1 {response.status} {phrase}",
        f"content-type: {response.content_type}",
        f"content-length: {len(response.body)}",
    ]
    lines += [f"{k}: {v}" for k, v in response.headers.items()]
    lines.append("connection: keep-alive" if keep_alive else "connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + response.body


async def _drain_briefly(reader: asyncio.StreamReader) -> None:
    """Read what the client still sends (up to 1 MiB, 1 s) so that closing does not reset the
    connection and destroy the error answer before the client reads it."""
    with contextlib.suppress(TimeoutError, ConnectionError, asyncio.LimitOverrunError):
        async with asyncio.timeout(1.0):
            for _ in range(16):
                if not await reader.read(65536):
                    return


async def start_http_server(handler: Handler, host: str, port: int) -> asyncio.Server:
    """Serve ``handler`` on ``host:port``; the caller closes the returned server."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            for _ in range(10_000):  # bound one connection's request count
                try:
                    request = await _read_request(reader)
                except _BadRequest as exc:
                    writer.write(
                        _serialize(json_error(exc.status, "bad_request", str(exc)), keep_alive=False)
                    )
                    await writer.drain()
                    if writer.can_write_eof():
                        writer.write_eof()  # half-close: the client sees the end of the answer
                    await _drain_briefly(reader)
                    return
                if request is None:
                    return
                try:
                    response = await handler(request)
                except Exception:
                    log.exception("registry handler failed for %s %s", request.method, request.path)
                    response = json_error(500, "internal_error", "the development registry failed")
                keep_alive = request.headers.get("connection", "").lower() != "close"
                writer.write(_serialize(response, keep_alive=keep_alive))
                await writer.drain()
                if not keep_alive:
                    return
        except (ConnectionError, TimeoutError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    return await asyncio.start_server(serve, host, port, limit=MAX_HEAD_BYTES)
