"""A scriptable fake of the OpenAI Responses API (`POST .../responses`, SSE): ``pycodex mock-model``.

Frontend authors and tests point a model provider at it to run real turns offline, against pycodex's
app-server or Codex's:

    pycodex mock-model --script SCRIPT.json --listen 127.0.0.1:8123 [--log REQUESTS.jsonl]
    # config.toml: model_provider = "mock"
    #   [model_providers.mock]  name = "mock"  base_url = "http://127.0.0.1:8123/v1"  env_key = "MOCK_KEY"

It prints its base URL (`http://127.0.0.1:PORT/v1`) alone on stdout's first line (`--listen 127.0.0.1:0`
picks a free port) and serves until SIGTERM/SIGINT. fixtures/fake_responses_server.py is the test form:
a free port, the bare port number on stdout, and it also stops when stdin reaches EOF.

Script format
-------------
SCRIPT.json is a list of responses (or `{"responses": [...], "when_exhausted": "error"|"repeat_last"}`).
Each POST consumes the next response, whatever thread it comes from. A response is one of:

* a list of output items, or `{"output": [...], "usage": {...}, "id": "resp_x", ...}`: a 200 stream of a
  whole response in the format of the product's model scripts (app_server/model/script.py, documented in
  fixtures/scripts/README.md): `"text"`, `{"type": "message", "text", "deltas"}`, `{"type": "reasoning",
  "summary"}`, `{"type": "function_call", "name", "arguments", "call_id"}`, `{"type": "custom_tool_call",
  "name", "input"}`, and the faults `failed`, `http_error`, `truncate`, `stall`, expanded by the product's
  own code. `"failed": {"code", "message"}` is shorthand for a trailing `{"type": "failed", ...}` item.
  Unnamed items get ids `item_N` and call ids `call_N`.
* `{"status": 500, "body": "text" | {json}, "headers": {...}}`: a non-200 reply (a dict body is sent as JSON).
* `{"events": [...], ...}`: a 200 `text/event-stream` reply of raw Responses events
  (`{"type": "response.created", ...}`), sent as given.

Routing, for several threads sharing one script (a parent and its sub-agents): a response with
`"when": "TEXT"` answers only a request with a user message containing TEXT; a request takes the first
unused response it qualifies for (one without `when` qualifies for all). `"fill": {"NAME": "REGEX"}`
replaces each `{{NAME}}` in the response's output with the first group of REGEX searched in the request
body's JSON text (e.g. an id a tool returned earlier).

Knobs for streamed replies: `delay_ms` (before every event), `truncate_after` (send that many events,
then close the connection), `stall_after` (send that many events, then hold the connection open for
`stall_s` seconds, default 30, or until shutdown), `burst` (write the whole stream at once; benchmarks).
A script the product's parser rejects stops the server at startup with that one-line message.

Every request is appended to the log (if given) as one JSON line: `{"t", "method", "path", "query",
"headers", "body", "response_index"}` (headers lower-cased; body decoded as JSON when possible).
An exhausted script answers HTTP 500 with body `fake server: script exhausted` unless `repeat_last`.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from app_server.model.script import (
    ScriptedResponse,
    ScriptError,
    expand_wire,
    failed_event,
    parse_response,
)
from pycodex.json_types import JsonObj


def parse_output(response: JsonObj, where: str) -> ScriptedResponse:
    """An `output` response in the product's script format (with the `failed` shorthand folded in)."""
    output = response.get("output", [])
    if "failed" in response:
        if not isinstance(output, list) or not isinstance(response["failed"], dict):
            raise ScriptError(f"{where}: `failed` must be an object beside an `output` list")
        output = [*output, {"type": "failed", **response["failed"]}]
    spec: JsonObj = {"output": output}
    if "usage" in response:
        spec["usage"] = response["usage"]
    return parse_response(spec, where)


class Script:
    """The queue of scripted responses, shared by the handler threads; `output` responses are parsed up front."""

    def __init__(self, data: object, source: str = "<script>") -> None:
        if isinstance(data, list):
            data = {"responses": data}
        if not isinstance(data, dict) or not isinstance(data.get("responses", []), list):
            raise ScriptError(f"script {source}: expected a list of responses")
        # A bare list of items is a whole response, as in the product's scripts.
        self.responses: list[JsonObj] = [
            {"output": r} if isinstance(r, list) else r for r in data.get("responses", [])
        ]
        self.repeat_last = data.get("when_exhausted", "error") == "repeat_last"
        self.parsed: dict[int, ScriptedResponse] = {}
        for index, response in enumerate(self.responses):
            if not isinstance(response, dict):
                raise ScriptError(f"script {source}: response {index} must be an object or a list")
            if "events" not in response and response.get("status", 200) == 200:
                self.parsed[index] = parse_output(response, f"script {source}: response {index}")
        self._next = 0
        self._lock = threading.Lock()
        self._routed = any("when" in r for r in self.responses)
        self._used: set[int] = set()

    def take(self, body: object = None) -> tuple[int, int | None]:
        """The request's serial and the index of the response that answers it (None: exhausted)."""
        with self._lock:
            serial = self._next
            self._next += 1
            if self._routed:
                said = "\n".join(_user_texts(body))
                for index, response in enumerate(self.responses):
                    if index not in self._used and str(response.get("when", "")) in said:
                        self._used.add(index)
                        return serial, index
                return serial, None
        if serial < len(self.responses):
            return serial, serial
        if self.repeat_last and self.responses:
            return serial, len(self.responses) - 1
        return serial, None

    def answer(self, index: int, body: object) -> ScriptedResponse:
        """The parsed response ``index`` for a request with ``body`` (its ``fill`` placeholders filled)."""
        response = self.responses[index]
        fill = response.get("fill")
        if not isinstance(fill, dict):
            return self.parsed[index]
        text, source = json.dumps(response.get("output", [])), json.dumps(body)
        for name, pattern in fill.items():
            found = re.search(str(pattern), source)
            if found is not None:
                text = text.replace("{{" + name + "}}", found.group(1))
        return parse_output({**response, "output": json.loads(text)}, f"response {index}")


def _user_texts(body: object) -> list[str]:
    """The texts of the user messages in a Responses request body."""
    items = body.get("input") if isinstance(body, dict) else None
    texts: list[str] = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("role") == "user" and isinstance(item.get("content"), list):
            texts += [str(part.get("text")) for part in item["content"] if isinstance(part, dict)]
    return texts


class FakeServer(ThreadingHTTPServer):
    """The threaded HTTP server that answers from a ``Script`` and logs each request it receives."""

    daemon_threads = True
    #: The listen backlog. socketserver's default is 5: with more clients connecting at once (100 websocket
    #: turns) the kernel's accept queue overflows, the handshake's last ACK is dropped, and the client's
    #: request on that connection ends in a reset, which httpx reports as a bare ``ReadError`` ("stream
    #: disconnected before completion: ReadError" with retries off).
    request_queue_size = 1024

    def __init__(self, script: Script, log_path: Path | None, address: tuple[str, int] = ("127.0.0.1", 0)) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, Handler)
        self.script = script
        self.log_path = log_path
        self.log_lock = threading.Lock()
        self.stopping = threading.Event()

    def log_request_record(self, record: JsonObj) -> None:
        """Append one request record as a JSON line to the log file (when there is one)."""
        if self.log_path is None:
            return
        with self.log_lock, self.log_path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")


class Handler(BaseHTTPRequestHandler):
    """Answers one HTTP request: POST ``.../responses`` from the script, anything else 404."""

    server: FakeServer
    # HTTP/1.0 semantics: the body of a stream ends when we close the connection.
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # silence default stderr chatter
        """Say nothing: the default writes every request to stderr."""
        return

    def do_GET(self) -> None:
        # Only POST .../responses is scripted; a GET (`pycodex doctor` probing /models) is a plain 404.
        """Answer 404: only POST ``.../responses`` is scripted."""
        self._reply(404, f"fake server: no route GET {urlsplit(self.path).path}", {})

    def do_POST(self) -> None:
        """Log the request, then answer with the script's next response (streamed, or an HTTP error)."""
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: object = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        split = urlsplit(self.path)
        script = self.server.script
        index, answer = script.take(body)
        response = None if answer is None else script.responses[answer]
        self.server.log_request_record(
            {
                "t": time.time(),
                "method": "POST",
                "path": split.path,
                "query": split.query,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body,
                "response_index": index,
            }
        )
        if not split.path.endswith("/responses"):
            self._reply(404, f"fake server: no route {split.path}", {})
        elif response is None:
            self._reply(500, "fake server: script exhausted", {})
        elif "status" in response and response["status"] != 200:
            self._reply(int(response["status"]), response.get("body", ""), response.get("headers", {}))
        elif answer is not None and answer in script.parsed:
            self._stream_output(response, script.answer(answer, body))
        else:
            self._stream(response, response["events"])

    def _reply(self, status: int, body: object, headers: dict[str, str]) -> None:
        is_json = not isinstance(body, str)
        data = (body if isinstance(body, str) else json.dumps(body)).encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", "application/json" if is_json else "text/plain")
        self.send_header("content-length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream_output(self, response: JsonObj, parsed: ScriptedResponse) -> None:
        """Serve an `output` response: the product's expansion, then its fault as this server's knob."""
        fault = parsed.fault
        if fault is not None and fault.kind == "http_error":
            self._reply(int(fault.spec["status"]), fault.spec.get("body", ""), fault.spec.get("headers", {}))
            return
        response_id = str(response.get("id", "resp_fake"))
        events = expand_wire(parsed, response_id)
        knobs = dict(response)
        failed = failed_event(parsed, response_id)
        if failed is not None:
            events.append(failed)
        elif fault is not None and fault.kind == "truncate":
            knobs["truncate_after"] = len(events)
        elif fault is not None and fault.kind == "stall":
            knobs.update(stall_after=len(events), stall_s=fault.spec.get("seconds", 30))
        self._stream(knobs, events)

    def _stream(self, response: JsonObj, events: list[JsonObj]) -> None:
        delay = float(response.get("delay_ms", 0)) / 1000.0
        truncate_after = response.get("truncate_after")
        stall_after = response.get("stall_after")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        self.wfile.flush()
        if response.get("burst"):
            # Benchmarks: send the whole stream in one write so the server is never the bottleneck.
            blob = "".join(f"event: {e.get('type', 'message')}\ndata: {json.dumps(e)}\n\n" for e in events)
            try:
                self.wfile.write(blob.encode("utf-8"))
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        try:
            for count, event in enumerate(events):
                if truncate_after is not None and count >= truncate_after:
                    return
                if stall_after is not None and count >= stall_after:
                    self.server.stopping.wait(float(response.get("stall_s", 30)))
                    return
                if delay and self.server.stopping.wait(delay):
                    return
                frame = f"event: {event.get('type', 'message')}\ndata: {json.dumps(event)}\n\n"
                self.wfile.write(frame.encode("utf-8"))
                self.wfile.flush()
            if stall_after is not None and stall_after >= len(events):
                self.server.stopping.wait(float(response.get("stall_s", 30)))
        except (BrokenPipeError, ConnectionResetError):
            return


def load_script(path: Path) -> Script:
    """The script at ``path``; raises ValueError (ScriptError, JSONDecodeError) or OSError with the cause."""
    return Script(json.loads(path.read_text(encoding="utf-8")), str(path))


def parse_listen(text: str) -> tuple[str, int]:
    """`IP:PORT` (loopback only: the fake answers anyone and logs request headers, keys included)."""
    host, sep, port = text.removeprefix("http://").rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"invalid --listen `{text}`: expected IP:PORT, e.g. 127.0.0.1:8123")
    if host not in ("127.0.0.1", "localhost", "::1", "[::1]"):
        raise ValueError(f"invalid --listen `{text}`: the mock model serves loopback only (127.0.0.1)")
    return ("127.0.0.1" if host == "localhost" else host.strip("[]")), int(port)


def add_mock_model_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``pycodex mock-model``'s options (``--script``, ``--listen``, ``--log``) to ``parser``."""
    parser.add_argument("--script", required=True, type=Path, metavar="FILE",
                        help="JSON model script (format: `pydoc app_server.model.mock_server`)")
    parser.add_argument("--listen", default="127.0.0.1:0", metavar="IP:PORT",
                        help="loopback address to serve on (default 127.0.0.1:0, a free port)")
    parser.add_argument("--log", type=Path, default=None, metavar="FILE", help="append every request as JSONL")


def serve(script: Script, log: Path | None, address: tuple[str, int], announce: str,
          watch_stdin: bool = False) -> int:
    """Serve until SIGTERM/SIGINT (and stdin EOF with ``watch_stdin``); print ``announce`` with {port} first."""
    try:
        server = FakeServer(script, log, address)
    except OSError as exc:
        print(f"mock-model: cannot listen on {address[0]}:{address[1]}: {exc.strerror or exc}", file=sys.stderr)
        return 1

    def stop(*_: object) -> None:
        server.stopping.set()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def read_to_eof() -> None:
        # The parent closing our stdin means "stop", which avoids orphaned servers after a crash.
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except (OSError, ValueError):
            pass
        stop()

    print(announce.format(port=server.server_address[1]), flush=True)
    if watch_stdin:
        threading.Thread(target=read_to_eof, daemon=True).start()
    server.serve_forever(poll_interval=0.05)
    server.server_close()
    return 0


def run_mock_model(args: argparse.Namespace) -> int:
    """``pycodex mock-model``: ordinary mistakes (bad script, bad address) are one stderr line."""
    try:
        address = parse_listen(args.listen)
        script = load_script(args.script)
    except (OSError, ValueError) as exc:
        print(f"mock-model: {exc}", file=sys.stderr)
        return 2
    host = f"[{address[0]}]" if ":" in address[0] else address[0]
    return serve(script, args.log, address, f"http://{host}:{{port}}/v1")


def fixture_main(argv: list[str] | None = None) -> int:
    """fixtures/fake_responses_server.py: SCRIPT [--log FILE]; free port, bare port on stdout, stops on EOF."""
    parser = argparse.ArgumentParser(description="Scriptable fake Responses API server (SSE).")
    parser.add_argument("script", type=Path, help="JSON file with the scripted responses")
    parser.add_argument("--log", type=Path, default=None, help="append every request as JSONL here")
    args = parser.parse_args(argv)
    try:
        script = load_script(args.script)
    except (OSError, ValueError) as exc:
        print(f"fake server: {exc}", file=sys.stderr)
        return 2
    return serve(script, args.log, ("127.0.0.1", 0), "{port}", watch_stdin=True)
