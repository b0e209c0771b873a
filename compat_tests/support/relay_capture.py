"""Reading a ``pycodex relay --capture`` file without the product: frames, data payloads, registry hits.

The capture holds one JSON line per relayed websocket message (``"frame"``: base64 of the exact
bytes) or per event (``"event"``, including ``"registry_request"`` with its ``route``). The frames
are ``codex.exec_server.relay.v1.RelayMessageFrame`` protobufs, decoded here by a small independent
reader of the protobuf wire format, so that a wrong encoder in the product cannot hide behind its own
decoder.
"""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "CaptureFrame",
    "FrameError",
    "assert_relay_data_is_encrypted",
    "base64_forms",
    "decode_relay_frame",
    "handshake_divergence",
    "harness_streams",
    "read_capture",
    "registry_requests",
    "registry_route_counts",
    "stream_divergence",
]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: Words of a stderr line that says why a Noise transport dropped a stream (not merely that it did).
_TRANSPORT_FAILURE = ("decrypt", "authentication failed", "aes-gcm", "cipher error", "bad record")
# RelayMessageFrame: 1 version, 2 stream_id, 3 ack, 4 ack_bits, 5..10 the body oneof.
_BODIES = {5: "data", 6: "ack", 7: "resume", 8: "reset", 9: "heartbeat", 10: "handshake"}
_DATA_PAYLOAD = 4  # RelayData.payload


class FrameError(AssertionError):
    """A captured message is not a well-formed relay frame."""


@dataclass(frozen=True)
class CaptureFrame:
    direction: str
    stream_id: str
    body: str
    #: RelayData payload (ciphertext when the peers speak Noise); empty for other bodies.
    payload: bytes


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    for _ in range(10):
        if pos >= len(data):
            raise FrameError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
    raise FrameError("varint longer than 10 bytes")


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """(field number, value) pairs; LEN fields as bytes, scalars as int."""
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    for _ in range(len(data) + 1):
        if pos == len(data):
            return out
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise FrameError("field number 0")
        if wire == 0:
            value, pos = _varint(data, pos)
            out.append((number, value))
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise FrameError(f"field {number} runs past the end")
            out.append((number, data[pos : pos + length]))
            pos += length
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            if pos + size > len(data):
                raise FrameError(f"field {number} runs past the end")
            out.append((number, int.from_bytes(data[pos : pos + size], "little")))
            pos += size
        else:
            raise FrameError(f"unsupported wire type {wire}")
    raise FrameError("unreachable")


def decode_relay_frame(data: bytes, direction: str = "") -> CaptureFrame:
    """Decode one frame; raises :class:`FrameError` unless it is version 1 with a stream id and one body."""
    version, stream_id, bodies = 0, "", []
    for number, value in _fields(data):
        if number == 1 and isinstance(value, int):
            version = value
        elif number == 2 and isinstance(value, bytes):
            stream_id = value.decode("utf-8")
        elif number in _BODIES and isinstance(value, bytes):
            bodies.append((_BODIES[number], value))
    if version != 1:
        raise FrameError(f"relay frame version {version}, expected 1")
    if not stream_id:
        raise FrameError("relay frame without a stream id")
    if len(bodies) != 1:
        raise FrameError(f"relay frame with {len(bodies)} bodies, expected exactly one")
    kind, raw = bodies[0]
    payload = b""
    if kind == "data":
        for number, value in _fields(raw):
            if number == _DATA_PAYLOAD and isinstance(value, bytes):
                payload = value
    return CaptureFrame(direction, stream_id, kind, payload)


def read_capture(path: Path) -> tuple[list[CaptureFrame], list[dict[str, Any]]]:
    """All frames (decoded) and all event lines of a capture file."""
    frames: list[CaptureFrame] = []
    events: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "frame" in record:
            frames.append(decode_relay_frame(base64.b64decode(record["frame"]), record.get("direction", "")))
        elif "event" in record:
            events.append(record)
    return frames, events


def registry_requests(path: Path) -> list[tuple[str, int]]:
    """(route, HTTP status) of every registry request, in order; route is register/connect/validate."""
    _, events = read_capture(path)
    return [(e["route"], e["status"]) for e in events if e["event"] == "registry_request"]


def registry_route_counts(path: Path) -> Counter[str]:
    """How often each registry route was requested."""
    return Counter(route for route, _ in registry_requests(path))


def harness_streams(path: Path) -> list[tuple[str, int, bool]]:
    """(stream id, data frames, reset seen) of every harness connection, in connection order."""
    frames, events = read_capture(path)
    streams = [e["stream_id"] for e in events if e["event"] == "harness_connected" and "stream_id" in e]
    return [
        (
            stream,
            sum(f.stream_id == stream and f.body == "data" for f in frames),
            any(f.stream_id == stream and f.body == "reset" for f in frames),
        )
        for stream in streams
    ]


def base64_forms(marker: str) -> tuple[str, ...]:
    """What ``marker`` looks like inside base64 text (process output travels base64-encoded in JSON),
    at each of the three byte alignments: the part of the encoding that depends on the marker only."""
    forms = []
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + marker.encode()).decode()
        forms.append(encoded[4 if shift else 0 : -4])
    return tuple(forms)


def assert_relay_data_is_encrypted(path: Path, markers: tuple[str, ...], *, min_data_frames: int = 4) -> None:
    """Every captured frame decodes, data flowed both ways, and no data payload holds any marker."""
    frames, _ = read_capture(path)
    data = [f for f in frames if f.body == "data"]
    assert len(data) >= min_data_frames, f"only {len(data)} data frames were relayed"
    assert {f.direction for f in data} == {"harness->environment", "environment->harness"}
    for frame in data:
        leaked = [m for m in markers if m.encode() in frame.payload]
        assert not leaked, f"plaintext {leaked} in a relayed data frame ({frame.direction})"


def _frame_streams(relay_frames: str) -> dict[str, list[tuple[str, str]]]:
    """``relay-frames.txt`` (``direction stream body size`` lines) as stream -> [(direction, body)]."""
    streams: dict[str, list[tuple[str, str]]] = {}
    for line in relay_frames.splitlines():
        parts = line.split()
        if len(parts) == 4 and not line.startswith("#"):
            streams.setdefault(parts[1], []).append((parts[0], parts[2]))
    return streams


def _stderr_hint(stderr: dict[str, str], words: tuple[str, ...]) -> str:
    """``; NAME: message`` of the first stderr line (in ``stderr``'s order) holding one of ``words``; OTel
    event records (``event.name=...``) only when no plain line does."""
    found: list[tuple[bool, str]] = []
    for name, text in stderr.items():
        for raw in text.splitlines():
            line = _ANSI.sub("", raw).strip()
            if line.startswith("#") or not any(w in line.lower() for w in words):
                continue
            # Drop the log prefix (date, time, level, target) before the message itself.
            message = re.sub(r"^(\S+\s+){1,3}?\S+:\s+", "", line, count=1)
            message = message if len(message) <= 160 else message[:157] + "..."
            found.append(("event.name=" in line, f"; {name}: {message}"))
    return min(found, key=lambda f: f[0])[1] if found else ""


def handshake_divergence(relay_frames: str, stderr: dict[str, str]) -> str | None:
    """The Noise handshake message at which the first relay stream failed and which side gave up, from
    ``relay-frames.txt``; ``stderr`` (process name -> log text) adds the first line about the handshake."""
    streams = _frame_streams(relay_frames)
    if not streams:
        return None
    stream, frames = next(iter(streams.items()))
    to_exec = [body for direction, body in frames if direction == "harness->environment"]
    to_app = [body for direction, body in frames if direction == "environment->harness"]
    if "handshake" not in to_exec or "data" in to_exec:
        return None
    tried = f" ({len(streams)} streams tried)" if len(streams) > 1 else ""
    if "handshake" not in to_app:
        answer = "reset the stream" if "reset" in to_app else "never answered"
        order = sorted(stderr, key=lambda name: name != "exec-server")
        stage = (
            f"Noise handshake failed at message 1 (app-server -> exec-server): the exec-server {answer}"
            f" instead of sending message 2 (prologue or keys differ?){tried}"
        )
    else:
        answer = "reset the stream" if "reset" in to_exec else "sent nothing"
        order = sorted(stderr, key=lambda name: name != "app-server")
        stage = (
            f"Noise handshake failed at message 2 (exec-server -> app-server): the app-server {answer}"
            f" after it (prologue or keys differ?){tried}"
        )
    hint = _stderr_hint({name: stderr[name] for name in order}, ("handshake",))
    return stage + (hint or f"; stream {stream}")


def stream_divergence(relay_frames: str, stderr: dict[str, str]) -> str | None:
    """A first relay stream that carried data and then broke, where a process's stderr says the Noise
    transport failed (a reset that merely follows another failure is not the first divergence)."""
    streams = _frame_streams(relay_frames)
    if len(streams) < 2:
        return None
    frames = next(iter(streams.values()))
    data = sum(body == "data" for _, body in frames)
    hint = _stderr_hint(stderr, _TRANSPORT_FAILURE)
    if not data or not hint:
        return None
    how = "reset" if any(body == "reset" for _, body in frames) else "dropped"
    return (
        f"app-server opened {len(streams)} relay streams: the first was {how} after {data} data frames{hint}"
    )
