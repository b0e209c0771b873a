"""The harness end of one Noise relay stream over a rendezvous websocket (exec_server.md §6.3, §7, §8).

``open_harness_stream`` sends ``Resume`` and handshake message 1, waits for message 2 and returns a
:class:`HarnessStream`, a message channel carrying JSON-RPC to the executor. One harness websocket
carries one stream. A Reset, a close or any protocol fault ends the stream (``recv`` returns None);
the caller reconnects with a new stream id and resumes its session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import deque

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from exec_client.remote.errors import RemoteAuthorizationRejected, RemoteConnectError, RemoteStreamReset
from exec_client.wire.channel import ChannelClosedError
from exec_client.wire.noise import (
    HandshakeState,
    HybridStaticKey,
    NoiseAuthorizationRejected,
    NoiseError,
    NoiseTransport,
    relay_prologue,
)
from exec_client.wire.registry import ConnectBundle
from exec_client.wire.relay_frames import (
    RELAY_RESET_REASON_PROTOCOL_ERROR,
    RelayData,
    RelayFrameDecodeError,
    RelayHandshake,
    RelayMessageFrame,
    RelayReset,
    RelayResume,
    data_frame_head,
    data_frames,
    decode_data_frame,
    decode_frame,
    encode_frame,
)

__all__ = ["HarnessStream", "open_harness_stream"]

log = logging.getLogger(__name__)

_MAX_WAIT_FRAMES = 10_000  # frames for other streams tolerated while waiting for message 2


def _reset_frame(stream_id: str, reason: str = RELAY_RESET_REASON_PROTOCOL_ERROR) -> bytes:
    return encode_frame(RelayMessageFrame(stream_id, RelayReset(reason)))


async def open_harness_stream(
    ws: ClientConnection,
    bundle: ConnectBundle,
    static_key: HybridStaticKey,
    *,
    stream_id: str | None = None,
    timeout: float = 30.0,
) -> HarnessStream:
    """Claim a stream, run the handshake as initiator and return the established channel.

    Raises:
        RemoteAuthorizationRejected: message 2 carried the registry rejection marker.
        RemoteStreamReset: the stream was reset before message 2.
        RemoteConnectError: timeout, websocket loss or a malformed answer.
    """
    sid = stream_id or str(uuid.uuid4())
    prologue = relay_prologue(bundle.environment_id, bundle.executor_registration_id, sid)
    handshake = HandshakeState.initiator(static_key, bundle.executor_public_key, prologue)
    message_1 = handshake.write_message(bundle.harness_key_authorization.encode("utf-8"))
    try:
        await ws.send(encode_frame(RelayMessageFrame(sid, RelayResume())))
        await ws.send(encode_frame(RelayMessageFrame(sid, RelayHandshake(message_1))))
        message_2 = await asyncio.wait_for(_await_message_2(ws, sid), timeout)
    except TimeoutError as exc:
        raise RemoteConnectError(f"no handshake answer from the executor within {timeout:g}s") from exc
    except ConnectionClosed as exc:
        raise RemoteConnectError(f"rendezvous closed the websocket during the handshake: {exc}") from exc
    try:
        handshake.read_message(message_2)
    except NoiseAuthorizationRejected as exc:
        raise RemoteAuthorizationRejected(bundle.environment_id) from exc
    except NoiseError as exc:
        with contextlib.suppress(ConnectionClosed):
            await ws.send(_reset_frame(sid))
        raise RemoteConnectError(f"handshake message 2 was refused: {exc}") from exc
    return HarnessStream(ws, sid, NoiseTransport.from_handshake(handshake))


async def _await_message_2(ws: ClientConnection, sid: str) -> bytes:
    for _ in range(_MAX_WAIT_FRAMES):
        raw = await ws.recv()
        if isinstance(raw, str):
            raise RemoteConnectError("rendezvous sent a text frame; relay frames are binary")
        try:
            frame = decode_frame(raw)
        except RelayFrameDecodeError as exc:
            log.debug("dropping a relay frame during the handshake: %s", exc)
            continue
        if frame.stream_id != sid:
            continue
        if isinstance(frame.body, RelayHandshake):
            return frame.body.payload
        if isinstance(frame.body, RelayReset):
            raise RemoteStreamReset(frame.body.reason)
        if isinstance(frame.body, RelayData):
            raise RemoteConnectError("executor sent data before handshake message 2")
    raise RemoteConnectError("too many unrelated frames while waiting for handshake message 2")


class HarnessStream:
    """An established stream: ``send``/``recv``/``close`` whole JSON messages (a ``MessageChannel``)."""

    def __init__(self, ws: ClientConnection, stream_id: str, transport: NoiseTransport) -> None:
        self.stream_id = stream_id
        self._ws = ws
        self._transport = transport
        self._inbox: deque[bytes] = deque()
        self._data_head = data_frame_head(stream_id)
        self._send_lock = asyncio.Lock()
        self._recv_lock = asyncio.Lock()
        #: Why the stream ended (None while open).
        self.end_reason: str | None = None
        #: Frames dropped because they did not decode or belonged to another stream.
        self.dropped_frames = 0

    @property
    def transport(self) -> NoiseTransport:
        """The stream's Noise transport (sequence numbers and failure state)."""
        return self._transport

    async def send(self, message: bytes) -> None:
        """Seal ``message`` and send its records as data frames, in order."""
        if self.end_reason is not None:
            raise ChannelClosedError(self.end_reason)
        async with self._send_lock:  # keep one message's records contiguous and in seq order
            try:
                for frame in data_frames(self.stream_id, self._transport.seal_message(message)):
                    await self._ws.send(frame)
            except ConnectionClosed as exc:
                self._end(f"websocket closed: {exc}")
                raise ChannelClosedError(self.end_reason or "closed") from exc

    async def recv(self) -> bytes | None:
        """The next decrypted message, or None once the stream ended."""
        if self._inbox and not self._recv_lock.locked():
            return self._inbox.popleft()  # a record carries several messages: most calls find one waiting
        async with self._recv_lock:
            while not self._inbox and self.end_reason is None:
                await self._pump_one()
            return self._inbox.popleft() if self._inbox else None

    async def _pump_one(self) -> None:
        try:
            raw = await self._ws.recv()
        except ConnectionClosed as exc:
            self._end(f"websocket closed: {exc}")
            return
        if isinstance(raw, str):
            await self._fail("rendezvous sent a text frame")
            return
        data = decode_data_frame(raw, self._data_head)  # the output stream's frames, without the general codec
        if data is not None:
            await self._open_record(*data)
            return
        try:
            frame = decode_frame(raw)
        except RelayFrameDecodeError:
            self.dropped_frames += 1
            return
        if frame.stream_id != self.stream_id:
            self.dropped_frames += 1
            return
        body = frame.body
        if isinstance(body, RelayReset):
            self._end(f"reset by peer: {body.reason}")
        elif isinstance(body, RelayData):
            await self._open_record(body.seq, body.payload)
        elif isinstance(body, RelayHandshake):
            await self._fail("handshake frame on an established stream")

    async def _open_record(self, seq: int, payload: bytes | memoryview) -> None:
        try:
            self._inbox += self._transport.open_record(seq, payload)
        except NoiseError as exc:
            await self._fail(f"bad record seq {seq}: {exc}")

    async def _fail(self, reason: str) -> None:
        log.warning("remote exec-server stream %s failed: %s", self.stream_id, reason)
        self._end(reason)
        with contextlib.suppress(ConnectionClosed):
            await self._ws.send(_reset_frame(self.stream_id))
        await self._ws.close()

    def _end(self, reason: str) -> None:
        if self.end_reason is None:
            self.end_reason = reason

    async def close(self) -> None:
        """End the stream from our side and close its websocket."""
        self._end("closed by the harness")
        await self._ws.close()
