"""Stream multiplexing on one executor websocket: frames in, per-stream channels and sessions out.

Rules (exec_server.md §6.2, §6.3; Codex 0.169.0): frames that fail validation are dropped silently;
``Resume`` opens a stream; ``Handshake`` on a fresh stream reads message 1 and asks the registry
(``/validate``) before message 2; ``Data`` on an unknown, validating or closed stream, a second
``Handshake``, a bad record, a gap over 64 or an oversized record get ``Reset{noise_relay_protocol_error}``;
a ``Reset`` from the harness ends the stream and detaches its session. Limits: 128 streams, 32
validations pending. When the websocket goes away every stream ends (sessions stay resumable).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence

from exec_client.wire.channel import BatchChannel, ChannelClosedError
from exec_client.wire.relay_frames import (
    RELAY_RESET_REASON_PROTOCOL_ERROR,
    RelayData,
    RelayFrameDecodeError,
    RelayHandshake,
    RelayMessageFrame,
    RelayReset,
    RelayResume,
    decode_frame,
    encode_frame,
)
from exec_server.remote.registration import ValidationOutcome
from exec_server.remote.stream_state import (
    ExecutorIdentity,
    ExecutorStream,
    HarnessHello,
    StreamPhase,
    StreamProtocolError,
)

__all__ = ["MAX_PENDING_VALIDATIONS", "MAX_STREAMS", "SessionFactory", "StreamMux", "Validator"]

log = logging.getLogger(__name__)

MAX_STREAMS = 128
MAX_PENDING_VALIDATIONS = 32
_INBOX_MESSAGES = 1024
_OUTGOING_BYTES_MAX = 1 << 20

#: Serves one stream's JSON-RPC messages until ``channel.recv()`` returns None.
SessionFactory = Callable[[BatchChannel], Awaitable[None]]
#: ``(stream_id, hello) -> outcome``: asks the registry about the harness key.
Validator = Callable[[str, HarnessHello], Awaitable[ValidationOutcome]]
SendFrame = Callable[[bytes], Awaitable[None]]
#: Several frames at once (a sealed batch), when the websocket can write them together.
SendFrames = Callable[[Sequence[bytes]], Awaitable[None]]


class _StreamChannel:
    """The session's view of one active stream."""

    def __init__(self, mux: StreamMux, stream: ExecutorStream) -> None:
        self._mux = mux
        self._stream = stream
        self._inbox: asyncio.Queue[bytes | None] = asyncio.Queue(_INBOX_MESSAGES)
        self.ended = False
        # Outgoing messages wait here for the flusher, which packs whatever accumulated while it was
        # busy (a burst of output chunks) into shared records: fewer seals, frames and socket writes.
        self._outgoing: list[bytes] = []
        self._outgoing_bytes = 0
        self._wakeup = asyncio.Event()
        self._space = asyncio.Event()
        self._space.set()
        self._failure: BaseException | None = None
        self._flusher = asyncio.get_running_loop().create_task(self._flush_loop(), name="relay-stream-flush")

    async def send(self, message: bytes) -> None:
        await self.send_many((message,))

    async def send_many(self, messages: Sequence[bytes]) -> None:
        while self._outgoing_bytes >= _OUTGOING_BYTES_MAX and not self.ended:
            self._space.clear()
            await self._space.wait()  # backpressure: the websocket is not keeping up
        if self._failure is not None:
            raise ChannelClosedError(f"stream is closed: {self._failure}")
        if self.ended or self._stream.phase is not StreamPhase.ACTIVE:
            raise ChannelClosedError("stream is closed")
        self._outgoing.extend(messages)
        self._outgoing_bytes += sum(map(len, messages))
        self._wakeup.set()

    async def _flush_loop(self) -> None:
        try:
            while True:
                await self._wakeup.wait()
                self._wakeup.clear()
                while self._outgoing:
                    batch, self._outgoing = self._outgoing, []
                    self._outgoing_bytes = 0
                    self._space.set()
                    await self._mux.send_frames(self._stream.seal_batch(batch))
                if self.ended:
                    return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the websocket or the stream went away: later sends fail fast
            self._failure = exc
            self._space.set()

    async def recv(self) -> bytes | None:
        if self.ended and self._inbox.empty():
            return None
        return await self._inbox.get()

    async def deliver(self, messages: list[bytes]) -> None:
        # A full inbox stalls the websocket reader (backpressure); poll so that a session which
        # ends meanwhile cannot leave the reader waiting forever.
        for message in messages:
            while not self.ended:
                try:
                    self._inbox.put_nowait(message)
                    break
                except asyncio.QueueFull:
                    await asyncio.sleep(0.005)

    def end(self) -> None:
        if not self.ended:
            self.ended = True
            self._space.set()
            with contextlib.suppress(asyncio.QueueFull):
                self._inbox.put_nowait(None)
            self._wakeup.set()  # the flusher sends what is queued, then stops

    async def close(self) -> None:
        await self._mux.reset_stream(self._stream.stream_id)


class StreamMux:
    """The streams of one executor websocket: frames in, Noise-protected sessions per stream out."""

    def __init__(
        self,
        identity: ExecutorIdentity,
        send_frame: SendFrame,
        validator: Validator,
        make_session: SessionFactory,
        send_frames: SendFrames | None = None,
    ) -> None:
        self._identity = identity
        self._send = send_frame
        self._send_many = send_frames
        self._validator = validator
        self._make_session = make_session
        self._streams: dict[str, ExecutorStream] = {}
        self._channels: dict[str, _StreamChannel] = {}
        self._validations: dict[str, asyncio.Task[None]] = {}
        self._sessions: set[asyncio.Task[None]] = set()
        self._closed = False
        #: Counts of dropped frames and resets, by reason.
        self.stats: Counter[str] = Counter()

    @property
    def active_streams(self) -> list[str]:
        """Ids of the streams past their handshake."""
        return [sid for sid, s in self._streams.items() if s.phase is StreamPhase.ACTIVE]

    async def send_frame(self, frame: bytes) -> None:
        """Send one encoded relay frame on the websocket."""
        await self.send_frames((frame,))

    async def send_frames(self, frames: Sequence[bytes]) -> None:
        """Send encoded relay frames in order (one socket write when the edge can join them)."""
        if self._closed:
            raise ChannelClosedError("executor websocket is gone")
        try:
            if self._send_many is not None:
                await self._send_many(frames)
            else:
                for frame in frames:
                    await self._send(frame)
        except ConnectionError as exc:
            raise ChannelClosedError(f"executor websocket failed: {exc}") from exc

    # -- inbound ------------------------------------------------------------------------------------

    async def on_message(self, raw: bytes | str) -> None:
        """Handle one websocket message from the relay (text frames and invalid frames are dropped)."""
        if isinstance(raw, str):
            self.stats["text_frame"] += 1
            return
        try:
            frame = decode_frame(raw)
        except RelayFrameDecodeError as exc:
            self.stats[f"drop_{exc.reason.value}"] += 1
            return
        sid, body = frame.stream_id, frame.body
        stream = self._streams.get(sid)
        if isinstance(body, RelayResume):
            if stream is None:
                await self._open(sid)
        elif isinstance(body, RelayHandshake):
            if stream is None:
                stream = await self._open(sid)
                if stream is None:
                    return
            await self._on_handshake(stream, body.payload)
        elif isinstance(body, RelayData):
            await self._on_data(sid, stream, body)
        elif isinstance(body, RelayReset):
            if stream is not None:
                log.info("stream %s reset by the relay: %s", sid, body.reason)
                self._forget(sid)
        # RelayAck and RelayHeartbeat: defined but unused by 0.169.0; ignored.

    async def _open(self, sid: str) -> ExecutorStream | None:
        if len(self._streams) >= MAX_STREAMS:
            await self._reset(sid, "too_many_streams")
            return None
        stream = ExecutorStream(self._identity, sid)
        self._streams[sid] = stream
        return stream

    async def _on_handshake(self, stream: ExecutorStream, payload: bytes) -> None:
        sid = stream.stream_id
        if len(self._validations) >= MAX_PENDING_VALIDATIONS:
            await self.reset_stream(sid, "too_many_validations")
            return
        try:
            hello = stream.read_hello(payload)
        except StreamProtocolError as exc:
            await self.reset_stream(sid, str(exc))
            return
        task = asyncio.create_task(self._validate(stream, hello), name=f"validate-{sid}")
        self._validations[sid] = task
        task.add_done_callback(lambda _t: self._validations.pop(sid, None))

    async def _validate(self, stream: ExecutorStream, hello: HarnessHello) -> None:
        sid = stream.stream_id
        try:
            outcome = await self._validator(sid, hello)
        except Exception:
            log.exception("validation of stream %s failed", sid)
            outcome = ValidationOutcome.RESET
        if self._streams.get(sid) is not stream or stream.phase is not StreamPhase.VALIDATING:
            return  # reset or websocket lost while the registry was thinking
        try:
            if outcome is ValidationOutcome.ACCEPT:
                message_2 = stream.accept()
                channel = _StreamChannel(self, stream)
                self._channels[sid] = channel
                await self.send_frame(encode_frame(RelayMessageFrame(sid, RelayHandshake(message_2))))
                task = asyncio.create_task(self._run_session(sid, channel), name=f"session-{sid}")
                self._sessions.add(task)
                task.add_done_callback(self._sessions.discard)
            elif outcome is ValidationOutcome.REJECT:
                message_2 = stream.reject()
                self._forget(sid)  # an authenticated refusal: no Reset follows
                await self.send_frame(encode_frame(RelayMessageFrame(sid, RelayHandshake(message_2))))
            else:
                await self.reset_stream(sid, "registry did not validate the harness key")
        except ChannelClosedError:
            self._forget(sid)

    async def _run_session(self, sid: str, channel: _StreamChannel) -> None:
        try:
            await self._make_session(channel)
        except Exception:
            log.exception("session on stream %s failed", sid)
        finally:
            if self._channels.get(sid) is channel:  # the session ended on its own: tell the harness
                await self.reset_stream(sid, "session ended")

    async def _on_data(self, sid: str, stream: ExecutorStream | None, body: RelayData) -> None:
        if stream is None:
            await self._reset(sid, "data on an unknown stream")
            return
        try:
            messages = stream.open_record(body.seq, body.payload)
        except StreamProtocolError as exc:
            await self.reset_stream(sid, str(exc))
            return
        channel = self._channels.get(sid)
        if channel is not None and messages:
            await channel.deliver(messages)

    # -- teardown -----------------------------------------------------------------------------------

    async def reset_stream(self, sid: str, why: str = "closed by the executor") -> None:
        """Forget the stream (ending its session) and tell the harness with a protocol-error Reset."""
        if sid not in self._streams:
            return
        self._forget(sid)
        await self._reset(sid, why)

    async def _reset(self, sid: str, why: str) -> None:
        log.info("resetting stream %s: %s", sid, why)
        self.stats["reset_sent"] += 1
        frame = encode_frame(RelayMessageFrame(sid, RelayReset(RELAY_RESET_REASON_PROTOCOL_ERROR)))
        with contextlib.suppress(ChannelClosedError):
            await self.send_frame(frame)

    def _forget(self, sid: str) -> None:
        stream = self._streams.pop(sid, None)
        if stream is not None:
            stream.close()
        channel = self._channels.pop(sid, None)
        if channel is not None:
            channel.end()
        task = self._validations.pop(sid, None)
        if task is not None:
            task.cancel()

    async def close(self) -> None:
        """The websocket is gone: end every stream; sessions detach and stay resumable."""
        self._closed = True
        for sid in list(self._streams):
            self._forget(sid)
        sessions = list(self._sessions)
        if sessions:
            _done, pending = await asyncio.wait(sessions, timeout=10)
            for task in pending:
                task.cancel()
