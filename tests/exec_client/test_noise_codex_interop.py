"""The sans-IO Noise channel and relay codec against the real Codex 0.169.0 binary, both directions.

A throwaway registry (asyncio HTTP on 127.0.0.1) and rendezvous (websockets on 127.0.0.1) live in the
test; the channel objects under test do all the cryptography and framing.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from exec_client.wire.noise import (
    SECURITY_PROFILE,
    HandshakeState,
    HybridPublicKey,
    HybridStaticKey,
    NoiseAuthorizationRejected,
    NoiseTransport,
    relay_prologue,
)
from exec_client.wire.relay_frames import (
    RelayData,
    RelayHandshake,
    RelayMessageFrame,
    RelayResume,
    decode_frame,
    encode_frame,
)
from tests.support.procs import stop_process

pytestmark = pytest.mark.codex

ENV_ID = "env-noise-relay-test"
REG_ID = "registration-1"
AUTH = "harness-key-authorization"
TOKEN = "registry-token"
STEP = 30.0  # every single wait in these tests

Handler = Callable[[str, dict[str, Any]], tuple[int, dict[str, Any]]]


@asynccontextmanager
async def registry(handler: Handler) -> AsyncIterator[str]:
    """A one-request-per-connection JSON HTTP server; yields its base URL."""

    async def serve_one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), STEP)
            lines = head.decode("latin-1").split("\r\n")
            path = lines[0].split(" ")[1]
            headers = {
                k.strip().lower(): v.strip()
                for k, _, v in (line.partition(":") for line in lines[1:] if line)
            }
            body = await asyncio.wait_for(reader.readexactly(int(headers.get("content-length", "0"))), STEP)
            assert headers.get("authorization") == f"Bearer {TOKEN}"
            status, answer = handler(path, json.loads(body))
            data = json.dumps(answer).encode()
            writer.write(
                f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {len(data)}\r\n"
                "connection: close\r\n\r\n".encode()
                + data
            )
            await writer.drain()
        finally:
            writer.close()

    server = await asyncio.start_server(serve_one, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        server.close()
        await asyncio.wait_for(server.wait_closed(), STEP)


@asynccontextmanager
async def rendezvous() -> AsyncIterator[tuple[int, asyncio.Queue[ServerConnection]]]:
    """A websocket endpoint handing each accepted connection to the test; yields (port, queue)."""
    connections: asyncio.Queue[ServerConnection] = asyncio.Queue()
    closed = asyncio.Event()

    async def accept(ws: ServerConnection) -> None:
        await connections.put(ws)
        await closed.wait()

    async with serve(accept, "127.0.0.1", 0, max_size=256 * 1024) as server:
        try:
            yield server.sockets[0].getsockname()[1], connections
        finally:
            closed.set()


@asynccontextmanager
async def codex(codex_bin: Path, args: list[str], env: dict[str, str], cwd: Path) -> AsyncIterator[Any]:
    proc = await asyncio.create_subprocess_exec(
        str(codex_bin), *args, env=env, cwd=cwd,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        yield proc
    finally:
        await stop_process(proc)


def base_env(codex_home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEX_")}
    env.update(CODEX_HOME=str(codex_home))
    return env


async def recv_frame(ws: ServerConnection) -> RelayMessageFrame:
    raw = await asyncio.wait_for(ws.recv(), STEP)
    assert isinstance(raw, bytes)
    return decode_frame(raw)


class Harness:
    """Our initiator on one stream of the executor's rendezvous websocket."""

    def __init__(self, ws: ServerConnection, transport: NoiseTransport, stream_id: str) -> None:
        self.ws, self.transport, self.stream_id = ws, transport, stream_id
        self.inbox: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any]) -> None:
        for record in self.transport.seal_message(json.dumps(message, separators=(",", ":")).encode()):
            body = RelayData(seq=record.seq, payload=record.ciphertext)
            await self.ws.send(encode_frame(RelayMessageFrame(self.stream_id, body)))

    async def response(self, request_id: int) -> dict[str, Any]:
        for _ in range(1000):
            for message in self.inbox:
                if message.get("id") == request_id:
                    return message
            frame = await recv_frame(self.ws)
            assert frame.stream_id == self.stream_id and isinstance(frame.body, RelayData), frame
            self.inbox += [
                json.loads(m) for m in self.transport.open_record(frame.body.seq, frame.body.payload)
            ]
        raise AssertionError("no response")


async def open_stream(ws: ServerConnection, executor_key: HybridPublicKey, authorization: str) -> Harness:
    stream_id = str(uuid.uuid4())
    hs = HandshakeState.initiator(
        HybridStaticKey.generate(), executor_key, relay_prologue(ENV_ID, REG_ID, stream_id)
    )
    await ws.send(encode_frame(RelayMessageFrame(stream_id, RelayResume())))
    await ws.send(
        encode_frame(RelayMessageFrame(stream_id, RelayHandshake(hs.write_message(authorization.encode()))))
    )
    frame = await recv_frame(ws)
    assert frame.stream_id == stream_id and isinstance(frame.body, RelayHandshake), frame
    hs.read_message(frame.body.payload)
    return Harness(ws, NoiseTransport.from_handshake(hs), stream_id)


async def test_our_harness_talks_json_rpc_to_codex_exec_server_over_noise(
    codex_bin: Path, codex_home: Path, tmp_path: Path
) -> None:
    seen: dict[str, Any] = {}

    async with rendezvous() as (port, connections):

        def handle(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
            if path.endswith("/register"):
                seen["register"] = body
                url = f"ws://127.0.0.1:{port}/relay?role=environment"
                return 200, {"environment_id": ENV_ID, "url": url, "security_profile": SECURITY_PROFILE,
                             "executor_registration_id": REG_ID}  # fmt: skip
            seen.setdefault("validate", []).append(body)
            return (200, {"valid": True}) if body["harness_key_authorization"] == AUTH else (401, {})

        async with registry(handle) as registry_url:
            env = base_env(codex_home) | {"CODEX_API_KEY": TOKEN}
            args = ["exec-server", "--remote", registry_url, "--environment-id", ENV_ID]
            async with codex(codex_bin, args, env, tmp_path):
                ws = await asyncio.wait_for(connections.get(), STEP)
                executor_key = HybridPublicKey.from_json(seen["register"]["executor_public_key"])
                harness = await open_stream(ws, executor_key, AUTH)

                await harness.send(
                    {"id": 1, "method": "initialize", "params": {"clientName": "pycodex-test"}}
                )
                init = await harness.response(1)
                assert init["result"]["environmentInfo"]["executorVersion"] == "0.169.0"
                await harness.send({"method": "initialized", "params": {}})

                # 150 KiB each way: several records per message in both directions.
                blob = os.urandom(150 * 1024)
                target = tmp_path / "big.bin"
                data = base64.b64encode(blob).decode()
                write = {"path": target.as_uri(), "dataBase64": data, "sandbox": None}
                await harness.send({"id": 2, "method": "fs/writeFile", "params": write})
                assert (await harness.response(2)) == {"id": 2, "result": {}}
                assert target.read_bytes() == blob
                assert harness.transport.next_send_seq >= 4
                await harness.send(
                    {"id": 3, "method": "fs/readFile", "params": {"path": target.as_uri(), "sandbox": None}}
                )
                assert (await harness.response(3))["result"]["dataBase64"] == data
                assert harness.transport.next_receive_seq >= 5

                with pytest.raises(NoiseAuthorizationRejected):
                    await open_stream(ws, executor_key, "not-the-authorization")
    assert [v["harness_key_authorization"] for v in seen["validate"]] == [AUTH, "not-the-authorization"]


async def test_codex_app_server_talks_to_our_executor_over_noise(
    codex_bin: Path, codex_home: Path, tmp_path: Path
) -> None:
    executor = HybridStaticKey.generate()
    seen: dict[str, Any] = {}
    async with rendezvous() as (port, connections):

        def handle(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
            assert path == f"/cloud/environment/{ENV_ID}/connect"
            seen["connect"] = body
            return 200, {
                "environment_id": ENV_ID, "url": f"ws://127.0.0.1:{port}/relay?role=harness",
                "security_profile": SECURITY_PROFILE, "executor_registration_id": REG_ID,
                "executor_public_key": executor.public_key.to_json(), "harness_key_authorization": AUTH,
            }  # fmt: skip

        async with registry(handle) as registry_url:
            env = base_env(codex_home) | {
                "CODEX_API_KEY": "model-key",
                "CODEX_EXEC_SERVER_NOISE_REGISTRY_URL": registry_url,
                "CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID": ENV_ID,
                "CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN": TOKEN,
            }
            workspace = tmp_path / "ws"
            workspace.mkdir()
            async with codex(codex_bin, ["app-server"], env, tmp_path) as proc:
                init = {"clientInfo": {"name": "pycodex-test", "version": "0"}, "capabilities": {}}
                for message in (
                    {"id": 1, "method": "initialize", "params": init},
                    {"method": "initialized"},
                    {"id": 2, "method": "thread/start", "params": {"cwd": str(workspace)}},
                ):
                    proc.stdin.write(json.dumps(message).encode() + b"\n")
                await asyncio.wait_for(proc.stdin.drain(), STEP)

                ws = await asyncio.wait_for(connections.get(), STEP)
                resume = await recv_frame(ws)
                assert resume.body == RelayResume()
                hello = await recv_frame(ws)
                assert hello.stream_id == resume.stream_id and isinstance(hello.body, RelayHandshake)
                hs = HandshakeState.responder(executor, relay_prologue(ENV_ID, REG_ID, resume.stream_id))
                assert hs.read_message(hello.body.payload) == AUTH.encode()
                assert hs.remote_static == HybridPublicKey.from_json(seen["connect"]["harness_public_key"])
                await ws.send(
                    encode_frame(RelayMessageFrame(resume.stream_id, RelayHandshake(hs.write_message())))
                )

                transport = NoiseTransport.from_handshake(hs)
                data = await recv_frame(ws)
                assert isinstance(data.body, RelayData) and data.body.seq == 0
                [request] = transport.open_record(data.body.seq, data.body.payload)
                assert json.loads(request) == {
                    "id": 1, "method": "initialize",
                    "params": {"clientName": "codex-environment", "resumeSessionId": None},
                }  # fmt: skip
