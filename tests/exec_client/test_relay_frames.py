"""RelayMessageFrame codec: captured Codex frames, prost encoding rules, validation drops, malformed input."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from exec_client.wire.relay_frames import (
    DropReason,
    RelayAck,
    RelayBody,
    RelayData,
    RelayFrameDecodeError,
    RelayHandshake,
    RelayHeartbeat,
    RelayMessageFrame,
    RelayReset,
    RelayResume,
    data_frames,
    decode_frame,
    encode_frame,
)
from tests.support.paths import TRANSCRIPTS

VECTORS = json.loads((Path(__file__).parent / "noise_vectors_codex_0169.json").read_text())
SID = "69c0bf81-2afb-461a-9546-66f3f162439e"
HEAD = bytes.fromhex("08011224") + SID.encode()


def _jsonl(name: str) -> list[dict[str, Any]]:
    path = TRANSCRIPTS / name
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# -- captured frames -----------------------------------------------------------------------------

_COMPLETE_FRAMES = [
    (f"{side}:{key}", VECTORS[side][key])
    for side in ("harness", "executor")
    for key in VECTORS[side]
    if key.endswith("_frame_from_codex")
]


@pytest.mark.parametrize(
    ("raw_b64"), [raw for _, raw in _COMPLETE_FRAMES], ids=[n for n, _ in _COMPLETE_FRAMES]
)
def test_complete_codex_frame_decodes_and_reencodes_byte_for_byte(raw_b64: str) -> None:
    raw = base64.b64decode(raw_b64)
    assert encode_frame(decode_frame(raw)) == raw


_BODY_KINDS = {"resume": RelayResume, "handshake": RelayHandshake, "data": RelayData, "reset": RelayReset}
_CAPTURED = [
    (f"{name}:{entry['i']}", entry)
    for name in ("relay_frames.jsonl", "relay_frames_env_drop.jsonl")
    for entry in _jsonl(name)
    if entry.get("ws_type") == "binary"
]


def _rebuild(relay: dict[str, Any]) -> RelayMessageFrame:
    """A frame with every captured field; payload bytes past the captured head are filler."""
    payload = b""
    if "payload_len" in relay:
        head = bytes.fromhex(relay["payload_head"])
        payload = (head + b"\xa5" * relay["payload_len"])[: relay["payload_len"]]
    kind = relay["body"]
    body: RelayBody
    if kind == "data":
        body = RelayData(relay["seq"], payload, relay["segment_index"], relay["segment_count"])
    elif kind == "handshake":
        body = RelayHandshake(payload)
    elif kind == "reset":
        body = RelayReset(relay["reason"])
    else:
        body = _BODY_KINDS[kind]()
    return RelayMessageFrame(relay["stream_id"], body, relay["version"], relay["ack"], relay["ack_bits"])


def _field_order(raw: bytes) -> list[int]:
    numbers, pos = [], 0
    while pos < len(raw):
        key = raw[pos]  # every top-level key and length here is small; lengths may be multi-byte varints
        pos += 1
        numbers.append(key >> 3)
        if key & 7 == 0:
            while raw[pos] & 0x80:
                pos += 1
            pos += 1
        else:
            length, shift = 0, 0
            while True:
                length |= (raw[pos] & 0x7F) << shift
                shift += 7
                pos += 1
                if not raw[pos - 1] & 0x80:
                    break
            pos += length
    return numbers


@pytest.mark.skipif(not _CAPTURED, reason="reference transcripts not present")
@pytest.mark.parametrize("entry", [e for _, e in _CAPTURED], ids=[n for n, _ in _CAPTURED])
def test_captured_frame_rebuilds_to_its_recorded_size_head_and_field_order(entry: dict[str, Any]) -> None:
    """relay_frames*.jsonl keep size, first 24 bytes, fields and a payload head, not whole payloads."""
    frame = _rebuild(entry["relay"])
    raw = encode_frame(frame)
    assert len(raw) == entry["size"]
    assert raw[:24].hex() == entry["first_bytes"]
    assert _field_order(raw) == entry["relay"]["field_order"]
    assert decode_frame(raw) == frame
    assert encode_frame(decode_frame(raw)) == raw


def test_transcripts_hold_the_expected_number_of_binary_frames() -> None:
    if not _CAPTURED:
        pytest.skip("reference transcripts not present")
    assert len(_CAPTURED) == 35 + 54


def _raw_entries() -> list[dict[str, Any]]:
    return [
        e
        for name in (
            "interop_executor.jsonl",
            "interop_executor_reconnect.jsonl",
            "legacy_harness_probe.jsonl",
        )
        for e in _jsonl(name)
        if "raw" in e or "raw_head" in e
    ]


@pytest.mark.skipif(not _raw_entries(), reason="reference transcripts not present")
def test_raw_frames_in_interop_and_legacy_transcripts_match_our_encoding() -> None:
    checked_data = 0
    for entry in _raw_entries():
        if "raw" in entry:  # complete resume frames
            raw = bytes.fromhex(entry["raw"])
            assert encode_frame(decode_frame(raw)) == raw
            assert decode_frame(raw) == RelayMessageFrame(entry["stream_id"], RelayResume())
            continue
        head = bytes.fromhex(entry["raw_head"])
        if entry["body"] == "resume":
            assert encode_frame(RelayMessageFrame(entry["stream_id"], RelayResume())) == head
        else:  # legacy cleartext relay: the payload is the compact JSON itself
            payload = json.dumps(entry["json"], separators=(",", ":"), ensure_ascii=False).encode()
            if b"~" in payload or b"<tmp>" in payload:
                continue  # paths were redacted after capture, so the lengths no longer match
            frame = RelayMessageFrame(entry["stream_id"], RelayData(entry["seq"], payload))
            assert encode_frame(frame).startswith(head)
            checked_data += 1
    assert checked_data >= 5


# -- encoding templates (exec_server.md §6.2) ----------------------------------------------------


def test_resume_frame_matches_the_documented_42_byte_template() -> None:
    assert encode_frame(RelayMessageFrame(SID, RelayResume())) == HEAD + b"\x3a\x00"


def test_reset_frame_matches_the_documented_70_byte_template() -> None:
    raw = encode_frame(RelayMessageFrame(SID, RelayReset("noise_relay_protocol_error")))
    assert raw == HEAD + b"\x42\x1c\x0a\x1a" + b"noise_relay_protocol_error"
    assert len(raw) == 70


def test_data_frame_omits_zero_seq_and_segment_index() -> None:
    payload = b"\x01" * 117
    assert (
        encode_frame(RelayMessageFrame(SID, RelayData(0, payload)))
        == HEAD + b"\x2a\x79\x18\x01\x22\x75" + payload
    )
    with_seq = encode_frame(RelayMessageFrame(SID, RelayData(300, b"x")))
    assert with_seq == HEAD + b"\x2a\x08\x08\xac\x02\x18\x01\x22\x01x"


def test_handshake_frame_uses_multi_byte_lengths() -> None:
    payload = b"\x02" * 3593
    raw = encode_frame(RelayMessageFrame(SID, RelayHandshake(payload)))
    assert raw[40:46] == b"\x52\x8c\x1c\x0a\x89\x1c"  # 3596 = 8c 1c, 3593 = 89 1c
    assert len(raw) == 3639


@pytest.mark.parametrize(
    ("body", "tail"),
    [(RelayAck(), b"\x32\x00"), (RelayHeartbeat(), b"\x4a\x00"), (RelayResume(7), b"\x3a\x02\x08\x07")],
    ids=["ack", "heartbeat", "resume-next-seq"],
)
def test_empty_and_small_bodies_are_always_written(body: RelayBody, tail: bytes) -> None:
    raw = encode_frame(RelayMessageFrame(SID, body))
    assert raw == HEAD + tail
    assert decode_frame(raw).body == body


def test_ack_fields_round_trip() -> None:
    frame = RelayMessageFrame(SID, RelayHeartbeat(), ack=5, ack_bits=0xFFFFFFFF)
    assert decode_frame(encode_frame(frame)) == frame


def test_encoding_matches_the_protobuf_runtime() -> None:
    """Independent check: the same frames serialized by google.protobuf from a dynamic schema."""
    pytest.importorskip("google.protobuf")
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fd = descriptor_pb2.FileDescriptorProto(name="relay.proto", package="r", syntax="proto3")
    f = descriptor_pb2.FieldDescriptorProto
    u32, s, b, m = f.TYPE_UINT32, f.TYPE_STRING, f.TYPE_BYTES, f.TYPE_MESSAGE

    def message(name: str, fields: list[tuple[str, int, int, str]], oneof: bool = False) -> None:
        d = fd.message_type.add(name=name)
        if oneof:
            d.oneof_decl.add(name="body")
        for field_name, number, kind, type_name in fields:
            fld = d.field.add(name=field_name, number=number, type=kind, label=f.LABEL_OPTIONAL)
            if type_name:
                fld.type_name = f".r.{type_name}"
                if oneof:
                    fld.oneof_index = 0

    message("D", [("seq", 1, u32, ""), ("si", 2, u32, ""), ("sc", 3, u32, ""), ("p", 4, b, "")])
    message("E", [])
    message("R", [("n", 1, u32, "")])
    message("X", [("reason", 1, s, "")])
    message("H", [("p", 1, b, "")])
    message(
        "F",
        [("v", 1, u32, ""), ("sid", 2, s, ""), ("ack", 3, u32, ""), ("bits", 4, u32, "")]
        + [(n, num, m, t) for n, num, t in [("d", 5, "D"), ("a", 6, "E"), ("r", 7, "R"), ("x", 8, "X"),
                                             ("hb", 9, "E"), ("h", 10, "H")]],
        oneof=True,
    )  # fmt: skip
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("r.F"))

    cases: list[tuple[RelayMessageFrame, dict[str, Any]]] = [
        (RelayMessageFrame(SID, RelayResume()), {"r": {}}),
        (RelayMessageFrame(SID, RelayData(5, b"abc")), {"d": {"seq": 5, "sc": 1, "p": b"abc"}}),
        (RelayMessageFrame("s", RelayReset("bye"), ack=3), {"ack": 3, "x": {"reason": "bye"}}),
        (RelayMessageFrame("s", RelayHandshake(b"\x00" * 300)), {"h": {"p": b"\x00" * 300}}),
        (RelayMessageFrame("s", RelayAck(), ack_bits=2**32 - 1), {"bits": 2**32 - 1, "a": {}}),
        (RelayMessageFrame("s", RelayHeartbeat()), {"hb": {}}),
    ]
    for frame, fields in cases:
        ref = cls(v=frame.version, sid=frame.stream_id)
        for name, value in fields.items():
            if isinstance(value, dict):
                getattr(ref, name).SetInParent()
                for sub_name, sub_value in value.items():
                    setattr(getattr(ref, name), sub_name, sub_value)
            else:
                setattr(ref, name, value)
        assert encode_frame(frame) == ref.SerializeToString(deterministic=True), frame


# -- validation (the executor silently drops these) ----------------------------------------------


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        (RelayMessageFrame(SID, RelayResume(), version=2), DropReason.UNSUPPORTED_VERSION),
        (RelayMessageFrame(SID, RelayResume(), version=0), DropReason.UNSUPPORTED_VERSION),
        (RelayMessageFrame("", RelayResume()), DropReason.INVALID_STREAM_ID),
        (RelayMessageFrame(" sid", RelayResume()), DropReason.INVALID_STREAM_ID),
        (RelayMessageFrame("sid\n", RelayResume()), DropReason.INVALID_STREAM_ID),
        (RelayMessageFrame("x" * 129, RelayResume()), DropReason.INVALID_STREAM_ID),
        (RelayMessageFrame(SID, RelayData(0, b"x", segment_count=2)), DropReason.SEGMENTED_DATA),
        (RelayMessageFrame(SID, RelayData(0, b"x", segment_index=1)), DropReason.SEGMENTED_DATA),
        (RelayMessageFrame(SID, RelayData(0, b"x", segment_count=0)), DropReason.SEGMENTED_DATA),
        (RelayMessageFrame(SID, RelayData(3, b"")), DropReason.EMPTY_DATA_PAYLOAD),
        (RelayMessageFrame(SID, RelayReset("")), DropReason.INVALID_RESET_REASON),
        (RelayMessageFrame(SID, RelayReset("r" * 257)), DropReason.INVALID_RESET_REASON),
        (RelayMessageFrame(SID, RelayHandshake(b"")), DropReason.EMPTY_HANDSHAKE_PAYLOAD),
    ],
    ids=lambda x: x.value if isinstance(x, DropReason) else "",
)
def test_frame_failing_executor_validation_raises_a_countable_reason(
    frame: RelayMessageFrame, reason: DropReason
) -> None:
    raw = encode_frame(frame)
    with pytest.raises(RelayFrameDecodeError) as info:
        decode_frame(raw)
    assert info.value.reason is reason
    assert decode_frame(raw, validate=False) == frame


def test_limits_that_are_still_accepted() -> None:
    for frame in (
        RelayMessageFrame("x" * 128, RelayResume()),
        RelayMessageFrame(SID, RelayReset("r" * 256)),
        RelayMessageFrame(SID, RelayData(2**32 - 1, b"x")),
    ):
        assert decode_frame(encode_frame(frame)) == frame


# -- malformed wire bytes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"", DropReason.MISSING_BODY),
        (b"\x08\x01\x12\x03sid", DropReason.MISSING_BODY),
        (b"\x08", DropReason.TRUNCATED),
        (b"\x08\x81", DropReason.TRUNCATED),
        (b"\x12\x05ab", DropReason.TRUNCATED),
        (HEAD + b"\x3a\x05\x08", DropReason.TRUNCATED),
        (b"\x0b", DropReason.BAD_WIRE_TYPE),
        (b"\x00\x01", DropReason.BAD_WIRE_TYPE),
        (b"\x0a\x01x", DropReason.BAD_WIRE_TYPE),
        (b"\x10\x01" + HEAD[2:] + b"\x3a\x00", DropReason.BAD_WIRE_TYPE),
        (b"\x08" + b"\xff" * 10 + b"\x01", DropReason.BAD_VARINT),
        (b"\x08\x80\x80\x80\x80\x10" + HEAD[2:] + b"\x3a\x00", DropReason.VALUE_OUT_OF_RANGE),
        (b"\x08\x01\x12\x02\xc3\x28\x3a\x00", DropReason.INVALID_UTF8),
        (HEAD + b"\x2a\x02\x09\x00", DropReason.TRUNCATED),
    ],
    ids=[
        "empty", "no-body", "key-only", "cut-varint", "cut-bytes", "cut-body", "group", "field-zero",
        "version-as-bytes", "sid-as-varint", "long-varint", "u32-overflow", "bad-utf8", "cut-fixed64",
    ],
)  # fmt: skip
def test_malformed_bytes_raise_a_specific_reason(raw: bytes, reason: DropReason) -> None:
    with pytest.raises(RelayFrameDecodeError) as info:
        decode_frame(raw, validate=False)
    assert info.value.reason is reason
    assert reason.value in str(info.value)


def test_unknown_fields_are_skipped_like_prost() -> None:
    unknown = b"\x58\x05" + b"\x65\x01\x02\x03\x04" + b"\x69" + bytes(8) + b"\x72\x02hi"  # fields 11..14
    frame = decode_frame(HEAD + unknown + b"\x3a\x04\x08\x02\x10\x07")
    assert frame == RelayMessageFrame(SID, RelayResume(2))


def test_repeated_fields_follow_prost_merge_rules() -> None:
    # Last scalar wins; the same body kind twice merges; another kind replaces it.
    merged = decode_frame(HEAD + b"\x2a\x02\x08\x04" + b"\x2a\x05\x18\x01\x22\x01z" + b"\x08\x01")
    assert merged.body == RelayData(4, b"z")
    replaced = decode_frame(HEAD + b"\x2a\x05\x18\x01\x22\x01z" + b"\x3a\x00")
    assert replaced.body == RelayResume()


def test_encoder_refuses_values_beyond_uint32() -> None:
    with pytest.raises(ValueError, match="uint32"):
        encode_frame(RelayMessageFrame(SID, RelayData(2**32, b"x")))


def test_data_frames_are_byte_for_byte_what_encode_frame_writes() -> None:
    @dataclass
    class Sealed:
        seq: int
        ciphertext: bytes

    records = [
        Sealed(0, b""),
        Sealed(1, b"abc"),
        Sealed(300, bytes(range(256)) * 300),
        Sealed(2**32 - 1, b"y"),
    ]
    for stream_id in ("s", "stream-\u00e9-" + "x" * 100):
        assert data_frames(stream_id, records) == [
            encode_frame(RelayMessageFrame(stream_id, RelayData(seq=r.seq, payload=r.ciphertext)))
            for r in records
        ]
