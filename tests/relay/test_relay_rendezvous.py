"""The rendezvous on real websockets: routing by stream id, Resets on departure, tickets, limits, capture.

The executor and harness here are bare websocket clients that push hand-made frames, so routing is
tested apart from Noise (the relay never decrypts anything).
"""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from exec_client.wire.noise import SECURITY_PROFILE, HybridStaticKey
from exec_client.wire.relay_frames import (
    RelayData,
    RelayHandshake,
    RelayMessageFrame,
    RelayReset,
    RelayResume,
    decode_frame,
    encode_frame,
)
from relay.rendezvous import (
    MAX_FRAME_BYTES,
    RESET_ENVIRONMENT_GONE,
    RESET_ENVIRONMENT_UNAVAILABLE,
    RESET_HARNESS_GONE,
    RESET_STREAM_IN_USE,
)
from relay.server import RunningRelay
from tests.support.remote import ENV_ID, STEP, TOKEN, running_relay

BEARER = {"Authorization": f"Bearer {TOKEN}"}


async def registry_post(relay: RunningRelay, action: str, body: dict[str, object]) -> dict[str, str]:
    async with httpx.AsyncClient(timeout=STEP, trust_env=False) as http:
        url = f"{relay.registry_url}/cloud/environment/{ENV_ID}/{action}"
        response = await http.post(url, json=body, headers=BEARER)
        response.raise_for_status()
        answer: dict[str, str] = response.json()
        return answer


async def environment_url(relay: RunningRelay) -> str:
    key = HybridStaticKey.generate().public_key.to_json()
    return (
        await registry_post(
            relay, "register", {"security_profile": SECURITY_PROFILE, "executor_public_key": key}
        )
    )["url"]


async def harness_url(relay: RunningRelay) -> str:
    key = HybridStaticKey.generate().public_key.to_json()
    return (await registry_post(relay, "connect", {"harness_public_key": key}))["url"]


def frame(stream_id: str, body: RelayData | RelayResume | RelayHandshake | RelayReset) -> bytes:
    return encode_frame(RelayMessageFrame(stream_id, body))


async def recv(ws: ClientConnection) -> RelayMessageFrame:
    raw = await asyncio.wait_for(ws.recv(), STEP)
    assert isinstance(raw, bytes)
    return decode_frame(raw)


async def wait_until(condition: object, what: str) -> None:
    for _ in range(int(STEP / 0.01)):
        if callable(condition) and condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting until {what}")


async def test_frames_are_routed_unchanged_between_the_executor_and_each_harness_by_stream_id() -> None:
    async with running_relay() as relay:
        async with connect(await environment_url(relay), open_timeout=STEP) as executor:
            await wait_until(lambda: relay.rendezvous.executor_connected(ENV_ID), "executor connected")
            async with (
                connect(await harness_url(relay), open_timeout=STEP) as h1,
                connect(await harness_url(relay), open_timeout=STEP) as h2,
            ):
                await h1.send(frame("s1", RelayResume()))
                assert await recv(executor) == RelayMessageFrame("s1", RelayResume())
                await h2.send(frame("s2", RelayResume()))
                assert await recv(executor) == RelayMessageFrame("s2", RelayResume())

                hello = frame("s1", RelayHandshake(b"\x01" * 3000))
                await h1.send(hello)
                assert await asyncio.wait_for(executor.recv(), STEP) == hello  # byte for byte
                await executor.send(frame("s2", RelayData(seq=0, payload=b"for-two")))
                await executor.send(frame("s1", RelayData(seq=0, payload=b"for-one")))
                assert (await recv(h1)).body == RelayData(seq=0, payload=b"for-one")
                assert (await recv(h2)).body == RelayData(seq=0, payload=b"for-two")

                # A harness cannot speak for another stream: frames with a foreign id are dropped.
                await h2.send(frame("s1", RelayData(seq=5, payload=b"spoof")))
                await h2.send(frame("s2", RelayData(seq=1, payload=b"mine")))
                assert (await recv(executor)) == RelayMessageFrame("s2", RelayData(seq=1, payload=b"mine"))
                assert relay.rendezvous.dropped["foreign_stream"] == 1


async def test_a_departing_harness_makes_the_relay_reset_its_stream_at_the_executor() -> None:
    async with running_relay() as relay, connect(await environment_url(relay), open_timeout=STEP) as executor:
        await wait_until(lambda: relay.rendezvous.executor_connected(ENV_ID), "executor connected")
        async with connect(await harness_url(relay), open_timeout=STEP) as harness:
            await harness.send(frame("s1", RelayResume()))
            assert (await recv(executor)).body == RelayResume()
        reset = await recv(executor)
        assert reset == RelayMessageFrame("s1", RelayReset(RESET_HARNESS_GONE))
        assert relay.rendezvous.stream_count(ENV_ID) == 0


async def test_an_executor_reset_reaches_the_harness_and_frees_the_stream_id() -> None:
    async with running_relay() as relay, connect(await environment_url(relay), open_timeout=STEP) as executor:
        await wait_until(lambda: relay.rendezvous.executor_connected(ENV_ID), "executor connected")
        async with connect(await harness_url(relay), open_timeout=STEP) as harness:
            await harness.send(frame("s1", RelayResume()))
            await recv(executor)
            await executor.send(frame("s1", RelayReset("noise_relay_protocol_error")))
            assert (await recv(harness)).body == RelayReset("noise_relay_protocol_error")
        await wait_until(lambda: relay.rendezvous.stream_count(ENV_ID) == 0, "stream freed")
        async with connect(await harness_url(relay), open_timeout=STEP) as again:
            await again.send(frame("s1", RelayResume()))
            assert (await recv(executor)).body == RelayResume()


async def test_a_departing_executor_resets_every_harness_and_new_harnesses_are_refused() -> None:
    async with running_relay() as relay:
        executor = await connect(await environment_url(relay), open_timeout=STEP)
        await wait_until(lambda: relay.rendezvous.executor_connected(ENV_ID), "executor connected")
        async with connect(await harness_url(relay), open_timeout=STEP) as harness:
            await harness.send(frame("s1", RelayResume()))
            await recv(executor)
            await executor.close()
            assert (await recv(harness)) == RelayMessageFrame("s1", RelayReset(RESET_ENVIRONMENT_GONE))
        async with connect(await harness_url(relay), open_timeout=STEP) as late:
            await late.send(frame("s2", RelayResume()))
            assert (await recv(late)).body == RelayReset(RESET_ENVIRONMENT_UNAVAILABLE)


async def test_a_second_harness_claiming_a_live_stream_id_is_reset() -> None:
    async with running_relay() as relay, connect(await environment_url(relay), open_timeout=STEP) as executor:
        await wait_until(lambda: relay.rendezvous.executor_connected(ENV_ID), "executor connected")
        async with (
            connect(await harness_url(relay), open_timeout=STEP) as first,
            connect(await harness_url(relay), open_timeout=STEP) as second,
        ):
            await first.send(frame("same", RelayResume()))
            await recv(executor)
            await second.send(frame("same", RelayResume()))
            assert (await recv(second)).body == RelayReset(RESET_STREAM_IN_USE)


async def test_rendezvous_urls_need_a_valid_ticket_and_harness_tickets_are_single_use() -> None:
    async with running_relay() as relay:
        env_url = await environment_url(relay)
        with pytest.raises(InvalidStatus) as bad:
            await connect(env_url.replace("ticket=", "ticket=x"), open_timeout=STEP)
        assert bad.value.response.status_code == 403
        url = await harness_url(relay)
        async with connect(url, open_timeout=STEP):
            pass
        with pytest.raises(InvalidStatus) as reused:
            await connect(url, open_timeout=STEP)
        assert reused.value.response.status_code == 403
        with pytest.raises(InvalidStatus) as no_route:
            await connect(f"{relay.rendezvous_url}/relay?role=harness", open_timeout=STEP)
        assert no_route.value.response.status_code == 404


async def test_a_message_over_256_kib_closes_that_websocket_with_1009() -> None:
    async with running_relay() as relay, connect(await environment_url(relay), open_timeout=STEP) as executor:
        await wait_until(lambda: relay.rendezvous.executor_connected(ENV_ID), "executor connected")
        async with connect(await harness_url(relay), open_timeout=STEP, max_size=None) as harness:
            await harness.send(frame("s1", RelayResume()))
            await recv(executor)
            await harness.send(frame("s1", RelayData(seq=0, payload=b"x" * MAX_FRAME_BYTES)))
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(harness.recv(), STEP)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
        # Nothing oversized reached the executor; it only hears that the harness left.
        assert (await recv(executor)) == RelayMessageFrame("s1", RelayReset(RESET_HARNESS_GONE))


async def test_the_capture_file_records_every_relayed_frame_as_decodable_base64(tmp_path: Path) -> None:
    capture = tmp_path / "frames.jsonl"
    async with running_relay(capture=capture) as relay:
        async with connect(await environment_url(relay), open_timeout=STEP) as executor:
            await wait_until(lambda: relay.rendezvous.executor_connected(ENV_ID), "executor connected")
            async with connect(await harness_url(relay), open_timeout=STEP) as harness:
                await harness.send(frame("s1", RelayResume()))
                await harness.send(frame("s1", RelayHandshake(b"hello")))
                await recv(executor)
                await recv(executor)
                await executor.send(frame("s1", RelayHandshake(b"world")))
                await recv(harness)
            await recv(executor)  # the Reset for the departed harness
    lines = [json.loads(line) for line in capture.read_text().splitlines()]
    frames = [line for line in lines if "frame" in line]
    decoded = [(f["direction"], decode_frame(base64.b64decode(f["frame"]))) for f in frames]
    assert [(d, fr.stream_id, type(fr.body).__name__) for d, fr in decoded] == [
        ("harness->environment", "s1", "RelayResume"),
        ("harness->environment", "s1", "RelayHandshake"),
        ("environment->harness", "s1", "RelayHandshake"),
        ("harness->environment", "s1", "RelayReset"),
    ]
    assert all(f["stream_id"] == "s1" and f["environment_id"] == ENV_ID for f in frames)
    assert TOKEN not in capture.read_text()
    assert {line["event"] for line in lines if "event" in line} >= {
        "environment_connected",
        "harness_connected",
    }


async def test_a_reconnecting_executor_replaces_the_old_connection_and_its_streams_are_reset() -> None:
    async with running_relay() as relay:
        url = await environment_url(relay)
        async with connect(url, open_timeout=STEP) as old:
            await wait_until(lambda: relay.rendezvous.executor_connected(ENV_ID), "executor connected")
            async with connect(await harness_url(relay), open_timeout=STEP) as harness:
                await harness.send(frame("s1", RelayResume()))
                await recv(old)
                async with connect(url, open_timeout=STEP) as new:  # same URL: no re-registration
                    assert (await recv(harness)).body == RelayReset(RESET_ENVIRONMENT_GONE)
                    with pytest.raises(ConnectionClosed):
                        await asyncio.wait_for(old.recv(), STEP)
                    async with connect(await harness_url(relay), open_timeout=STEP) as second:
                        await second.send(frame("s2", RelayResume()))
                        assert await recv(new) == RelayMessageFrame("s2", RelayResume())
