"""The executor's stream multiplexer in-process: frames in, frames out, validation held by the test.

No sockets: ``send_frame`` collects what the executor would put on its websocket, and the validator
waits for the test to decide, so the states between message 1 and message 2 can be probed.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from exec_client.remote import MessageChannel
from exec_client.wire.noise import HandshakeState, HybridStaticKey, NoiseAuthorizationRejected, relay_prologue
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
from exec_server.remote import ExecutorIdentity, StreamMux, ValidationOutcome
from exec_server.remote.mux import MAX_PENDING_VALIDATIONS
from exec_server.remote.stream_state import HarnessHello

ENV, REG = "env-mux", "reg-mux"
RESET = RelayReset(RELAY_RESET_REASON_PROTOCOL_ERROR)


class Harness:
    """The initiator half of one stream, producing the frames a real harness sends."""

    def __init__(self, executor_key: HybridStaticKey) -> None:
        self.stream_id = str(uuid.uuid4())
        self.key = HybridStaticKey.generate()
        prologue = relay_prologue(ENV, REG, self.stream_id)
        self.handshake = HandshakeState.initiator(self.key, executor_key.public_key, prologue)

    def hello(self) -> list[bytes]:
        message_1 = self.handshake.write_message(b"authorization")
        return [
            encode_frame(RelayMessageFrame(self.stream_id, RelayResume())),
            encode_frame(RelayMessageFrame(self.stream_id, RelayHandshake(message_1))),
        ]


class Rig:
    def __init__(self) -> None:
        self.key = HybridStaticKey.generate()
        self.sent: list[RelayMessageFrame] = []
        self.outcomes: dict[str, asyncio.Future[ValidationOutcome]] = {}
        self.asked: list[tuple[str, HarnessHello]] = []
        self.sessions: list[MessageChannel] = []
        self.mux = StreamMux(ExecutorIdentity(self.key, ENV, REG), self._send, self._validate, self._session)

    async def _send(self, frame: bytes) -> None:
        self.sent.append(decode_frame(frame))

    async def _validate(self, stream_id: str, hello: HarnessHello) -> ValidationOutcome:
        self.asked.append((stream_id, hello))
        future = self.outcomes.setdefault(stream_id, asyncio.get_running_loop().create_future())
        return await asyncio.wait_for(future, 10)

    async def _session(self, channel: MessageChannel) -> None:
        self.sessions.append(channel)
        await asyncio.wait_for(channel.recv(), 10)

    def decide(self, stream_id: str, outcome: ValidationOutcome) -> None:
        self.outcomes.setdefault(stream_id, asyncio.get_running_loop().create_future()).set_result(outcome)

    async def feed(self, frames: list[bytes]) -> None:
        for frame in frames:
            await self.mux.on_message(frame)

    async def settle(self) -> None:
        for _ in range(20):
            await asyncio.sleep(0)


async def test_message_2_waits_for_the_registry_and_carries_the_harness_key_to_it() -> None:
    rig = Rig()
    harness = Harness(rig.key)
    await rig.feed(harness.hello())
    await rig.settle()
    assert rig.sent == []  # nothing before the registry answers
    [(stream_id, hello)] = rig.asked
    assert (stream_id, hello.authorization, hello.harness_key) == (
        harness.stream_id,
        "authorization",
        harness.key.public_key,
    )
    rig.decide(harness.stream_id, ValidationOutcome.ACCEPT)
    await rig.settle()
    [reply] = rig.sent
    assert isinstance(reply.body, RelayHandshake) and len(reply.body.payload) == 3424
    harness.handshake.read_message(reply.body.payload)
    assert rig.mux.active_streams == [harness.stream_id] and len(rig.sessions) == 1
    await rig.mux.close()


async def test_a_401_becomes_the_authenticated_rejection_marker_without_a_reset() -> None:
    rig = Rig()
    harness = Harness(rig.key)
    await rig.feed(harness.hello())
    rig.decide(harness.stream_id, ValidationOutcome.REJECT)
    await rig.settle()
    [reply] = rig.sent
    assert isinstance(reply.body, RelayHandshake) and len(reply.body.payload) == 3424 + 41
    with pytest.raises(NoiseAuthorizationRejected):
        harness.handshake.read_message(reply.body.payload)
    assert rig.mux.active_streams == []


async def test_data_while_the_registry_is_validating_resets_the_stream_and_no_message_2_follows() -> None:
    rig = Rig()
    harness = Harness(rig.key)
    await rig.feed(harness.hello())
    await rig.settle()
    await rig.feed([encode_frame(RelayMessageFrame(harness.stream_id, RelayData(seq=0, payload=b"early")))])
    assert rig.sent == [RelayMessageFrame(harness.stream_id, RESET)]
    await rig.settle()
    assert rig.sent == [RelayMessageFrame(harness.stream_id, RESET)], "the validation was abandoned"


async def test_a_reset_from_the_harness_during_validation_abandons_the_stream_quietly() -> None:
    rig = Rig()
    harness = Harness(rig.key)
    await rig.feed(harness.hello())
    await rig.settle()
    await rig.feed([encode_frame(RelayMessageFrame(harness.stream_id, RelayReset("harness_disconnected")))])
    await rig.settle()
    assert rig.sent == []
    assert rig.mux.active_streams == []


async def test_more_than_32_pending_validations_are_refused_with_a_reset() -> None:
    rig = Rig()
    harnesses = [Harness(rig.key) for _ in range(MAX_PENDING_VALIDATIONS + 1)]
    for harness in harnesses:
        await rig.feed(harness.hello())
    await rig.settle()
    assert len(rig.asked) == MAX_PENDING_VALIDATIONS
    assert rig.sent == [RelayMessageFrame(harnesses[-1].stream_id, RESET)]
    await rig.mux.close()


async def test_a_malformed_message_1_is_reset_without_asking_the_registry() -> None:
    rig = Rig()
    harness = Harness(rig.key)
    resume, hello = harness.hello()
    parsed = decode_frame(hello)
    assert isinstance(parsed.body, RelayHandshake)
    broken = parsed.body.payload[:-1] + bytes([parsed.body.payload[-1] ^ 1])
    await rig.feed([resume, encode_frame(RelayMessageFrame(harness.stream_id, RelayHandshake(broken)))])
    await rig.settle()
    assert rig.asked == []
    assert rig.sent == [RelayMessageFrame(harness.stream_id, RESET)]
