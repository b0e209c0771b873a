"""Our harness stream against a hand-driven executor on our relay: bad executor behaviour ends the stream.

The test plays the executor: it registers a key, takes its rendezvous websocket, answers the handshake
itself and then misbehaves (tampered record, data before message 2, a Reset).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace

import pytest
from websockets.asyncio.client import ClientConnection, connect

from exec_client.remote import (
    RemoteConnectError,
    RemoteStreamReset,
    data_frames,
    new_http_client,
    post_json,
)
from exec_client.wire.noise import (
    SECURITY_PROFILE,
    HandshakeState,
    HybridStaticKey,
    NoiseTransport,
    relay_prologue,
)
from exec_client.wire.relay_frames import (
    RELAY_RESET_REASON_PROTOCOL_ERROR,
    RelayData,
    RelayHandshake,
    RelayMessageFrame,
    RelayReset,
    RelayResume,
    decode_frame,
    encode_frame,
)
from relay.server import RunningRelay
from tests.support.remote import ENV_ID, STEP, TOKEN, compact, harness_connector, running_relay


class FakeExecutor:
    def __init__(self, ws: ClientConnection, key: HybridStaticKey, registration_id: str) -> None:
        self.ws, self.key, self.registration_id = ws, key, registration_id

    async def recv(self) -> RelayMessageFrame:
        raw = await asyncio.wait_for(self.ws.recv(), STEP)
        assert isinstance(raw, bytes)
        return decode_frame(raw)

    async def send(self, stream_id: str, body: RelayData | RelayHandshake | RelayReset) -> None:
        await self.ws.send(encode_frame(RelayMessageFrame(stream_id, body)))

    async def accept(self) -> tuple[str, NoiseTransport]:
        """Answer the next harness handshake; returns its stream id and our transport."""
        resume = await self.recv()
        assert isinstance(resume.body, RelayResume)
        hello = await self.recv()
        assert isinstance(hello.body, RelayHandshake)
        prologue = relay_prologue(ENV_ID, self.registration_id, resume.stream_id)
        handshake = HandshakeState.responder(self.key, prologue)
        handshake.read_message(hello.body.payload)
        await self.send(resume.stream_id, RelayHandshake(handshake.write_message()))
        return resume.stream_id, NoiseTransport.from_handshake(handshake)


@asynccontextmanager
async def fake_executor(relay: RunningRelay) -> AsyncIterator[FakeExecutor]:
    key = HybridStaticKey.generate()
    body = {"security_profile": SECURITY_PROFILE, "executor_public_key": key.public_key.to_json()}
    async with new_http_client() as http:
        url = f"{relay.registry_url}/cloud/environment/{ENV_ID}/register"
        registration = await post_json(http, url, TOKEN, body)
    async with connect(registration["url"], open_timeout=STEP) as ws:
        for _ in range(int(STEP / 0.01)):
            if relay.rendezvous.executor_connected(ENV_ID):
                break
            await asyncio.sleep(0.01)
        yield FakeExecutor(ws, key, registration["executor_registration_id"])


async def test_messages_flow_both_ways_and_a_tampered_record_ends_the_stream_with_a_reset() -> None:
    async with (
        running_relay() as relay,
        fake_executor(relay) as executor,
        harness_connector(relay) as connector,
    ):
        opening = asyncio.create_task(connector.open_stream())
        stream_id, transport = await executor.accept()
        stream = await asyncio.wait_for(opening, STEP)
        await stream.send(compact({"id": 1, "method": "environment/status"}))
        data = await executor.recv()
        assert isinstance(data.body, RelayData)
        assert transport.open_record(data.body.seq, data.body.payload) == [
            b'{"id":1,"method":"environment/status"}'
        ]

        [good] = data_frames(stream_id, transport.seal_message(b'{"id":1,"result":{}}'))
        [bad] = data_frames(stream_id, transport.seal_message(b'{"id":2,"result":{}}'))
        await executor.ws.send(good)
        assert await asyncio.wait_for(stream.recv(), STEP) == b'{"id":1,"result":{}}'
        parsed = decode_frame(bad)
        assert isinstance(parsed.body, RelayData)
        tampered = replace(
            parsed.body, payload=parsed.body.payload[:-1] + bytes([parsed.body.payload[-1] ^ 1])
        )
        await executor.send(stream_id, tampered)
        assert await asyncio.wait_for(stream.recv(), STEP) is None
        assert stream.end_reason is not None and "bad record" in stream.end_reason
        assert await executor.recv() == RelayMessageFrame(
            stream_id, RelayReset(RELAY_RESET_REASON_PROTOCOL_ERROR)
        )


async def test_data_before_message_2_fails_the_handshake() -> None:
    async with (
        running_relay() as relay,
        fake_executor(relay) as executor,
        harness_connector(relay) as connector,
    ):
        opening = asyncio.create_task(connector.open_stream())
        resume = await executor.recv()
        await executor.recv()  # message 1
        await executor.send(resume.stream_id, RelayData(seq=0, payload=b"too early"))
        with pytest.raises(RemoteConnectError, match="before handshake message 2"):
            await asyncio.wait_for(opening, STEP)


async def test_a_reset_during_the_handshake_names_its_reason_and_one_after_it_ends_recv() -> None:
    async with (
        running_relay() as relay,
        fake_executor(relay) as executor,
        harness_connector(relay) as connector,
    ):
        opening = asyncio.create_task(connector.open_stream())
        resume = await executor.recv()
        await executor.recv()
        await executor.send(resume.stream_id, RelayReset("registry_unavailable"))
        with pytest.raises(RemoteStreamReset) as reset:
            await asyncio.wait_for(opening, STEP)
        assert reset.value.reason == "registry_unavailable"

        opening = asyncio.create_task(connector.open_stream())
        stream_id, _transport = await executor.accept()
        stream = await asyncio.wait_for(opening, STEP)
        await executor.send(stream_id, RelayReset(RELAY_RESET_REASON_PROTOCOL_ERROR))
        assert await asyncio.wait_for(stream.recv(), STEP) is None
        assert stream.end_reason == f"reset by peer: {RELAY_RESET_REASON_PROTOCOL_ERROR}"
