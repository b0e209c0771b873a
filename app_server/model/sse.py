"""A pure Server-Sent Events decoder (WHATWG event-stream rules), with no IO.

Bytes go in through `feed()`, complete events come out. `finish()` flushes the end of the stream and
says whether it was cut off in the middle of an event, which the Responses client reports as a
disconnect.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SseEvent:
    """One dispatched event. `event` defaults to "message" as the spec says."""

    event: str = "message"
    data: str = ""
    id: str | None = None
    retry: int | None = None


class SseError(ValueError):
    """The stream broke a limit we enforce (an event larger than `max_event_bytes`)."""


@dataclass
class _Pending:
    event: str | None = None
    data: list[str] = field(default_factory=list)
    id: str | None = None
    retry: int | None = None
    touched: bool = False  # a field line arrived since the last dispatch


class SseDecoder:
    """Incremental decoder: `feed(chunk) -> list[SseEvent]`, then `finish() -> list[SseEvent]`.

    Handles LF, CR and CRLF line ends (also a CRLF split across chunks), a UTF-8 character split across
    chunks, comment lines, multi-line `data`, and a leading BOM.
    """

    def __init__(self, max_event_bytes: int = 16 * 1024 * 1024) -> None:
        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._pending = _Pending()
        self._pending_size = 0
        self._max_event_bytes = max_event_bytes
        self._saw_cr = False  # last chunk ended with CR: a following LF belongs to it
        self._started = False
        self._truncated = False
        self._finished = False

    @property
    def truncated(self) -> bool:
        """True after `finish()` if the stream ended inside an event (no blank line after it)."""
        return self._truncated

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """The events ``chunk`` completes; raises SseError after ``finish()`` or for an oversized event."""
        if self._finished:
            raise SseError("feed() after finish()")
        text = self._text.decode(chunk)
        if not self._started and text:
            self._started = True
            text = text.removeprefix("\ufeff")
        if not text:
            return []  # an empty chunk or half a UTF-8 character: keep the pending CR state
        if self._saw_cr and text.startswith("\n"):
            text = text[1:]
        self._saw_cr = False
        self._buffer += text
        return self._drain_lines()

    def finish(self) -> list[SseEvent]:
        """End of stream. A half line or an undispatched event means the stream was cut off."""
        if self._finished:
            return []
        self._buffer += self._text.decode(b"", final=True)
        self._finished = True
        # Per the spec an unterminated event is discarded; we only record that it happened.
        self._truncated = bool(self._buffer) or self._pending.touched
        self._buffer = ""
        self._pending = _Pending()
        return []

    def _drain_lines(self) -> list[SseEvent]:
        events: list[SseEvent] = []
        buffer = self._buffer
        start = 0
        while True:
            cr = buffer.find("\r", start)
            lf = buffer.find("\n", start)
            if cr == -1 and lf == -1:
                break
            if cr != -1 and (lf == -1 or cr < lf):
                end = cr
                if cr + 1 < len(buffer):
                    step = 2 if buffer[cr + 1] == "\n" else 1
                else:
                    # A CR at the very end: the LF may come in the next chunk.
                    step = 1
                    self._saw_cr = True
            else:
                end, step = lf, 1
            event = self._line(buffer[start:end])
            if event is not None:
                events.append(event)
            start = end + step
        self._buffer = buffer[start:]
        if len(self._buffer) + self._pending_size > self._max_event_bytes:
            raise SseError(f"SSE event larger than {self._max_event_bytes} bytes")
        return events

    def _line(self, line: str) -> SseEvent | None:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None  # comment / keep-alive
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        pending = self._pending
        pending.touched = True
        if name == "data":
            pending.data.append(value)
            self._pending_size += len(value) + 1
            if self._pending_size > self._max_event_bytes:
                raise SseError(f"SSE event larger than {self._max_event_bytes} bytes")
        elif name == "event":
            pending.event = value
        elif name == "id":
            if "\0" not in value:
                pending.id = value
        elif name == "retry":
            if value.isdigit():
                pending.retry = int(value)
        # other field names are ignored, as the spec says
        return None

    def _dispatch(self) -> SseEvent | None:
        pending = self._pending
        self._pending = _Pending()
        self._pending_size = 0
        if not pending.data:
            # The spec drops an event that had no data line at all.
            return None
        return SseEvent(
            event=pending.event or "message",
            data="\n".join(pending.data),
            id=pending.id,
            retry=pending.retry,
        )
