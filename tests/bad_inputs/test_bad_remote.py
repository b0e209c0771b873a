"""Bad input at the remote-environment edges, table-driven: registry answers, relay frames, Noise records.

Each case pins the answer (error class and text, close code, Reset reason or drop counter) and then
shows the component still serves: the registry client reads the next good answer, the rendezvous
routes a fresh stream, the executor completes a fresh handshake and request. Everything runs on real
sockets on 127.0.0.1. Cases already pinned elsewhere (tests/exec_client/test_relay_frames.py malformed bytes,
tests/exec_client/test_noise_transport.py record layer, tests/exec_server/test_remote_executor_faults.py) are not repeated.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from exec_client.wire.noise import (
    SECURITY_PROFILE,
    CipherState,
    HandshakeState,
    HybridStaticKey,
    NoiseTransport,
    frame_message,
    relay_prologue,
)
from exec_client.wire.registry import (
    MAX_ANSWER_BYTES,
    RegistryError,
    RegistryResponseError,
    environment_path,
    new_http_client,
    parse_register,
    post_json,
    request_connect,
)
from exec_client.wire.relay_frames import (
    RELAY_RESET_REASON_PROTOCOL_ERROR,
    DropReason,
    RelayData,
    RelayFrameDecodeError,
    RelayHandshake,
    RelayMessageFrame,
    RelayReset,
    RelayResume,
    decode_frame,
    encode_frame,
)
from relay.rendezvous import MAX_FRAME_BYTES, RESET_ENVIRONMENT_GONE, RESET_HARNESS_GONE
from relay.server import RunningRelay
from tests.exec_server.test_remote_executor_faults import INITIALIZE, next_message, send
from tests.relay.test_relay_rendezvous import environment_url, frame, harness_url, recv, wait_until
from tests.support.remote import (
    ENV_ID,
    STEP,
    RawHarness,
    fetch_bundle,
    raw_harness,
    running_executor,
    running_relay,
)

# == registry answers, as the registry client sees them ===================================================

EXECUTOR_KEY = HybridStaticKey.generate().public_key.to_json()
HARNESS_KEY = HybridStaticKey.generate().public_key


def connect_answer(**changes: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "security_profile": SECURITY_PROFILE,
        "environment_id": ENV_ID,
        "url": "ws://127.0.0.1:1/relay/x",
        "executor_registration_id": "reg-1",
        "executor_public_key": EXECUTOR_KEY,
        "harness_key_authorization": "auth-1",
    }
    answer.update(changes)
    return {k: v for k, v in answer.items() if v is not None}


def http_answer(status: int, body: bytes | dict[str, Any] | list[Any] = b"", *, headers: str = "",
                content_type: str = "application/json", length: int | None = None) -> bytes:
    data = json.dumps(body).encode() if isinstance(body, dict | list) else body
    head = (
        f"HTTP/1.1 {status} Whatever\r\ncontent-type: {content_type}\r\n"
        f"content-length: {len(data) if length is None else length}\r\n{headers}connection: close\r\n\r\n"
    )
    return head.encode() + data


class CannedRegistry:
    """A loopback HTTP server that answers each request with the next canned raw answer, then closes."""

    def __init__(self) -> None:
        self.answers: list[bytes] = []
        self.requests = 0
        self.url = ""
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> CannedRegistry:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await asyncio.wait_for(self._server.wait_closed(), STEP)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), STEP)
            found = re.search(rb"content-length:\s*(\d+)", head, re.IGNORECASE)
            await asyncio.wait_for(reader.readexactly(int(found.group(1)) if found else 0), STEP)
            self.requests += 1
            writer.write(self.answers.pop(0))
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, TimeoutError):
            pass
        finally:
            writer.close()


NOT_JSON = "environment registry answer from {url} is not JSON"
LACKS = "connect answer lacks a string {field!r}"
MALFORMED_ERROR = "empty or malformed error body"
BIG = b'{"pad":"' + b"x" * (MAX_ANSWER_BYTES + 1) + b'"}'

# (id, action, raw answer, expected exception class, expected message: exact, or a prefix ending in "...")
REGISTRY_CASES: list[tuple[str, str, bytes, type[Exception], str]] = [
    ("malformed-json", "connect", http_answer(200, b'{"url": '), RegistryResponseError, NOT_JSON),
    ("json-array", "connect", http_answer(200, []), RegistryResponseError,
     "environment registry answer from {url} is not a JSON object"),
    ("empty-204", "connect", http_answer(204), RegistryResponseError, NOT_JSON),
    ("html-content-type", "connect", http_answer(200, b"<html>busy</html>", content_type="text/html"),
     RegistryResponseError, NOT_JSON),
    ("missing-url", "connect", http_answer(200, connect_answer(url=None)), RegistryResponseError,
     LACKS.format(field="url")),
    ("url-not-a-string", "connect", http_answer(200, connect_answer(url=7)), RegistryResponseError,
     LACKS.format(field="url")),
    ("missing-authorization", "connect", http_answer(200, connect_answer(harness_key_authorization="")),
     RegistryResponseError, LACKS.format(field="harness_key_authorization")),
    ("wrong-profile", "connect", http_answer(200, connect_answer(security_profile="noise-v0")),
     RegistryResponseError, f"connect answer has security_profile 'noise-v0', expected {SECURITY_PROFILE!r}"),
    ("bad-executor-key", "connect", http_answer(200, connect_answer(executor_public_key={"suite": 1})),
     RegistryResponseError, "connect answer has an invalid executor_public_key: ..."),
    ("register-without-registration-id", "register",
     http_answer(200, {"security_profile": SECURITY_PROFILE, "environment_id": ENV_ID, "url": "ws://x"}),
     RegistryResponseError, "register answer lacks a string 'executor_registration_id'"),
    ("500-plain-text", "connect", http_answer(500, b"upstream exploded", content_type="text/plain"),
     RegistryError, f"environment registry request failed (500 Internal Server Error): {MALFORMED_ERROR}"),
    ("403-json-error", "connect", http_answer(403, {"error": {"code": "forbidden", "message": "not yours"}}),
     RegistryError, "environment registry request failed (403 Forbidden, forbidden): not yours"),
    ("error-code-not-a-string", "connect", http_answer(400, {"error": {"code": 4, "message": "m"}}),
     RegistryError, f"environment registry request failed (400 Bad Request): {MALFORMED_ERROR}"),
    ("302-not-followed", "connect", http_answer(302, headers="location: http://127.0.0.1:1/\r\n"),
     RegistryError, f"environment registry request failed (302 Found): {MALFORMED_ERROR}"),
    ("599-unknown-status", "connect", http_answer(599, b"?"), RegistryError,
     f"environment registry request failed (599): {MALFORMED_ERROR}"),
    ("huge-json-answer", "connect", http_answer(200, BIG), RegistryResponseError,
     f"environment registry answer from {{url}} exceeds {MAX_ANSWER_BYTES} bytes"),
    ("huge-declared-length", "connect", http_answer(200, b"{}", length=10**12), RegistryResponseError,
     f"environment registry answer from {{url}} exceeds {MAX_ANSWER_BYTES} bytes"),
    ("huge-error-body", "connect", http_answer(503, BIG), RegistryError,
     f"environment registry request failed (503 Service Unavailable): {MALFORMED_ERROR}"),
    ("body-cut-short", "connect", http_answer(200, b'{"url"', length=100), RegistryResponseError,
     "environment registry request to {url} failed: ..."),
]  # fmt: skip


@pytest.mark.parametrize(
    ("action", "answer", "error", "message"), [c[1:] for c in REGISTRY_CASES], ids=[c[0] for c in REGISTRY_CASES]
)
async def test_a_bad_registry_answer_gets_a_specific_error_and_the_client_goes_on(
    action: str, answer: bytes, error: type[Exception], message: str
) -> None:
    good = connect_answer(url="ws://127.0.0.1:1/relay/good")
    async with CannedRegistry() as registry, new_http_client() as http:
        registry.answers = [answer, http_answer(200, good)]
        url = environment_path(registry.url, ENV_ID, action)
        with pytest.raises(error) as info:
            if action == "connect":
                await request_connect(http, registry.url, ENV_ID, "tok", HARNESS_KEY)
            else:
                parse_register(await post_json(http, url, "tok", {}))
        expected = message.format(url=url)
        if expected.endswith("..."):
            assert str(info.value).startswith(expected[:-3]), str(info.value)
        else:
            assert str(info.value) == expected
        assert "tok" not in str(info.value)  # the bearer token never lands in a message
        # The same client, against the same registry, still gets through.
        bundle = await request_connect(http, registry.url, ENV_ID, "tok", HARNESS_KEY)
        assert bundle.url == good["url"]
        assert registry.requests == 2


async def test_a_json_answer_labelled_text_plain_is_accepted_as_codex_does() -> None:
    # reqwest's .json() ignores content-type; so do we (pinned so a change is deliberate).
    async with CannedRegistry() as registry, new_http_client() as http:
        registry.answers = [http_answer(200, connect_answer(), content_type="text/plain")]
        bundle = await request_connect(http, registry.url, ENV_ID, "tok", HARNESS_KEY)
    assert bundle.executor_registration_id == "reg-1"


# == relay frames, fed to the rendezvous and to the codec =================================================


def resume_head(stream_id: str) -> bytes:
    """Version and stream id, with no body yet."""
    return encode_frame(RelayMessageFrame(stream_id, RelayResume()))[:-2]


# The first frame of a harness websocket must be a well-formed Resume: anything else closes it with 1008.
FIRST_FRAME_CASES: list[tuple[str, bytes | str, str]] = [
    ("truncated", encode_frame(RelayMessageFrame("s1", RelayResume()))[:5], "truncated"),
    ("unknown-body-type", resume_head("s1") + b"\x5a\x00", "missing_body"),
    ("padded-stream-id", frame(" s1", RelayResume()), "harness_without_resume"),
    ("stream-id-over-128-utf8-bytes", frame("€" * 43, RelayResume()), "harness_without_resume"),
    ("text-frame", "resume s1", "harness_without_resume"),
    ("data-before-resume", frame("s1", RelayData(seq=0, payload=b"x")), "harness_without_resume"),
    ("oversized-length-claim", resume_head("s1") + b"\x3a\xff\xff\xff\xff\xff\xff\xff\xff\x7f", "truncated"),
]


@asynccontextmanager
async def bare_executor(relay: RunningRelay) -> AsyncIterator[ClientConnection]:
    async with connect(await environment_url(relay), open_timeout=STEP, max_size=None) as executor:
        await wait_until(lambda: relay.rendezvous.executor_connected(ENV_ID), "executor connected")
        yield executor


async def routes_a_fresh_stream(relay: RunningRelay, executor: ClientConnection, stream_id: str) -> None:
    """A new harness can claim `stream_id` and its data reaches the executor unchanged."""
    async with connect(await harness_url(relay), open_timeout=STEP) as harness:
        await harness.send(frame(stream_id, RelayResume()))
        assert await recv(executor) == RelayMessageFrame(stream_id, RelayResume())
        await harness.send(frame(stream_id, RelayData(seq=0, payload=b"fresh")))
        assert await recv(executor) == RelayMessageFrame(stream_id, RelayData(seq=0, payload=b"fresh"))


@pytest.mark.parametrize(("first", "counter"), [c[1:] for c in FIRST_FRAME_CASES], ids=[c[0] for c in FIRST_FRAME_CASES])
async def test_a_harness_whose_first_frame_is_not_a_resume_is_closed_with_1008(first: bytes | str, counter: str) -> None:
    async with running_relay() as relay, bare_executor(relay) as executor:
        async with connect(await harness_url(relay), open_timeout=STEP) as harness:
            await harness.send(first)
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(harness.recv(), STEP)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
        assert relay.rendezvous.dropped[counter] >= 1
        assert relay.rendezvous.dropped["harness_without_resume"] == 1
        assert relay.rendezvous.stream_count(ENV_ID) == 0
        await routes_a_fresh_stream(relay, executor, "s1")  # nothing of the bad claim reached the executor


# Frames on a claimed stream that cannot be routed are dropped and counted; the stream goes on.
ROUTED_CASES: list[tuple[str, str, Callable[[str], bytes | str], str]] = [
    ("harness-truncated", "harness", lambda sid: frame(sid, RelayData(seq=0, payload=b"abc"))[:-1], "truncated"),
    ("harness-unknown-body-type", "harness", lambda sid: resume_head(sid) + b"\x62\x01x", "missing_body"),
    ("harness-foreign-stream-id", "harness", lambda sid: frame("not-" + sid, RelayData(0, b"x")), "foreign_stream"),
    ("harness-text-frame", "harness", lambda sid: "hello", "text_frame"),
    ("executor-truncated", "executor", lambda sid: frame(sid, RelayData(seq=0, payload=b"abc"))[:-1], "truncated"),
    ("executor-unknown-stream", "executor", lambda sid: frame("nobody", RelayData(0, b"x")), "no_harness"),
    ("executor-empty-stream-id", "executor", lambda sid: frame("", RelayData(0, b"x")), "missing_stream_id"),
    ("executor-bad-varint", "executor", lambda sid: b"\x08" + b"\xff" * 11, "bad_varint"),
]  # fmt: skip


@pytest.mark.parametrize(("side", "make", "counter"), [c[1:] for c in ROUTED_CASES], ids=[c[0] for c in ROUTED_CASES])
async def test_an_unroutable_frame_on_a_live_stream_is_dropped_and_the_stream_goes_on(
    side: str, make: Callable[[str], bytes | str], counter: str
) -> None:
    async with running_relay() as relay, bare_executor(relay) as executor:
        async with connect(await harness_url(relay), open_timeout=STEP) as harness:
            await harness.send(frame("s1", RelayResume()))
            await recv(executor)
            sender, receiver = (harness, executor) if side == "harness" else (executor, harness)
            await sender.send(make("s1"))
            good = frame("s1", RelayData(seq=0, payload=b"after"))
            await sender.send(good)
            # The next thing the other side sees is the good frame: the bad one was not forwarded.
            assert await recv(receiver) == decode_frame(good)
            assert relay.rendezvous.dropped[counter] == 1
        assert await recv(executor) == RelayMessageFrame("s1", RelayReset(RESET_HARNESS_GONE))
        await routes_a_fresh_stream(relay, executor, "s2")


async def test_an_oversized_executor_frame_closes_it_with_1009_and_a_new_executor_is_served() -> None:
    async with running_relay() as relay:
        async with bare_executor(relay) as executor, connect(await harness_url(relay), open_timeout=STEP) as harness:
            await harness.send(frame("s1", RelayResume()))
            await recv(executor)
            await executor.send(frame("s1", RelayData(seq=0, payload=b"x" * MAX_FRAME_BYTES)))
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(executor.recv(), STEP)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
            # The harness hears that its environment went away, not the oversized payload.
            assert await recv(harness) == RelayMessageFrame("s1", RelayReset(RESET_ENVIRONMENT_GONE))
        async with bare_executor(relay) as again:
            await routes_a_fresh_stream(relay, again, "s1")


CODEC_CASES: list[tuple[str, bytes, DropReason]] = [
    ("stream-id-129-bytes-in-43-chars", frame("€" * 43, RelayResume()), DropReason.INVALID_STREAM_ID),
    ("unknown-body-type-only", resume_head("s1") + b"\x5a\x00\x7a\x01\x00", DropReason.MISSING_BODY),
    ("length-claim-beyond-the-frame", resume_head("s1") + b"\x2a\xff\xff\xff\xff\x0f", DropReason.TRUNCATED),
    ("payload-cut-inside-data", frame("s1", RelayData(3, b"payload"))[:-3], DropReason.TRUNCATED),
]


@pytest.mark.parametrize(("raw", "reason"), [c[1:] for c in CODEC_CASES], ids=[c[0] for c in CODEC_CASES])
def test_the_codec_names_why_it_refuses_a_frame(raw: bytes, reason: DropReason) -> None:
    with pytest.raises(RelayFrameDecodeError) as info:
        decode_frame(raw)
    assert info.value.reason is reason
    # The codec keeps no state: the next good frame decodes.
    ok = RelayMessageFrame("€" * 42 + "xx", RelayResume())  # exactly 128 bytes
    assert decode_frame(encode_frame(ok)) == ok


# == Noise records, fed to our executor through the relay ================================================


@dataclass
class CraftingHarness:
    """A harness stream that can also encrypt arbitrary record plaintexts (`cipher` is its send side)."""

    ws: ClientConnection
    stream_id: str
    transport: NoiseTransport
    cipher: CipherState

    async def send_record(self, seq: int, payload: bytes) -> None:
        await self.ws.send(encode_frame(RelayMessageFrame(self.stream_id, RelayData(seq=seq, payload=payload))))


@asynccontextmanager
async def crafting_harness(relay: RunningRelay) -> AsyncIterator[CraftingHarness]:
    key = HybridStaticKey.generate()
    bundle = await fetch_bundle(relay, key)
    stream_id = str(uuid.uuid4())
    hs = HandshakeState.initiator(
        key, bundle.executor_public_key, relay_prologue(ENV_ID, bundle.executor_registration_id, stream_id)
    )
    async with connect(bundle.url, max_size=None, open_timeout=STEP) as ws:
        await ws.send(encode_frame(RelayMessageFrame(stream_id, RelayResume())))
        await ws.send(encode_frame(RelayMessageFrame(stream_id, RelayHandshake(
            hs.write_message(bundle.harness_key_authorization.encode())))))
        raw = await asyncio.wait_for(ws.recv(), STEP)
        assert isinstance(raw, bytes)
        reply = decode_frame(raw)
        assert isinstance(reply.body, RelayHandshake), reply
        hs.read_message(reply.body.payload)
        ciphers = hs.split()
        yield CraftingHarness(ws, stream_id, NoiseTransport(ciphers), ciphers.send)


def sealed_initialize(harness: CraftingHarness) -> bytes:
    [record] = harness.transport.seal_message(json.dumps(INITIALIZE).encode())
    return record.ciphertext


async def truncated_record(h: CraftingHarness, other: RawHarness) -> None:
    await h.send_record(0, sealed_initialize(h)[:10])


async def tampered_tag(h: CraftingHarness, other: RawHarness) -> None:
    record = bytearray(sealed_initialize(h))
    record[-1] ^= 0x80  # the last byte of the 16-byte AES-GCM tag
    await h.send_record(0, bytes(record))


async def replayed_from_another_stream(h: CraftingHarness, other: RawHarness) -> None:
    # A record that is valid on `other` (same seq) is sent on this stream: other keys, so it fails.
    [record] = other.transport.seal_message(json.dumps(INITIALIZE).encode())
    await h.send_record(0, record.ciphertext)
    await other.ws.send(encode_frame(RelayMessageFrame(other.stream_id, RelayData(seq=0, payload=record.ciphertext))))
    assert (await next_message(other))["id"] == 1  # on its own stream the record is fine


async def zero_length_prefix(h: CraftingHarness, other: RawHarness) -> None:
    await h.send_record(0, h.cipher.encrypt_with_ad(b"", b"\x00\x00\x00\x00{}"))


async def length_prefix_over_64_mib(h: CraftingHarness, other: RawHarness) -> None:
    await h.send_record(0, h.cipher.encrypt_with_ad(b"", (64 * 1024 * 1024 + 1).to_bytes(4, "big") + b"{"))


async def oversized_record(h: CraftingHarness, other: RawHarness) -> None:
    await h.send_record(0, b"\x00" * (61440 + 16 + 1))


NOISE_CASES: list[tuple[str, Callable[[CraftingHarness, RawHarness], Awaitable[None]]]] = [
    ("truncated-record", truncated_record),
    ("tampered-tag", tampered_tag),
    ("replayed-from-another-stream", replayed_from_another_stream),
    ("zero-length-prefix", zero_length_prefix),
    ("length-prefix-over-64-mib", length_prefix_over_64_mib),
    ("oversized-record", oversized_record),
]


@pytest.mark.parametrize("inject", [c[1] for c in NOISE_CASES], ids=[c[0] for c in NOISE_CASES])
async def test_a_bad_noise_record_resets_only_its_stream_and_the_executor_keeps_serving(
    inject: Callable[[CraftingHarness, RawHarness], Awaitable[None]],
) -> None:
    async with running_relay() as relay, running_executor(relay), raw_harness(relay) as bystander:
        async with crafting_harness(relay) as harness:
            await inject(harness, bystander)
            raw = await asyncio.wait_for(harness.ws.recv(), STEP)
            assert isinstance(raw, bytes)
            assert decode_frame(raw) == RelayMessageFrame(harness.stream_id, RelayReset(RELAY_RESET_REASON_PROTOCOL_ERROR))
        # The stream that was already open and a stream opened afterwards both still work.
        if bystander.transport.next_send_seq == 0:
            await send(bystander, INITIALIZE)
            assert (await next_message(bystander))["id"] == 1
        await send(bystander, {"method": "initialized", "params": {}})
        await send(bystander, {"id": 2, "method": "environment/status"})
        assert await next_message(bystander) == {"id": 2, "result": {"status": "ready"}}
        async with raw_harness(relay) as fresh:
            await send(fresh, INITIALIZE)
            assert (await next_message(fresh))["id"] == 1


async def test_a_valid_record_holding_bad_json_gets_a_json_rpc_error_and_the_stream_goes_on() -> None:
    async with running_relay() as relay, running_executor(relay), crafting_harness(relay) as harness:
        await harness.send_record(0, harness.cipher.encrypt_with_ad(b"", frame_message(b"{not json")))
        raw = await asyncio.wait_for(harness.ws.recv(), STEP)
        assert isinstance(raw, bytes)
        reply = decode_frame(raw).body
        assert isinstance(reply, RelayData)
        [answer] = harness.transport.open_record(reply.seq, reply.payload)
        error = json.loads(answer)
        assert error["id"] == -1 and error["error"]["code"] == -32600
        assert error["error"]["message"].startswith(
            "failed to parse JSON-RPC message from exec-server noise stream: invalid JSON"
        )
        # Nonce 1 of the send cipher (the transport's own counter did not see the crafted record 0).
        [record] = harness.transport.seal_message(json.dumps(INITIALIZE).encode())
        await harness.send_record(1, record.ciphertext)
        raw = await asyncio.wait_for(harness.ws.recv(), STEP)
        assert isinstance(raw, bytes)
        reply = decode_frame(raw).body
        assert isinstance(reply, RelayData)
        assert json.loads(harness.transport.open_record(reply.seq, reply.payload)[0])["id"] == 1
