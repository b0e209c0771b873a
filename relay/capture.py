"""``--capture FILE``: every relayed websocket message as one JSON line.

Line shape: ``{"t": seconds since start, "direction": "harness->environment" | "environment->harness",
"environment_id", "stream_id", "body": frame kind or null, "size", "frame": base64 of the exact bytes}``.
Connection events are lines with an ``"event"`` key instead of ``"frame"``; every registry request is
an event ``"registry_request"`` with ``method``, ``route`` (register/connect/validate) and ``status``.
Only relayed bytes are written (ciphertext in Noise mode); bearer tokens and tickets never are.
"""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import IO

from exec_client.wire.relay_frames import RelayFrameDecodeError, RelayMessageFrame, decode_frame
from pycodex.json_types import JsonObj

__all__ = ["FrameCapture", "body_kind"]

_BODY_NAMES = {
    "RelayData": "data",
    "RelayAck": "ack",
    "RelayResume": "resume",
    "RelayReset": "reset",
    "RelayHeartbeat": "heartbeat",
    "RelayHandshake": "handshake",
}


def body_kind(frame: RelayMessageFrame) -> str:
    """The frame's body kind as the capture names it (``data``, ``reset`` ...)."""
    return _BODY_NAMES[type(frame.body).__name__]


class FrameCapture:
    """Appends JSON lines to a file; flushed per line so a crash loses at most the line in flight."""

    def __init__(self, path: Path) -> None:
        self._file: IO[str] = path.open("a", encoding="utf-8")
        self._start = time.monotonic()

    def frame(self, direction: str, environment_id: str, data: bytes) -> None:
        """Record one relayed websocket message as it crossed the relay in ``direction``."""
        try:
            frame: RelayMessageFrame | None = decode_frame(data, validate=False)
        except RelayFrameDecodeError:
            frame = None
        self._write(
            {
                "direction": direction,
                "environment_id": environment_id,
                "stream_id": frame.stream_id if frame else None,
                "body": body_kind(frame) if frame else None,
                "size": len(data),
                "frame": base64.b64encode(data).decode("ascii"),
            }
        )

    def event(self, event: str, environment_id: str, **details: object) -> None:
        """Record a connection or registry event with its ``details``."""
        self._write({"event": event, "environment_id": environment_id, **details})

    def _write(self, record: JsonObj) -> None:
        if self._file.closed:
            return
        line = {"t": round(time.monotonic() - self._start, 4), **record}
        self._file.write(json.dumps(line, separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the capture file; later records are dropped."""
        self._file.close()
