"""Byte-level pins: our registry requests and relay frames have the shapes Codex 0.169.0 puts on the wire.

A recording HTTP front (in-process, real sockets) sits before the development registry and keeps every
request. Register/validate are compared live with the Codex executor's; sizes come from the captured
traffic in the reference notes (register 1792 bytes, connect 1751, validate 1851 with the 25-byte
authorization ``harness-key-authorization``; Resume 42 bytes, message 2 3424, Reset 70).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from exec_client.remote import NoiseRemoteConfig, RemoteEnvironmentConnector, new_http_client
from exec_server.remote import RegistryClient, RemoteExecutor, connection_session_factory
from exec_server.session import Limits, SessionRegistry
from relay.http import HttpRequest, HttpResponse, start_http_server
from relay.server import RunningRelay
from tests.support.remote import ENV_ID, STEP, TOKEN, codex_exec_server, fast_backoff, running_relay
from tests.support.tools import require_codex

# The captured validate body carried these two strings; ours carry the dev registry's own.
CODEX_VALIDATE_VARIABLE_LEN = len("harness-key-authorization") + len("registration-1")


@asynccontextmanager
async def recording_front(relay: RunningRelay) -> AsyncIterator[tuple[str, list[HttpRequest]]]:
    seen: list[HttpRequest] = []

    async def handle(request: HttpRequest) -> HttpResponse:
        seen.append(request)
        return await relay.registry.handle(request)

    server = await start_http_server(handle, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", seen
    finally:
        server.close()
        await asyncio.wait_for(server.wait_closed(), STEP)


def by_action(seen: list[HttpRequest], action: str) -> HttpRequest:
    [request] = [r for r in seen if r.path.endswith(f"/{action}")]
    return request


def key_order(body: bytes) -> list[object]:
    value = json.loads(body)
    return [(k, list(v) if isinstance(v, dict) else None) for k, v in value.items()]


async def run_our_stack(front_url: str) -> None:
    """Our executor registers through ``front_url``; our harness connects and runs initialize."""
    sessions = SessionRegistry(Limits())
    async with new_http_client() as http:
        executor = RemoteExecutor(
            RegistryClient(http, front_url, ENV_ID, TOKEN),
            connection_session_factory(sessions),
            backoff=fast_backoff(),
        )
        await asyncio.wait_for(executor.register(), STEP)
        task = asyncio.create_task(executor.serve_forever())
        connector = RemoteEnvironmentConnector(
            NoiseRemoteConfig(front_url, ENV_ID, TOKEN), backoff=fast_backoff()
        )
        try:
            await asyncio.wait_for(executor.connected.wait(), STEP)
            client = await asyncio.wait_for(connector.open_client(), STEP)
            await client.close()
        finally:
            await connector.aclose()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await asyncio.wait_for(sessions.shutdown(), STEP)


async def test_our_registry_requests_have_codex_bodies_and_headers() -> None:
    async with running_relay() as relay, recording_front(relay) as (front_url, seen):
        await run_our_stack(front_url)
    register, connect, validate = (by_action(seen, a) for a in ("register", "connect", "validate"))
    assert len(register.body) == 1792
    assert len(connect.body) == 1751
    body = json.loads(validate.body)
    variable = len(body["harness_key_authorization"]) + len(body["executor_registration_id"])
    assert len(validate.body) == 1851 - CODEX_VALIDATE_VARIABLE_LEN + variable
    suite_keys = ["suite", "x25519_public_key", "mlkem768_public_key"]
    assert key_order(register.body) == [("security_profile", None), ("executor_public_key", suite_keys)]
    assert key_order(connect.body) == [("harness_public_key", suite_keys)]
    assert key_order(validate.body) == [
        ("executor_registration_id", None),
        ("harness_public_key", suite_keys),
        ("harness_key_authorization", None),
    ]
    for request in (register, connect, validate):
        assert request.method == "POST"
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
        assert request.headers["content-type"] == "application/json"
        assert request.headers["accept"] == "*/*"
        assert "user-agent" not in request.headers
    assert len(validate.headers["x-codex-noise-stream-id"]) == 36  # a UUID, as Codex's harness mints


@pytest.mark.codex
async def test_our_executor_registers_and_validates_exactly_like_codex(tmp_path: Path) -> None:
    codex_bin = require_codex()
    async with running_relay() as relay, recording_front(relay) as (front_url, ours):
        await run_our_stack(front_url)
    async with running_relay() as relay, recording_front(relay) as (front_url, theirs):
        relay.registry_url = front_url  # Codex registers through the recording front
        async with codex_exec_server(codex_bin, relay, tmp_path / "home"):
            connector = RemoteEnvironmentConnector(
                NoiseRemoteConfig(front_url, ENV_ID, TOKEN), backoff=fast_backoff()
            )
            try:
                client = await asyncio.wait_for(connector.open_client(), STEP)
                await client.close()
            finally:
                await connector.aclose()
    for action in ("register", "validate"):
        mine, reference = by_action(ours, action), by_action(theirs, action)
        assert key_order(mine.body) == key_order(reference.body), action
        assert len(mine.body) == len(reference.body), action
        for header in ("content-type", "accept", "authorization"):
            assert mine.headers[header] == reference.headers[header], (action, header)
        assert ("user-agent" in mine.headers) == ("user-agent" in reference.headers)
    assert by_action(ours, "validate").headers.keys() >= {"x-codex-noise-stream-id"}


async def test_our_frames_have_codex_sizes(tmp_path: Path) -> None:
    capture = tmp_path / "frames.jsonl"
    async with running_relay(capture=capture) as relay, recording_front(relay) as (front_url, seen):
        await run_our_stack(front_url)
    authorization = json.loads(by_action(seen, "validate").body)["harness_key_authorization"]
    frames = [json.loads(line) for line in capture.read_text().splitlines() if '"frame"' in line]
    sizes = [(f["direction"], f["body"], len(base64.b64decode(f["frame"]))) for f in frames]
    # 46 bytes of frame around a Noise message for a 36-byte stream id; message 1 is 3568 + payload.
    assert sizes[:3] == [
        ("harness->environment", "resume", 42),
        ("harness->environment", "handshake", 3568 + len(authorization) + 46),
        ("environment->harness", "handshake", 3424 + 46),
    ]
    assert {direction for direction, body, _ in sizes if body == "data"} == {
        "harness->environment",
        "environment->harness",
    }
