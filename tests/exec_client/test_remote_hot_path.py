"""The remote client's output fast paths answer exactly as the general decoders do, or step aside."""

from __future__ import annotations

import json
import random

import pytest

from exec_client.output_fast import output_params
from exec_client.wire.noise.framing import MessageReassembler, frame_messages
from exec_client.wire.noise.transport import SealedRecord
from exec_client.wire.relay_frames import (
    RelayData,
    RelayFrameDecodeError,
    RelayMessageFrame,
    RelayReset,
    data_frame_head,
    data_frames,
    decode_data_frame,
    decode_frame,
    encode_frame,
)
from exec_client.wire.relay_wire import key_bytes

SID = "69c0bf81-2afb-461a-9546-66f3f162439e"
HEAD = data_frame_head(SID)


def _general(raw: bytes) -> tuple[int, bytes] | None:
    try:
        frame = decode_frame(raw)
    except RelayFrameDecodeError:
        return None
    if frame.stream_id != SID or not isinstance(frame.body, RelayData):
        return None
    return frame.body.seq, frame.body.payload


@pytest.mark.parametrize("seq", [0, 1, 127, 128, 300, 2**21, 2**32 - 1])
@pytest.mark.parametrize("size", [1, 127, 128, 61456])
def test_prost_data_frames_take_the_fast_path_with_the_general_answer(seq: int, size: int) -> None:
    payload = bytes(random.Random(seq + size).randbytes(size))
    for raw in (encode_frame(RelayMessageFrame(SID, RelayData(seq, payload))),
                *data_frames(SID, [SealedRecord(seq, payload)])):  # fmt: skip
        fast = decode_data_frame(raw, HEAD)
        assert fast is not None
        assert (fast[0], bytes(fast[1])) == _general(raw)


@pytest.mark.parametrize(
    "frame",
    [
        RelayMessageFrame(SID, RelayData(5, b"x"), ack=1),
        RelayMessageFrame(SID, RelayData(5, b"x"), ack_bits=3),
        RelayMessageFrame(SID, RelayData(5, b"x", segment_index=1, segment_count=2)),
        RelayMessageFrame(SID, RelayData(5, b"x", segment_count=2)),
        RelayMessageFrame(SID, RelayData(5, b"")),
        RelayMessageFrame(SID, RelayData(5, b"x"), version=2),
        RelayMessageFrame("other-stream", RelayData(5, b"x")),
        RelayMessageFrame(SID, RelayReset("bye")),
    ],
)
def test_other_frames_are_left_to_the_general_decoder(frame: RelayMessageFrame) -> None:
    assert decode_data_frame(encode_frame(frame), HEAD) is None


def test_odd_layouts_are_left_to_the_general_decoder() -> None:
    good = encode_frame(RelayMessageFrame(SID, RelayData(5, b"payload")))
    body_key = key_bytes(5, 2)
    odd = [
        good[:-1],  # truncated
        good + key_bytes(5, 2) + b"\x00",  # a second body: prost merges it
        good + bytes([0x18, 0x07]),  # a trailing ack after the body
        HEAD + b"\x0b" + bytes([0x08, 0x05]) + bytes([0x22, 0x07]) + b"payload",  # no segment_count
        HEAD + b"\x0f" + bytes([0x08, 0x05, 0x10, 0x00, 0x18, 0x01, 0x22, 0x07]) + b"payload",  # index written
        HEAD + b"\x11" + bytes([0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0x18, 0x01, 0x22, 0x07]) + b"payload",
        HEAD[: -len(body_key)] + bytes([0x78, 0x01]) + body_key + good[len(HEAD) :],  # an unknown field
    ]
    for raw in odd:
        assert decode_data_frame(raw, HEAD) is None, raw.hex()


def _output(**params: object) -> bytes:
    return json.dumps({"method": "process/output", "params": params}, separators=(",", ":")).encode()


def test_a_process_output_notification_yields_its_params() -> None:
    raw = _output(processId="p1", seq=3, stream="stdout", chunk="YQ==")
    assert output_params(raw) == {"processId": "p1", "seq": 3, "stream": "stdout", "chunk": "YQ=="}


@pytest.mark.parametrize(
    "raw",
    [
        b'{"method":"process/output","id":1,"params":{"seq":1}}',  # a request
        b'{"method":"process/exited","params":{"seq":1}}',
        b'{"method":"process/output","params":[1]}',
        b'{"method":"process/output"}',
        b'{"method":"process/output","params":{"seq":1}',  # cut off
        b'{"method":"process/output","params":{"seq":123456789012345678901234567890}}',  # beyond 64 bits
        b'{"method":"process/output","params":{"seq":1.0}}',
        b'{"method":"process/output","params":{"seq":1,"chunk":"\\ud800"}}',  # lone surrogate
        b'{"method":"process/output","params":{"seq":1,"x":NaN}}',
        b'\xef\xbb\xbf{"method":"process/output","params":{"seq":1}}',  # byte-order mark
        b'{"jsonrpc":"2.0","padding":"......................","method":"process/output","params":{"seq":1}}',
    ],
)
def test_anything_unusual_takes_the_general_path(raw: bytes) -> None:
    assert output_params(raw) is None


def test_reassembly_from_any_split_returns_every_message() -> None:
    rng = random.Random(7)
    messages = [rng.randbytes(rng.randrange(1, 20_000)) for _ in range(60)]
    framed = frame_messages(messages)
    for _ in range(20):
        reassembler, got, pos = MessageReassembler(), [], 0
        while pos < len(framed):
            step = rng.choice([1, 3, 4, 5, 1000, 30_000, 61_440])
            got += reassembler.push(framed[pos : pos + step])
            pos += step
        assert got == messages
        assert reassembler.buffered == 0
