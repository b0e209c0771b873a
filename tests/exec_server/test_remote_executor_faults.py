"""Executors against a hand-driven harness: every protocol violation gets the Codex treatment.

Tampered record → Reset; replayed record → ignored; a second handshake, a response to an id never
issued or a sequence gap over 64 → Reset; frames failing validation (wrong version, segmented) and a
Resume on an active stream → ignored; data for an unknown stream → Reset. The wire-level cases run against our executor and, as the reference, Codex 0.169.0's.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from exec_client.remote import data_frames
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
from tests.support.remote import (
    RawHarness,
    codex_exec_server,
    compact,
    raw_harness,
    running_executor,
    running_relay,
)
from tests.support.tools import require_codex

RESET = RelayReset(RELAY_RESET_REASON_PROTOCOL_ERROR)
INITIALIZE = {"id": 1, "method": "initialize", "params": {"clientName": "faults", "resumeSessionId": None}}


@pytest.fixture(params=["ours", pytest.param("codex", marks=pytest.mark.codex)])
async def relay(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[RunningRelay]:
    """Our relay with an executor on it: ours, or the reference Codex binary."""
    async with running_relay() as running:
        if request.param == "ours":
            async with running_executor(running):
                yield running
        else:
            codex_bin = require_codex()
            async with codex_exec_server(codex_bin, running, tmp_path / "codex_home"):
                yield running


async def send(harness: RawHarness, message: dict[str, Any]) -> list[bytes]:
    frames = data_frames(harness.stream_id, harness.transport.seal_message(compact(message)))
    for frame in frames:
        await harness.ws.send(frame)
    return frames


async def next_message(harness: RawHarness) -> dict[str, Any]:
    """The next JSON-RPC message on the stream (fails on a Reset or anything but data)."""
    for _ in range(100):
        frame = await harness.recv_frame()
        assert isinstance(frame.body, RelayData), f"expected data, got {frame}"
        messages = harness.transport.open_record(frame.body.seq, frame.body.payload)
        if messages:
            assert len(messages) == 1
            parsed: dict[str, Any] = json.loads(messages[0])
            return parsed
    raise AssertionError("no complete message")


async def test_a_tampered_data_frame_gets_a_protocol_error_reset(relay: RunningRelay) -> None:
    async with raw_harness(relay) as harness:
        [frame] = data_frames(harness.stream_id, harness.transport.seal_message(compact(INITIALIZE)))
        body = decode_frame(frame).body
        assert isinstance(body, RelayData)
        flipped = bytes([body.payload[0] ^ 0x01]) + body.payload[1:]
        await harness.ws.send(
            encode_frame(RelayMessageFrame(harness.stream_id, replace(body, payload=flipped)))
        )
        assert await harness.recv_frame() == RelayMessageFrame(harness.stream_id, RESET)


async def test_a_replayed_data_frame_is_ignored_and_the_stream_goes_on(relay: RunningRelay) -> None:
    async with raw_harness(relay) as harness:
        [first] = await send(harness, INITIALIZE)
        assert (await next_message(harness))["id"] == 1
        await harness.ws.send(first)  # the same record again: a duplicate seq
        await send(harness, {"method": "initialized", "params": {}})
        await send(harness, {"id": 2, "method": "environment/status"})
        assert await next_message(harness) == {"id": 2, "result": {"status": "ready"}}


async def test_data_for_an_unknown_stream_and_a_second_handshake_are_reset() -> None:
    async with (
        running_relay() as relay,
        running_executor(relay) as (executor, _),
        raw_harness(relay) as harness,
    ):
        assert executor.mux is not None
        await executor.mux.on_message(
            encode_frame(RelayMessageFrame("no-such-stream", RelayData(seq=0, payload=b"x")))
        )
        assert executor.mux.stats["reset_sent"] == 1
        await harness.ws.send(encode_frame(RelayMessageFrame(harness.stream_id, RelayHandshake(b"again"))))
        assert await harness.recv_frame() == RelayMessageFrame(harness.stream_id, RESET)
        assert harness.stream_id not in executor.mux.active_streams


async def test_frames_failing_validation_are_dropped_silently(relay: RunningRelay) -> None:
    async with raw_harness(relay) as harness:
        [first] = data_frames(harness.stream_id, harness.transport.seal_message(compact(INITIALIZE)))
        [second] = data_frames(
            harness.stream_id, harness.transport.seal_message(compact({"method": "initialized"}))
        )
        parsed = decode_frame(first)
        assert isinstance(parsed.body, RelayData)
        await harness.ws.send(encode_frame(replace(parsed, version=2)))
        await harness.ws.send(encode_frame(replace(parsed, body=replace(parsed.body, segment_count=2))))
        await harness.ws.send(second)  # waits in the reorder window for seq 0
        # Had either bad copy of seq 0 been accepted, the initialize answer would come now; a
        # Reset would mean the stream died. Neither may happen.
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(harness.ws.recv(), 0.5)
        await harness.ws.send(first)
        assert (await next_message(harness))["id"] == 1


async def test_a_response_to_an_id_the_executor_never_issued_resets_the_stream(relay: RunningRelay) -> None:
    async with raw_harness(relay) as harness:
        await send(harness, INITIALIZE)
        await next_message(harness)
        await send(harness, {"id": 77, "result": {}})
        assert await harness.recv_frame() == RelayMessageFrame(harness.stream_id, RESET)


async def test_a_sequence_gap_over_64_is_reset_but_64_is_buffered(relay: RunningRelay) -> None:
    async with raw_harness(relay) as within, raw_harness(relay) as beyond:
        ahead = RelayData(seq=64, payload=b"x" * 32)
        await within.ws.send(encode_frame(RelayMessageFrame(within.stream_id, ahead)))
        await beyond.ws.send(encode_frame(RelayMessageFrame(beyond.stream_id, replace(ahead, seq=65))))
        assert await beyond.recv_frame() == RelayMessageFrame(beyond.stream_id, RESET)
        with pytest.raises(TimeoutError):  # buffered, waiting for seq 0..63
            await asyncio.wait_for(within.ws.recv(), 0.5)


async def test_a_resume_on_an_active_stream_is_ignored(relay: RunningRelay) -> None:
    async with raw_harness(relay) as harness:
        await harness.ws.send(encode_frame(RelayMessageFrame(harness.stream_id, RelayResume())))
        await send(harness, INITIALIZE)
        assert (await next_message(harness))["id"] == 1
