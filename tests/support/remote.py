"""Shared helpers (no tests) for the relay and remote-environment tests: in-process relay, executor, harness.

Everything runs on real sockets on 127.0.0.1: the registry over HTTP, the rendezvous over websockets,
and our executor serving the real exec-server ``Connection`` behind it.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from exec_client.remote import (
    Backoff,
    ConnectBundle,
    NoiseRemoteConfig,
    RemoteEnvironmentConnector,
    new_http_client,
    request_connect,
)
from exec_client.wire.noise import HandshakeState, HybridStaticKey, NoiseTransport, relay_prologue
from exec_client.wire.relay_frames import (
    RelayData,
    RelayHandshake,
    RelayMessageFrame,
    RelayResume,
    decode_frame,
    encode_frame,
)
from exec_server.remote import RegistryClient, RemoteExecutor, connection_session_factory
from exec_server.session import Limits, SessionRegistry
from relay.registry import AuthorizationPolicy
from relay.server import RunningRelay, start_relay
from tests.support.appserver_process import write_codex_config
from tests.support.procs import spawn, stop_process

TOKEN = "registry-token"
MARKER_VAR = "CODEX_EXECUTOR_VERSION_SKEW_MARKER"
MARKER = "executor-version-skew-ok"
ENV_ID = "env-noise-relay-test"
STEP = 30.0  # bound of every single wait
ROOT = Path(__file__).resolve().parents[2]


def fast_backoff() -> Backoff:
    return Backoff(initial=0.05, maximum=0.3, jitter=0.1)


@asynccontextmanager
async def running_relay(
    capture: Path | None = None, policy: AuthorizationPolicy | None = None
) -> AsyncIterator[RunningRelay]:
    relay = await start_relay([TOKEN], capture=capture, policy=policy)
    try:
        yield relay
    finally:
        await relay.close()


@asynccontextmanager
async def running_executor(
    relay: RunningRelay, *, env_id: str = ENV_ID, token: str = TOKEN
) -> AsyncIterator[tuple[RemoteExecutor, SessionRegistry]]:
    """Our executor registered with ``relay`` and connected to its rendezvous."""
    sessions = SessionRegistry(Limits(detached_ttl_s=30))
    async with new_http_client() as http:
        registry = RegistryClient(http, relay.registry_url, env_id, token)
        executor = RemoteExecutor(registry, connection_session_factory(sessions), backoff=fast_backoff())
        await asyncio.wait_for(executor.register(), STEP)
        task = asyncio.create_task(executor.serve_forever())
        try:
            await asyncio.wait_for(executor.connected.wait(), STEP)
            yield executor, sessions
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(task, STEP)
            await asyncio.wait_for(sessions.shutdown(), STEP)


@asynccontextmanager
async def harness_connector(
    relay: RunningRelay, env_id: str = ENV_ID
) -> AsyncIterator[RemoteEnvironmentConnector]:
    config = NoiseRemoteConfig(relay.registry_url, env_id, TOKEN)
    connector = RemoteEnvironmentConnector(config, backoff=fast_backoff(), handshake_timeout=STEP)
    try:
        yield connector
    finally:
        await connector.aclose()


class RawHarness:
    """A hand-driven harness stream, for feeding the executor frames a real harness never sends."""

    def __init__(self, ws: ClientConnection, stream_id: str, transport: NoiseTransport) -> None:
        self.ws, self.stream_id, self.transport = ws, stream_id, transport

    async def recv_frame(self) -> RelayMessageFrame:
        raw = await asyncio.wait_for(self.ws.recv(), STEP)
        assert isinstance(raw, bytes)
        return decode_frame(raw)


async def fetch_bundle(relay: RunningRelay, key: HybridStaticKey, env_id: str = ENV_ID) -> ConnectBundle:
    async with new_http_client() as http:
        return await request_connect(http, relay.registry_url, env_id, TOKEN, key.public_key)


@asynccontextmanager
async def raw_harness(relay: RunningRelay, env_id: str = ENV_ID) -> AsyncIterator[RawHarness]:
    key = HybridStaticKey.generate()
    bundle = await fetch_bundle(relay, key, env_id)
    stream_id = str(uuid.uuid4())
    hs = HandshakeState.initiator(
        key, bundle.executor_public_key, relay_prologue(env_id, bundle.executor_registration_id, stream_id)
    )
    async with connect(bundle.url, max_size=None, open_timeout=STEP) as ws:
        await ws.send(encode_frame(RelayMessageFrame(stream_id, RelayResume())))
        message_1 = hs.write_message(bundle.harness_key_authorization.encode())
        await ws.send(encode_frame(RelayMessageFrame(stream_id, RelayHandshake(message_1))))
        raw = await asyncio.wait_for(ws.recv(), STEP)
        assert isinstance(raw, bytes)
        reply = decode_frame(raw)
        assert isinstance(reply.body, RelayHandshake), reply
        hs.read_message(reply.body.payload)
        yield RawHarness(ws, stream_id, NoiseTransport.from_handshake(hs))


def compact(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def codex_env(codex_home: Path, **extra: str) -> dict[str, str]:
    """This process's environment without CODEX_* variables, with a private CODEX_HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEX_")}
    return env | {"CODEX_HOME": str(codex_home)} | extra


@asynccontextmanager
async def codex_exec_server(codex_bin: Path, relay: RunningRelay, home: Path) -> AsyncIterator[None]:
    """The real ``codex exec-server --remote`` registered with ``relay`` and on its rendezvous."""
    home.mkdir(parents=True, exist_ok=True)
    env = codex_env(home, CODEX_API_KEY=TOKEN, **{MARKER_VAR: MARKER})
    proc = await spawn(
        str(codex_bin), "exec-server", "--remote", relay.registry_url, "--environment-id", ENV_ID,
        env=env, cwd=home, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(int(STEP / 0.05)):
            if relay.rendezvous.executor_connected(ENV_ID) or proc.returncode is not None:
                break
            await asyncio.sleep(0.05)
        assert relay.rendezvous.executor_connected(ENV_ID), "Codex exec-server never reached our rendezvous"
        yield
    finally:
        await stop_process(proc)


@asynccontextmanager
async def process(
    argv: list[str], env: dict[str, str], cwd: Path, *, pipes: bool = False, stderr: Path | None = None
) -> AsyncIterator[Any]:
    """A subprocess for one test step; ``stderr`` names a file to keep its stderr in (else discarded)."""
    with contextlib.ExitStack() as files:
        err: Any = files.enter_context(stderr.open("wb")) if stderr is not None else asyncio.subprocess.DEVNULL
        proc = await spawn(
            *argv, env=env, cwd=cwd,
            stdin=asyncio.subprocess.PIPE if pipes else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE if pipes else asyncio.subprocess.DEVNULL,
            stderr=err,
        )  # fmt: skip
        try:
            yield proc
        finally:
            await stop_process(proc)


def assert_relay_data_is_encrypted(capture: Path, markers: tuple[str, ...]) -> None:
    """As Codex's test-support helper: every captured frame decodes; no data payload holds a marker."""
    lines = [json.loads(line) for line in capture.read_text().splitlines()]
    frames = [decode_frame(base64.b64decode(line["frame"])) for line in lines if "frame" in line]
    payloads = [f.body.payload for f in frames if isinstance(f.body, RelayData)]
    assert len(payloads) >= 4
    for payload in payloads:
        text = payload.decode("utf-8", errors="replace")
        assert not [m for m in markers if m in text]


async def app_server_turn(
    app_server_argv: list[str],
    relay: RunningRelay,
    tmp_path: Path,
    before_turn: Callable[[], Awaitable[None]] | None = None,
    sandbox_mode: str = "danger-full-access",
    extra_env: dict[str, str] | None = None,
    stderr: Path | None = None,
) -> Path:
    """Run one app-server turn (Codex's or ours) whose model calls ``exec_command``; return the workspace.

    The app-server reaches its executor through ``relay`` via the ``CODEX_EXEC_SERVER_NOISE_*`` variables.
    """
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    arguments = {
        "cmd": f"printf '%s' \"${MARKER_VAR}\" > skew-output.txt",
        "workdir": str(workspace),
        "yield_time_ms": 5000,
    }
    call = {
        "type": "function_call",
        "name": "exec_command",
        "call_id": "skew-call",
        "arguments": json.dumps(arguments),
    }
    script = tmp_path / "model.json"
    script.write_text(json.dumps([{"output": [call]}, {"output": [{"type": "message", "text": "done"}]}]))
    model_argv = [sys.executable, str(ROOT / "fixtures" / "fake_responses_server.py"), str(script)]
    async with process(model_argv, dict(os.environ), tmp_path, pipes=True) as model:
        port = int(await asyncio.wait_for(model.stdout.readline(), STEP))
        home = tmp_path / "app_home"
        write_codex_config(home, base_url=f"http://127.0.0.1:{port}/v1", sandbox_mode=sandbox_mode)
        env = codex_env(home) | {
            "CODEX_API_KEY": "model-key",
            "CODEX_EXEC_SERVER_NOISE_REGISTRY_URL": relay.registry_url,
            "CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID": ENV_ID,
            "CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN": TOKEN,
        } | (extra_env or {})
        async with process(app_server_argv, env, tmp_path, pipes=True, stderr=stderr) as app:
            rpc = AppServerLines(app)
            await rpc.call(
                1, "initialize", {"clientInfo": {"name": "noise-skew", "version": "0"}, "capabilities": {}}
            )
            await rpc.notify("initialized")
            thread = await rpc.call(2, "thread/start", {"cwd": str(workspace)})
            if before_turn is not None:
                await before_turn()
            turn = {"threadId": thread["thread"]["id"], "input": [{"type": "text", "text": "run it"}]}
            await rpc.call(3, "turn/start", turn)
            await rpc.wait_for_notification("turn/completed")
    return workspace


class AppServerLines:
    """Just enough of the app-server's stdio JSON-RPC for one turn."""

    def __init__(self, proc: Any) -> None:
        self.proc = proc
        self.notifications: list[dict[str, Any]] = []

    async def notify(self, method: str) -> None:
        self.proc.stdin.write(json.dumps({"method": method}).encode() + b"\n")
        await self.proc.stdin.drain()

    async def call(self, request_id: int, method: str, params: dict[str, Any]) -> Any:
        self.proc.stdin.write(
            json.dumps({"id": request_id, "method": method, "params": params}).encode() + b"\n"
        )
        await self.proc.stdin.drain()
        for _ in range(10_000):
            message = await self._next()
            if message.get("id") == request_id and "method" not in message:
                assert "error" not in message, message
                return message["result"]
            self.notifications.append(message)
        raise AssertionError(f"no answer to {method}")

    async def wait_for_notification(self, method: str) -> None:
        for _ in range(10_000):
            if any(n.get("method") == method for n in self.notifications):
                return
            self.notifications.append(await self._next())
        raise AssertionError(f"no {method}")

    async def _next(self) -> dict[str, Any]:
        line = await asyncio.wait_for(self.proc.stdout.readline(), STEP)
        assert line, "app-server exited"
        parsed: dict[str, Any] = json.loads(line)
        return parsed
