"""``http/request``: the executor makes an HTTP request on the harness's behalf (Codex 0.169.0 shapes).

The result carries status, lower-cased headers in order and the base64 body. With ``streamResponse``
the body is empty in the result and follows as ``http/request/bodyDelta`` notifications (seq from 1,
ending with ``done: true`` and an empty delta) *after* the response has been sent. Failures to reach
the server (refused, timeout) are -32603 ``http/request failed: error sending request for url (URL)``.
Bodies are bounded: a response larger than ``MAX_BODY_BYTES`` fails instead of filling memory.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from urllib.parse import urlsplit

import httpx

from exec_client.wire.protocol import HttpRequestParams, b64decode_strict, b64encode
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InternalError, InvalidParams

__all__ = ["MAX_BODY_BYTES", "perform", "prepare"]

MAX_BODY_BYTES = 64 * 1024 * 1024
BODY_DELTA = "http/request/bodyDelta"

Notify = Callable[[str, JsonObj], Awaitable[None]]


def prepare(p: HttpRequestParams) -> bytes | None:
    """Validate the request like Codex does (-32602) and return the decoded body."""
    parts = urlsplit(p.url)
    if not parts.scheme:
        raise InvalidParams("http/request url is invalid: relative URL without a base")
    if parts.scheme not in ("http", "https"):
        raise InvalidParams(f"http/request only supports http and https URLs, got {parts.scheme}")
    if p.body_base64 is None:
        return None
    try:
        return b64decode_strict(p.body_base64)
    except ValueError as exc:
        raise InvalidParams(str(exc)) from exc


def _client(p: HttpRequestParams) -> httpx.AsyncClient:
    timeout = None if p.timeout_ms is None else p.timeout_ms / 1000
    client = httpx.AsyncClient(follow_redirects=p.redirect_policy != "stop", timeout=timeout)
    for name in ("user-agent", "accept-encoding", "connection"):  # send what reqwest sends
        client.headers.pop(name, None)
    return client


def _failed(p: HttpRequestParams) -> InternalError:
    return InternalError(f"http/request failed: error sending request for url ({p.url})")


async def perform(
    p: HttpRequestParams, notify: Notify
) -> tuple[JsonObj, Callable[[], Coroutine[object, object, None]] | None]:
    """Run the request; returns the result and, when streaming, the body pump to run after it."""
    body = prepare(p)
    client = _client(p)
    request = client.build_request(
        p.method, p.url, headers=[(h.name, h.value) for h in p.headers], content=body
    )
    try:
        response = await client.send(request, stream=True)
    except httpx.HTTPError as exc:
        await client.aclose()
        raise _failed(p) from exc
    headers = [
        {"name": k.decode("latin-1").lower(), "value": v.decode("latin-1")} for k, v in response.headers.raw
    ]
    result: JsonObj = {"status": response.status_code, "headers": headers, "bodyBase64": ""}
    if p.stream_response:
        return result, lambda: _stream_body(p, client, response, notify)
    try:
        data = bytearray()
        async for piece in response.aiter_raw():
            data += piece
            if len(data) > MAX_BODY_BYTES:
                raise InternalError(f"http/request failed: response body exceeds {MAX_BODY_BYTES} bytes")
    except httpx.HTTPError as exc:
        raise _failed(p) from exc
    finally:
        await response.aclose()
        await client.aclose()
    result["bodyBase64"] = b64encode(bytes(data))
    return result, None


async def _stream_body(
    p: HttpRequestParams, client: httpx.AsyncClient, response: httpx.Response, notify: Notify
) -> None:
    seq = 0
    error: str | None = None
    try:
        async for piece in response.aiter_raw():
            if piece:
                seq += 1
                await notify(BODY_DELTA, _delta(p, seq, piece, done=False, error=None))
    except httpx.HTTPError as exc:
        error = f"http/request body failed: {exc}"
    finally:
        await response.aclose()
        await client.aclose()
    with contextlib.suppress(ConnectionError):
        await notify(BODY_DELTA, _delta(p, seq + 1, b"", done=True, error=error))


def _delta(p: HttpRequestParams, seq: int, data: bytes, *, done: bool, error: str | None) -> JsonObj:
    return {
        "requestId": p.request_id,
        "seq": seq,
        "deltaBase64": b64encode(data),
        "done": done,
        "error": error,
    }
