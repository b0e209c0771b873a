"""Bad input on the app-server's wire, stdio and WebSocket alike: each gets Codex 0.169.0's answer.

Complements tests/app_server/test_app_server_errors.py (the stdio table of malformed lines, handshake and id
rows): this table adds what that one lacks (non-standard JSON, the `jsonrpc` member, a second
`initialize`, several messages in one frame) and runs on both transports, plus the WebSocket-only
cases (binary frames, empty frames, oversize messages). Every answer was read off the reference binary:
either an exact reply, or no reply and exactly one stderr line naming the problem. After every case
a follow-up request proves the connection still serves. `test_codex_agrees` replays the table on Codex.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.support import AppServerClient, SchemaPair, ValidatingClient, WsAppServerClient, write_codex_config
from tests.support.errors import as_codex

DEAD_MODEL_URL = "http://127.0.0.1:9/v1"
DESERIALIZE = "Failed to deserialize JSONRPCMessage"
BINARY = "dropping unsupported binary websocket message"
NO_CALLBACK = "could not find callback"
LIST_OK: dict[str, Any] = {"data": [], "nextCursor": None}
INIT_PARAMS = {"clientInfo": {"name": "bad_wire", "version": "1"}}
BOTH = ("stdio", "ws")


def req(rid: Any, method: str = "thread/loaded/list", params: Any = None, **extra: Any) -> str:
    return json.dumps({**extra, "id": rid, "method": method, "params": {} if params is None else params})


@dataclass(frozen=True)
class Case:
    """One input; `reply` is the exact result (`ok`) or error object, or None for no reply at all, in
    which case `stderr` is the marker of the one stderr line expected (None: no line at all)."""

    name: str
    data: str | bytes  # str: a line (stdio) / text frame (ws); bytes: raw stdio bytes / a binary frame
    reply_id: Any = None
    reply: dict[str, Any] | None = None
    ok: bool = False
    stderr: str | None = None
    transports: Sequence[str] = BOTH
    fresh: bool = False
    codex_silent: bool = False  # Codex drops it without a log line (see the case)


CASES = [
    Case("jsonrpc member of the wrong type is ignored", req(101, jsonrpc=2), 101, LIST_OK, ok=True),
    Case("jsonrpc 1.0 is ignored", req(102, jsonrpc="1.0"), 102, LIST_OK, ok=True),
    Case("NaN literal", req(103, params={"limit": "NaN"}).replace('"NaN"', "NaN"), stderr=DESERIALIZE),
    Case("Infinity literal", req(104, params={"limit": "I"}).replace('"I"', "-Infinity"), stderr=DESERIALIZE),
    # Codex reads a request whose id is no string or i64 as a notification and drops it silently; we
    # drop it too but say why (a float id beyond range could not even be echoed back).
    Case("id beyond the float range", '{"id":1e400,"method":"thread/loaded/list","params":{}}',
         stderr=DESERIALIZE, codex_silent=True),
    Case("UTF-8 byte-order mark", "\ufeff" + req(105), stderr=DESERIALIZE),
    Case("two objects in one message", req(106) + req(107), stderr=DESERIALIZE),
    Case("trailing garbage after the object", req(108) + " x", stderr=DESERIALIZE),
    Case("empty batch", "[]", stderr=DESERIALIZE),
    Case("whitespace only", "   ", stderr=DESERIALIZE),
    Case("second initialize", req(109, "initialize", INIT_PARAMS), 109,
         {"code": -32600, "data": {"appErrorCode": "already_initialized"}, "message": "Already initialized"}),
    Case("response carrying both result and error", '{"id":110,"result":{},"error":{"code":1,"message":"x"}}',
         stderr=NO_CALLBACK),
    Case("initialized notification again", '{"method":"initialized"}'),
    # -- WebSocket only ---------------------------------------------------------------------------------
    Case("binary frame holding a valid request", req(111).encode(), stderr=BINARY, transports=("ws",)),
    Case("binary frame of invalid UTF-8", b"\xff\xfe\x00", stderr=BINARY, transports=("ws",)),
    Case("empty text frame", "", stderr=DESERIALIZE, transports=("ws",)),
    Case("two requests joined by LF in one text frame", req(112) + "\n" + req(113), stderr=DESERIALIZE,
         transports=("ws",)),
    Case("invalid JSON in a text frame", "{not json", stderr=DESERIALIZE, transports=("ws",)),
    Case("batch in a text frame", "[" + req(114) + "]", stderr=DESERIALIZE, transports=("ws",)),
    Case("unknown notification in a text frame", '{"method":"bogus/notify","params":{}}', transports=("ws",)),
    Case("request before initialize on a new connection", req(115, "thread/start"), 115,
         {"code": -32600, "data": {"appErrorCode": "not_initialized"},
          "message": "Not initialized"}, transports=("ws",), fresh=True),
]

PARAMS = [pytest.param(t, c, id=f"{t}-{c.name}") for c in CASES for t in c.transports]


@dataclass
class Wire:
    transport: str
    ready: ValidatingClient
    owner: AppServerClient | WsAppServerClient
    fresh_factory: Any = None

    @property
    def stderr(self) -> bytearray:
        assert self.owner.process is not None
        return self.owner.process.stderr


async def _start(transport: str, root: Path, schemas: SchemaPair | None, argv: list[str] | None) -> Wire:
    home, cwd = root / f"{transport}_home", root / f"{transport}_cwd"
    write_codex_config(home, base_url=DEAD_MODEL_URL)
    cwd.mkdir()
    if transport == "stdio":
        stdio = await AppServerClient.spawn(schemas, codex_home=home, cwd=cwd, argv=argv, label="stdio")
        await stdio.initialize()
        return Wire(transport, stdio, stdio)
    ws = await WsAppServerClient.spawn(schemas, codex_home=home, cwd=cwd, argv=argv)
    await ws.initialize()
    url = ws.process.argv[-1] if ws.process is not None else ""

    async def fresh() -> WsAppServerClient:
        return await WsAppServerClient.connect(url, schemas, label="ws-fresh")

    return Wire(transport, ws, ws, fresh)


async def _stderr_lines_since(wire: Wire, mark: int, marker: str | None) -> list[str]:
    """The stderr lines after `mark`, once one holds `marker` (bounded wait; None: a short settle)."""
    for _ in range(100 if marker else 5):
        lines = bytes(wire.stderr[mark:]).decode("utf-8", "replace").splitlines()
        if marker is not None and any(marker in line for line in lines):
            break
        await asyncio.sleep(0.02)
    return bytes(wire.stderr[mark:]).decode("utf-8", "replace").splitlines()


def _same(error: dict[str, Any]) -> dict[str, Any]:
    return error


async def check_case(wire: Wire, case: Case, *, strict_stderr: bool = True, codex: bool = False) -> None:
    """``codex``: the server is Codex 0.169, whose errors carry no pycodex code (see ``as_codex``)."""
    expect = as_codex if codex else _same
    client = wire.ready
    if case.fresh:
        client = await wire.fresh_factory()
    try:
        before = len(client.arrivals)
        mark = len(wire.stderr)
        if wire.transport == "stdio":
            data = case.data.encode() if isinstance(case.data, str) else case.data
            await client.send_raw(data + b"\n")
        else:
            await client.send_raw(case.data)
        reply = await client.wait_response(case.reply_id, timeout=10.0) if case.reply is not None else None
        follow = await client.request("thread/loaded/list", {}, timeout=10.0)
        if case.fresh:
            assert follow.get("error") == expect({"code": -32600, "data": {"appErrorCode": "not_initialized"},
                                                  "message": "Not initialized"}), follow
        else:
            assert follow.get("result") is not None, follow
        responses = [a for a in client.arrivals[before:] if "method" not in json.loads(a.raw)]
        assert len(responses) == (2 if case.reply is not None else 1), [a.raw[:200] for a in responses]
        if reply is not None:
            key = "result" if case.ok else "error"
            assert reply == {"id": case.reply_id, key: case.reply if case.ok else expect(case.reply)}, reply
            return
        marker = None if case.codex_silent and not strict_stderr else case.stderr
        lines = await _stderr_lines_since(wire, mark, marker)
        if case.stderr is None:
            assert not strict_stderr or lines == [], lines
        elif strict_stderr:
            assert len(lines) == 1 and case.stderr in lines[0], lines
        else:
            want = 0 if case.codex_silent else 1
            assert sum(case.stderr in line for line in lines) == want, (case.name, lines)
    finally:
        if case.fresh:
            await client.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def wires(codex_schemas: SchemaPair, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, Wire]]:
    root = tmp_path_factory.mktemp("bad_wire")
    started: dict[str, Wire] = {}
    try:
        for transport in BOTH:
            started[transport] = await _start(transport, root, codex_schemas, None)
        yield started
    finally:
        for wire in started.values():
            await asyncio.wait_for(wire.owner.close(), 20.0)


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(("transport", "case"), PARAMS)
async def test_bad_input_gets_codex_answer_and_the_server_keeps_serving(
    wires: dict[str, Wire], transport: str, case: Case
) -> None:
    await check_case(wires[transport], case)


@pytest.mark.asyncio(loop_scope="module")
async def test_an_oversize_ws_message_closes_only_that_connection(wires: dict[str, Wire]) -> None:
    wire = wires["ws"]
    url = wire.owner.process.argv[-1] if wire.owner.process is not None else ""
    big = await connect(url, max_size=None, ping_interval=None, open_timeout=10)
    try:  # Codex drops the connection (its limit is 16 MiB too); websockets closes it with 1009
        with pytest.raises(ConnectionClosed):
            await big.send("x" * (16 * 1024 * 1024 + 1))
            await asyncio.wait_for(big.recv(), 20.0)
    finally:
        if not big.transport.is_closing():
            big.transport.abort()
    assert await wire.ready.call("thread/loaded/list", {}) == LIST_OK


def test_the_table_has_at_least_15_cases_with_unique_names() -> None:
    assert len({c.name for c in CASES}) == len(CASES) >= 15


@pytest.mark.codex
@pytest.mark.asyncio(loop_scope="module")
async def test_codex_agrees(codex_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The same table against the reference binary (its log lines carry more noise: count markers only)."""
    root = tmp_path_factory.mktemp("bad_wire_codex")
    argv = [str(codex_bin), "app-server"]
    for transport in BOTH:
        wire = await _start(transport, root, None, argv)
        try:
            for case in CASES:
                if transport in case.transports:
                    await check_case(wire, case, strict_stderr=False, codex=True)
        finally:
            await asyncio.wait_for(wire.owner.close(), 20.0)
