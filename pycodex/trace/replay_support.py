"""What a replay runs on: the build a spec names, the recorded model served back, the recorded config."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pycodex.json_types import JsonObj, JsonValue

__all__ = ["ReplayError", "build_argv", "recorded_model", "toml_document"]

CHECKOUT = Path(__file__).resolve().parents[2]
_RESOLVE_TIMEOUT = 900.0  # building pycodex@REF or installing codex@VERSION the first time
# Resolved by the compat harness (a source checkout); the product never imports compat_tests.
_RESOLVE = """
import json, sys
from compat_tests.support.builds import find_build
build, why = find_build(sys.argv[1])
print(json.dumps({"argv": list(build.argv) if build else None, "why": why}))
"""


class ReplayError(Exception):
    """A replay that cannot run (bad spec, unavailable build, server that does not start)."""


def build_argv(spec: str) -> list[str]:
    """The command prefix (before ``app-server``) of the build ``spec`` names: the compat matrix's specs."""
    if spec == "current":
        return [sys.executable, "-m", "pycodex"]
    if spec.startswith("path:"):
        path = Path(spec[5:])
        if not (path.is_absolute() and path.is_file() and os.access(path, os.X_OK)):
            raise ReplayError(f"{spec}: no executable file at {path} (path: needs an absolute path)")
        return [str(path)]
    if not spec.startswith(("codex@", "pycodex@")):
        raise ReplayError(f"bad build spec {spec!r}: expected current, codex@VERSION, pycodex@REF or path:/abs/bin")
    if not (CHECKOUT / "compat_tests" / "support" / "builds.py").is_file():
        raise ReplayError(f"{spec}: building other versions needs a source checkout (pip install -e .)")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CHECKOUT), env.get("PYTHONPATH")]))
    try:
        done = subprocess.run([sys.executable, "-c", _RESOLVE, spec], env=env, capture_output=True, text=True,
                              timeout=_RESOLVE_TIMEOUT, check=False)
        answer = json.loads(done.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as exc:
        raise ReplayError(f"{spec}: cannot resolve the build ({exc})") from None
    if not answer.get("argv"):
        raise ReplayError(str(answer.get("why") or f"{spec}: unavailable"))
    return [str(part) for part in answer["argv"]]


class _ModelHandler(BaseHTTPRequestHandler):
    server: _ModelServer

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        events = self.server.next_response()
        if events is None:
            body = b"replay: the trace holds no more model responses"
            self.send_response(500)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        for event in events:
            kind = event.get("type", "message") if isinstance(event, dict) else "message"
            self.wfile.write(f"event: {kind}\ndata: {json.dumps(event)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, format: str, *args: object) -> None:
        return


class _ModelServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, responses: list[list[JsonValue]]) -> None:
        super().__init__(("127.0.0.1", 0), _ModelHandler)
        self._responses = list(responses)
        self._lock = threading.Lock()

    def next_response(self) -> list[JsonValue] | None:
        with self._lock:
            return self._responses.pop(0) if self._responses else None


@contextmanager
def recorded_model(responses: list[list[JsonValue]]) -> Iterator[str]:
    """A loopback Responses endpoint that answers the n-th request with the n-th recorded SSE stream."""
    server = _ModelServer(responses)
    thread = threading.Thread(target=server.serve_forever, name="replay-model", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))  # a JSON string is a valid TOML basic string


def toml_document(config: JsonObj) -> str:
    """``config`` as TOML (inline tables throughout: what tomllib gave us, written back)."""
    return "".join(f"{json.dumps(str(key))} = {_toml_value(value)}\n" for key, value in config.items())
