"""The harness's own capture reader: frames decode independently of the product, leaks are caught."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from compat_tests.support.relay_capture import (
    FrameError,
    assert_relay_data_is_encrypted,
    base64_forms,
    decode_relay_frame,
    registry_route_counts,
)


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _len_field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _data_frame(stream_id: str, payload: bytes, seq: int = 1) -> bytes:
    data = _varint(1 << 3) + _varint(seq) + _len_field(4, payload)
    return _varint(1 << 3) + _varint(1) + _len_field(2, stream_id.encode()) + _len_field(5, data)


def _write_capture(path: Path, frames: list[tuple[str, bytes]], routes: tuple[str, ...] = ()) -> Path:
    lines: list[dict[str, object]] = [
        {"direction": d, "frame": base64.b64encode(f).decode()} for d, f in frames
    ]
    lines += [{"event": "registry_request", "environment_id": "e", "route": r, "status": 200} for r in routes]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_data_frame_decodes_to_its_stream_and_payload() -> None:
    frame = decode_relay_frame(_data_frame("s1", b"\x01cipher"), "harness->environment")
    assert (frame.stream_id, frame.body, frame.payload) == ("s1", "data", b"\x01cipher")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (_data_frame("s1", b"x")[:-1], "runs past the end"),
        (_len_field(2, b"s1") + _len_field(5, b""), "version 0"),
        (_varint(1 << 3) + _varint(1) + _len_field(5, b""), "without a stream id"),
        (_varint(1 << 3) + _varint(1) + _len_field(2, b"s"), "0 bodies"),
    ],
    ids=["truncated", "no-version", "no-stream-id", "no-body"],
)
def test_a_malformed_frame_is_refused_with_the_reason(raw: bytes, message: str) -> None:
    with pytest.raises(FrameError, match=message):
        decode_relay_frame(raw)


def test_plaintext_in_a_data_payload_fails_the_encryption_check(tmp_path: Path) -> None:
    frames = [(d, _data_frame("s1", b"opaque-%d" % i)) for i, d in enumerate(["harness->environment",
              "environment->harness"] * 2)]  # fmt: skip
    clean = _write_capture(tmp_path / "clean.jsonl", frames)
    assert_relay_data_is_encrypted(clean, ("initialize",))
    leaky = _write_capture(tmp_path / "leaky.jsonl", [*frames, ("harness->environment",
                           _data_frame("s1", b'{"method":"initialize"}'))])  # fmt: skip
    with pytest.raises(AssertionError, match="initialize"):
        assert_relay_data_is_encrypted(leaky, ("initialize",))


def test_registry_routes_are_counted_from_capture_events(tmp_path: Path) -> None:
    path = _write_capture(tmp_path / "c.jsonl", [], ("register", "connect", "validate", "connect"))
    assert registry_route_counts(path) == {"register": 1, "connect": 2, "validate": 1}


@pytest.mark.parametrize("prefix", [b"", b"a", b"ab", b"abc", b"abcd"], ids=lambda p: f"offset-{len(p)}")
def test_a_base64_encoded_marker_is_found_at_every_alignment(prefix: bytes) -> None:
    encoded = base64.b64encode(prefix + b"relay-canary-output" + b"tail").decode()
    assert any(form in encoded for form in base64_forms("relay-canary-output"))
