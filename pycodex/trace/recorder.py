"""Recording a trace: every message the app-server exchanges, one JSON line each, off the event loop.

A hook on the hot path costs one ``time.monotonic()`` and one deque append of the raw bytes; the writer
thread parses, redacts and writes once the burst of messages is over (a 20 ms pause; at most 1 s or 16,384
messages later, which bounds what a crash can lose). The backlog is bounded so a stalled disk backpressures
the server instead of growing memory; it never drops events (a replay needs all of them).

The active tracer travels in a ``ContextVar`` set once by the entry point: every task the server starts
afterwards inherits it, so the hooks in the transport, model and exec clients need no plumbing, and a process
without ``--trace`` pays one ``ContextVar.get`` per message.

Line format (``FORMAT``)::

    {"t": 0.0123, "dir": "in"|"out"|"meta", "channel": "client"|"model"|"exec"|"approval"|"trace",
     "conn": 1, "msg": {...}}          # or "summary": {...} for derived and meta events

``dir`` is from the app-server's point of view: ``in`` is what it received (client requests, SSE events,
exec-server answers), ``out`` what it sent.

The first line is the ``meta`` header (``server_header``: the config and ``-c`` overrides); once the server
has loaded its config it adds a second ``meta`` line (``server_note``: the model provider it resolved and
the scripted model's script), so a replay can start a server on the same model (pycodex/trace/replay.py).
"""

from __future__ import annotations

import json
import logging
import threading
import time
import tomllib
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from pycodex import __version__
from pycodex.json_types import JsonObj, JsonValue
from pycodex.trace import ENV_VAR, trace_path
from pycodex.trace.redact import Redactor

if TYPE_CHECKING:  # the hook is handed an httpx.Request; tracing itself never needs httpx loaded
    import httpx

__all__ = [
    "ENV_VAR",
    "FORMAT",
    "TraceFileError",
    "Tracer",
    "active_tracer",
    "record",
    "record_http_request",
    "server_header",
    "server_note",
    "trace_path",
    "tracing",
]

logger = logging.getLogger(__name__)

FORMAT = 1
_MAX_QUEUED = 65536
_BACKPRESSURE_WAIT = 5.0
_IDLE_POLL = 0.5
_QUIET = 0.02  # a pause this long ends a burst
_MAX_DELAY = 1.0
_MAX_BACKLOG = 16384
_CHUNK = 256  # messages the writer handles between two GIL hand-backs
_APPROVAL_SUFFIX = "requestApproval"

# (value, end) for the JSON value starting at an index: the decoder's C scanner (untyped in typeshed).
_SCAN: Callable[[str, int], tuple[object, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]

_ACTIVE: ContextVar[Tracer | None] = ContextVar("pycodex_tracer", default=None)

_Entry = tuple[float, str, str, int, object]  # the payload as the hook got it


class TraceFileError(Exception):
    """The trace file cannot be written (one line for the user)."""


def server_header(codex_home: Path, config_overrides: Sequence[str]) -> JsonObj:
    """What a replay needs to start a server configured like this one: its config (parsed, so the
    key-based redaction applies) and the ``-c`` overrides."""
    config: JsonObj | None = None
    try:
        config = tomllib.loads((codex_home / "config.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):  # no config, or one the server itself will refuse with its own message
        pass
    redactor = Redactor.from_environment()
    return {"pycodex": __version__, "config": config,
            "config_overrides": [redactor.assignment(o) for o in config_overrides]}


def server_note(model_provider: str, script: str | None) -> JsonObj:
    """What the server learnt once its config was loaded, for a replay: the model provider it resolved, and
    for the offline `scripted` one the script file it plays (its JSON; None: the built-in demo script)."""
    source: JsonValue = None
    if script:
        try:
            source = json.loads(Path(script).expanduser().read_text(encoding="utf-8"))
        except (OSError, ValueError):  # the server reports an unusable script itself
            source = None
    return {"model_provider": model_provider, "model_script": source}


def active_tracer() -> Tracer | None:
    """The tracer writing the current trace, or None when no trace is being written."""
    return _ACTIVE.get()


def record(direction: str, channel: str, conn: int, payload: object) -> None:
    """Hook for a raw message (bytes, str or JSON value); a no-op unless a trace is being written."""
    tracer = _ACTIVE.get()
    if tracer is not None:
        tracer.record(direction, channel, conn, payload)


def record_http_request(request: httpx.Request) -> None:
    """Hook for an outgoing model request (an ``httpx.Request``): method, URL, headers and JSON body."""
    tracer = _ACTIVE.get()
    if tracer is not None:
        http = {"method": request.method, "url": str(request.url), "headers": dict(request.headers),
                "body": request.content}
        tracer.record("out", "model", id(request), http)


@contextmanager
def tracing(path: Path | None, *, header: Mapping[str, JsonValue] | None = None) -> Iterator[Tracer | None]:
    """Make a tracer writing ``path`` active for the block (and every task started in it); None: no trace."""
    if path is None:
        yield None
        return
    try:
        tracer = Tracer(path, header=header)
    except OSError as exc:
        raise TraceFileError(f"cannot write the trace file {path}: {exc.strerror or exc}") from None
    token = _ACTIVE.set(tracer)
    try:
        yield tracer
    finally:
        _ACTIVE.reset(token)
        tracer.close()


class Tracer:
    """One trace file and its writer thread."""

    def __init__(self, path: Path, *, header: Mapping[str, JsonValue] | None = None,
                 redactor: Redactor | None = None) -> None:
        self._start = time.monotonic()
        # A deque: append and popleft are atomic, so the hot path takes no lock; the writer is woken
        # only when it went idle, and the loop waits for it only when the backlog is full.
        self._pending: deque[_Entry] = deque()
        self._wake = threading.Event()
        self._drained = threading.Event()
        self._idle = False
        self._closing = False
        self._redactor = redactor or Redactor.from_environment()
        self._file: IO[str] = open(path, "w", encoding="utf-8", buffering=1 << 16)
        self._writer = _Writer(self._file, self._redactor)
        self._writer.write_event(0.0, "meta", "trace", 0, None, {"format": FORMAT, **(header or {})})
        self._thread = threading.Thread(target=self._run, name="trace-writer", daemon=True)
        self._thread.start()

    def record(self, direction: str, channel: str, conn: int, payload: object) -> None:
        """Queue one message for the writer thread; waits (bounded) when the writer falls far behind."""
        self._pending.append((time.monotonic() - self._start, direction, channel, conn, payload))
        if self._idle:
            self._wake.set()
        if len(self._pending) >= _MAX_QUEUED:
            self._drained.clear()
            self._wake.set()
            self._drained.wait(_BACKPRESSURE_WAIT)

    def meta(self, summary: Mapping[str, JsonValue]) -> None:
        """Queue a meta event: what the server learnt after the header was written (its resolved config)."""
        self.record("meta", "trace", 0, _Meta(summary))

    def close(self, timeout: float = 5.0) -> None:
        """Write everything recorded so far and close the file (bounded by ``timeout``)."""
        self._closing = True
        self._wake.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            logger.warning("trace writer did not finish within %.1f s; the trace may be incomplete", timeout)
            return
        self._file.close()

    def _run(self) -> None:
        pending = self._pending
        while True:
            while pending:
                # A chunk at a time: the writer's per-message cost is paid once per chunk where it can be
                # (the redaction prefilter), and the GIL goes back to the event loop between chunks.
                chunk = [pending.popleft() for _ in range(min(len(pending), _CHUNK))]
                self._writer.write_batch(chunk)
                time.sleep(0)  # hand the GIL back now rather than after the 5 ms switch interval
            self._file.flush()
            self._drained.set()
            if self._closing:
                if not pending:  # everything recorded before close() is written
                    return
                continue
            self._idle = True
            if not pending:  # an append between the loop's check and _idle is seen here
                self._wake.wait(_IDLE_POLL)
            self._wake.clear()
            self._idle = False
            self._await_quiet()

    def _await_quiet(self) -> None:
        """Let a burst (a streamed answer) finish before writing it: the writer's work holds the GIL, so
        done during a turn it lengthens the turn, done in the pause after it costs the turn nothing. Bounded:
        at most ``_MAX_DELAY`` seconds or ``_MAX_BACKLOG`` messages wait (what a crash can lose)."""
        pending = self._pending
        deadline = time.monotonic() + _MAX_DELAY
        seen = len(pending)  # only record() changes it while this thread waits
        while not self._closing and seen < _MAX_BACKLOG and time.monotonic() < deadline:
            time.sleep(_QUIET)
            now = len(pending)
            if now == seen:
                return
            seen = now


@dataclass(frozen=True, slots=True)
class _Meta:
    """A meta event's summary on its way to the writer (``Tracer.meta``)."""

    summary: Mapping[str, JsonValue]


class _Writer:
    """Turns raw hook payloads into redacted JSON lines; derives the approval events (writer thread only)."""

    def __init__(self, out: IO[str], redactor: Redactor) -> None:
        self._out = out
        self._redact = redactor
        self._conns: dict[tuple[str, int], int] = {}
        self._next_conn: dict[str, int] = {}
        self._approvals: dict[tuple[int, JsonValue], tuple[float, str]] = {}

    def write_batch(self, entries: Sequence[_Entry]) -> None:
        """Write ``entries`` in order. When the chunk's text as a whole holds nothing to redact and no
        approval (the common case: a streamed answer), each message is checked only for what the
        chunk-wide test cannot tell (valid JSON, a pending approval's answer) and written verbatim."""
        texts: list[str | None] = []
        for entry in entries:
            payload = entry[4]
            texts.append(payload.decode("utf-8", "replace") if isinstance(payload, bytes)
                         else payload if isinstance(payload, str) else None)
        raw = [text for text in texts if text is not None]
        joined = "\n".join(raw)
        # A substring or regex hit in one message is a hit in the joined text, so a clean joined text
        # means every message is clean; the newline count proves no message holds a line break.
        clean = (joined.count("\n") == len(raw) - 1 and "\r" not in joined and _APPROVAL_SUFFIX not in joined
                 and not self._redact.may_hold_secrets(joined))
        lines: list[str] = []
        for entry, text in zip(entries, texts, strict=True):
            t, direction, channel, raw_conn, payload = entry
            if (clean and text is not None and not (channel == "client" and direction == "in" and self._approvals)
                    and (direction != "in" or _is_json(text))):
                conn = self._conn(channel, raw_conn, fresh=channel == "model" and direction == "out")
                lines.append(f'{{"t":{t:.6f},"dir":"{direction}","channel":"{channel}","conn":{conn},'
                             f'"msg":{text}}}\n')
                continue
            if lines:  # keep the file in order
                self._out.write("".join(lines))
                lines.clear()
            try:
                self.write(t, direction, channel, raw_conn, payload if text is None else text)
            except Exception:  # a trace bug must never take the server down
                logger.exception("trace writer failed on one event")
        if lines:
            self._out.write("".join(lines))

    def write(self, t: float, direction: str, channel: str, raw_conn: int, payload: object) -> None:
        if isinstance(payload, _Meta):
            self.write_event(t, direction, channel, 0, None, payload.summary)
            return
        conn = self._conn(channel, raw_conn, fresh=channel == "model" and direction == "out")
        if isinstance(payload, bytes):
            payload = payload.decode("utf-8", "replace")
        if isinstance(payload, str) and self._verbatim(direction, channel, payload):
            # The common case (a delta, a notification): the raw JSON goes in as it is, no parse, no walk.
            self._out.write(f'{{"t":{t:.6f},"dir":"{direction}","channel":"{channel}","conn":{conn},'
                            f'"msg":{payload}}}\n')
            return
        msg = _decode(payload)
        self.write_event(t, direction, channel, conn, msg, None)
        if channel == "client" and isinstance(msg, dict):
            self._approval(t, direction, conn, msg)

    def _verbatim(self, direction: str, channel: str, raw: str) -> bool:
        """Whether ``raw`` can be written unparsed: one line, nothing to redact, no approval to derive,
        and valid JSON (what we send is; what we receive is checked)."""
        if "\n" in raw or "\r" in raw or self._redact.may_hold_secrets(raw):
            return False
        if channel == "client" and (_APPROVAL_SUFFIX in raw or (direction == "in" and self._approvals)):
            return False
        return direction != "in" or _is_json(raw)

    def write_event(self, t: float, direction: str, channel: str, conn: int, msg: JsonValue,
                    summary: Mapping[str, JsonValue] | None) -> None:
        event: JsonObj = {"t": round(t, 6), "dir": direction, "channel": channel, "conn": conn}
        if summary is not None:
            event["summary"] = self._redact.value(dict(summary))
        else:
            event["msg"] = self._redact.value(msg)
        self._out.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")

    def _conn(self, channel: str, raw: int, *, fresh: bool) -> int:
        """Small stable numbers per channel (object ids are large and get reused)."""
        key = (channel, raw)
        if fresh or key not in self._conns:
            number = self._next_conn.get(channel, 0) + 1
            self._next_conn[channel] = number
            self._conns[key] = number
        return self._conns[key]

    def _approval(self, t: float, direction: str, conn: int, msg: JsonObj) -> None:
        method = msg.get("method")
        if direction == "out" and isinstance(method, str) and method.endswith(_APPROVAL_SUFFIX) and "id" in msg:
            raw_params = msg.get("params")
            params: JsonObj = raw_params if isinstance(raw_params, dict) else {}
            self._approvals[(conn, msg["id"])] = (t, method)
            summary = {"method": method, "id": msg["id"], **_pick(params, ("threadId", "turnId", "itemId",
                                                                            "command", "reason"))}
            self.write_event(t, "out", "approval", conn, None, summary)
        elif direction == "in" and method is None and (conn, msg.get("id")) in self._approvals:
            asked, method = self._approvals.pop((conn, msg.get("id")))
            result = msg.get("result")
            decision = result.get("decision") if isinstance(result, dict) else None
            summary = {"method": method, "id": msg.get("id"), "decision": decision if "error" not in msg
                       else "error", "waited": round(t - asked, 6)}
            self.write_event(t, "in", "approval", conn, None, summary)


def _pick(params: Mapping[str, JsonValue], keys: Sequence[str]) -> JsonObj:
    return {key: params[key] for key in keys if key in params}


def _is_json(text: str) -> bool:
    """Whether ``text`` is exactly one JSON value. The C scanner without ``json.loads``'s Python wrapper;
    leading or trailing whitespace counts as not JSON (the caller then takes the slow, safe path)."""
    try:
        return _SCAN(text, 0)[1] == len(text)
    except (StopIteration, ValueError):
        return False


def _decode(payload: object) -> JsonValue:
    """A JSON value for the trace; unparsable text is kept only by size (it may hold anything)."""
    if isinstance(payload, dict) and isinstance(payload.get("body"), bytes):  # an HTTP request
        return {**payload, "body": _decode(payload["body"])}
    if isinstance(payload, bytes | str):
        try:
            return json.loads(payload)
        except ValueError:
            return {"unparsable_bytes": len(payload)}
    return payload
