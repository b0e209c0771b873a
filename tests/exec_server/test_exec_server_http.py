"""``http/request`` against a real loopback HTTP server, for our exec-server and Codex's."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.execserver import STEP, ServerProc, raw_client, run_ws_server, server_params


@pytest.fixture(params=server_params())
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProc]:
    with run_ws_server(request.param, tmp_path) as srv:
        yield srv


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), STEP)).decode("latin-1")
        request_line, *lines = head.split("\r\n")
        method, target, _ = request_line.split(" ", 2)
        headers = {k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines if ":" in ln)}
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        if target == "/redirect":
            writer.write(
                b"HTTP/1.1 302 Found\r\nlocation: /echo\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )
        elif target == "/stream":
            writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n")
            for i in range(3):
                piece = f"chunk{i};".encode()
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                await writer.drain()
                await asyncio.sleep(0.05)
            writer.write(b"0\r\n\r\n")
        else:
            if target == "/slow":
                await asyncio.sleep(3)
            payload = json.dumps(
                {"method": method, "path": target, "headers": headers, "body": body.decode()}
            )
            data = payload.encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\nX-Multi: a\r\nX-Multi: b\r\ncontent-type: application/json\r\n"
                + f"content-length: {len(data)}\r\nconnection: close\r\n\r\n".encode()
                + data
            )
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
        pass
    finally:
        writer.close()


@contextlib.asynccontextmanager
async def http_server() -> AsyncIterator[str]:
    srv = await asyncio.start_server(_handle, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}"
    finally:
        srv.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(srv.wait_closed(), STEP)


def _body(result: dict[str, Any]) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(base64.b64decode(result["bodyBase64"]))
    return decoded


async def test_a_request_returns_status_lowercased_headers_in_order_and_the_body(server: ServerProc) -> None:
    async with http_server() as base, raw_client(server.url) as c:
        await c.initialize()
        params = {
            "method": "POST",
            "url": base + "/echo?q=1",
            "headers": [{"name": "X-A", "value": "1"}],
            "bodyBase64": base64.b64encode(b"ping").decode(),
            "requestId": "r1",
        }
        result = await c.ok("http/request", params)
        assert result["status"] == 200
        names = [h["name"] for h in result["headers"]]
        assert names[:3] == ["x-multi", "x-multi", "content-type"]
        seen = _body(result)
        assert (seen["method"], seen["path"], seen["body"]) == ("POST", "/echo?q=1", "ping")
        assert seen["headers"]["x-a"] == "1" and seen["headers"]["accept"] == "*/*"
        assert "user-agent" not in seen["headers"]


async def test_redirects_are_followed_unless_the_policy_is_stop(server: ServerProc) -> None:
    async with http_server() as base, raw_client(server.url) as c:
        await c.initialize()
        followed = await c.ok("http/request", {"method": "GET", "url": base + "/redirect", "requestId": "a"})
        assert followed["status"] == 200 and _body(followed)["path"] == "/echo"
        stop = {"method": "GET", "url": base + "/redirect", "requestId": "b", "redirectPolicy": "stop"}
        stopped = await c.ok("http/request", stop)
        assert stopped["status"] == 302 and {"name": "location", "value": "/echo"} in stopped["headers"]


async def test_a_streamed_body_follows_the_response_as_body_deltas(server: ServerProc) -> None:
    async with http_server() as base, raw_client(server.url) as c:
        await c.initialize()
        result = await c.ok(
            "http/request",
            {"method": "GET", "url": base + "/stream", "requestId": "s", "streamResponse": True},
        )
        assert result["status"] == 200 and result["bodyBase64"] == ""
        deltas = [n["params"] for n in c.notes if n.get("method") == "http/request/bodyDelta"]
        for _ in range(100):
            if deltas and deltas[-1]["done"]:
                break
            note = await c.recv()
            assert note["method"] == "http/request/bodyDelta"
            deltas.append(note["params"])
        assert [d["seq"] for d in deltas] == list(range(1, len(deltas) + 1))
        assert b"".join(base64.b64decode(d["deltaBase64"]) for d in deltas) == b"chunk0;chunk1;chunk2;"
        assert deltas[-1] == {
            "requestId": "s",
            "seq": len(deltas),
            "deltaBase64": "",
            "done": True,
            "error": None,
        }


async def test_http_request_errors_use_codex_codes_and_messages(server: ServerProc) -> None:
    async with http_server() as base, raw_client(server.url) as c:
        await c.initialize()
        missing = await c.call("http/request", {"method": "GET", "url": base + "/echo"})
        assert missing["error"] == {"code": -32602, "message": "missing field `requestId`"}
        relative = await c.call("http/request", {"method": "GET", "url": "notaurl", "requestId": "r"})
        assert relative["error"] == {
            "code": -32602,
            "message": "http/request url is invalid: relative URL without a base",
        }
        ftp = await c.call("http/request", {"method": "GET", "url": "ftp://x/", "requestId": "r"})
        assert ftp["error"] == {
            "code": -32602,
            "message": "http/request only supports http and https URLs, got ftp",
        }
        refused = await c.call(
            "http/request", {"method": "GET", "url": "http://127.0.0.1:9/", "requestId": "r"}
        )
        assert refused["error"] == {
            "code": -32603,
            "message": "http/request failed: error sending request for url (http://127.0.0.1:9/)",
        }
        slow = {"method": "GET", "url": base + "/slow", "requestId": "t", "timeoutMs": 300}
        timed_out = await c.call("http/request", slow)
        assert timed_out["error"] == {
            "code": -32603,
            "message": f"http/request failed: error sending request for url ({base}/slow)",
        }
