"""``pycodex demo``: an offline end-to-end run, printed as a readable transcript.

It is a plain client: it spawns ``pycodex app-server`` over stdio with a throw-away ``CODEX_HOME`` and
workspace whose config.toml names the built-in offline `scripted` model, and drives one thread and one turn through the
public protocol exactly as an IDE would. By default the command runs on a remote exec-server reached
through ``pycodex relay`` (Noise-encrypted); ``--local`` runs it in the app-server's own environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from pycodex.demo_remote import ENVIRONMENT_ID, MARKER_VAR, RemoteSetup, inspect_capture
from pycodex.item_views import ITEM_VIEWS
from pycodex.json_types import JsonObj

__all__ = ["run_demo"]

_TIMEOUT_S = 60.0


class _Client:
    def __init__(self, proc: subprocess.Popen[bytes], raw: bool) -> None:
        self._proc = proc
        self._raw = raw
        self._next_id = 1
        self.deadline = time.monotonic() + _TIMEOUT_S

    def _send(self, msg: JsonObj) -> None:
        assert self._proc.stdin is not None
        line = json.dumps(msg)
        if self._raw:
            print(f"> {line}")
        self._proc.stdin.write(line.encode() + b"\n")
        self._proc.stdin.flush()

    def read(self) -> JsonObj:
        assert self._proc.stdout is not None
        if time.monotonic() > self.deadline:
            raise TimeoutError("the demo did not finish in time")
        line = self._proc.stdout.readline()
        if not line:
            raise EOFError("the app-server closed its output")
        msg: JsonObj = json.loads(line)
        if self._raw:
            print(f"< {line.decode().rstrip()}")
        return msg

    def request(self, method: str, params: JsonObj, on_message: Callable[[_Client, JsonObj], None]) -> JsonObj:
        rid = self._next_id
        self._next_id += 1
        self._send({"id": rid, "method": method, "params": params})
        while True:
            msg = self.read()
            if msg.get("id") == rid and "method" not in msg:
                if "error" in msg:
                    raise RuntimeError(f"{method} failed: {msg['error'].get('message')}")
                return dict(msg["result"])
            on_message(self, msg)

    def notify(self, method: str) -> None:
        self._send({"method": method})

    def answer(self, request_id: int, result: JsonObj) -> None:
        self._send({"id": request_id, "result": result})


def _say(raw: bool, text: str, out: IO[str] = sys.stdout) -> None:
    if not raw:
        print(text, file=out, flush=True)


def _describe(client: _Client, msg: JsonObj, raw: bool) -> str | None:
    """Print one server message as a transcript line; return the turn status when the turn ends."""
    method = msg.get("method", "")
    params = msg.get("params") or {}
    if "id" in msg and method:  # a server request: approve so the demo can go on
        _say(raw, f"  ? {method}: approving")
        client.answer(msg["id"], {"decision": "accept"})
        return None
    item = params.get("item") or {}
    if method == "configWarning":
        _say(raw, f"  ! {params.get('summary')}")
    elif method in ("item/started", "item/completed"):
        view = ITEM_VIEWS.view_of(item.get("type"))
        line = view.demo_started if method == "item/started" else view.demo_completed
        if line is not None:
            _say(raw, line(item))
    elif method == "item/commandExecution/outputDelta":
        for line_text in str(params.get("delta", "")).splitlines():
            _say(raw, f"  | {line_text}")
    elif method == "error":
        _say(raw, f"  error: {(params.get('error') or {}).get('message')}")
    elif method == "turn/completed":
        status = str((params.get("turn") or {}).get("status"))
        _say(raw, f"< turn/completed: {status}")
        return status
    return None


_REMOTE_CMD = f'echo "hello from the remote executor (${MARKER_VAR})"'


def _remote_script(path: Path) -> Path:
    script = {"responses": [
        [{"type": "reasoning", "summary": ["**Running a command**\n\nI will run it on the remote executor."]},
         {"type": "function_call", "name": "exec_command", "arguments": {"cmd": _REMOTE_CMD}}],
        [{"type": "message", "text": "The command ran on the remote exec-server, reached through the relay."}],
    ]}
    path.write_text(json.dumps(script))
    return path


def run_demo(*, config_overrides: Sequence[str] = (), raw: bool = False, local: bool = False) -> int:
    """Run the offline demo (scripted model, throw-away CODEX_HOME) to the turn's end; the exit status."""
    with tempfile.TemporaryDirectory(prefix="pycodex-demo-") as tmp:
        home = Path(tmp, "home")
        workspace = Path(tmp, "workspace")
        home.mkdir()
        workspace.mkdir()
        # The demo asks for the offline model by name: pycodex never falls back to it on its own.
        (home / "config.toml").write_text('model_provider = "scripted"\n')
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
        env["CODEX_HOME"] = str(home)
        env.pop("PYCODEX_SCRIPT", None)
        try:
            if local:
                return _run_app_server(env, workspace, config_overrides, raw)
            with RemoteSetup(Path(tmp)) as remote:
                _say(raw, f"* relay {remote.registry_url}; remote exec-server registered as `{ENVIRONMENT_ID}`")
                env.update(remote.app_server_env(), PYCODEX_SCRIPT=str(_remote_script(Path(tmp, "s.json"))))
                status = _run_app_server(env, workspace, config_overrides, raw)
            report = inspect_capture(remote.capture, [remote.marker, "hello from", "exec_command",
                                                      "process/start", "initialize", '"jsonrpc"'])
            _say(raw, f"* relay carried {report.frames} frames ({report.data_frames} data, {report.bytes} bytes); "
                      f"plaintext found in them: {', '.join(report.plaintext_hits) or 'none'}")
            return status if not report.plaintext_hits else 1
        except (RuntimeError, TimeoutError, EOFError, OSError) as exc:
            print(f"demo failed: {exc}", file=sys.stderr)
            return 1


def _run_app_server(env: dict[str, str], workspace: Path, config_overrides: Sequence[str], raw: bool) -> int:
    argv = [sys.executable, "-m", "pycodex"]
    for kv in config_overrides:
        argv += ["-c", kv]
    argv.append("app-server")
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=workspace, env=env)
    try:
        return _drive(_Client(proc, raw), workspace, raw)
    finally:
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def _drive(client: _Client, workspace: Path, raw: bool) -> int:
    status: dict[str, str] = {}

    def on_message(c: _Client, msg: JsonObj) -> None:
        done = _describe(c, msg, raw)
        if done:
            status["turn"] = done

    _say(raw, "> initialize")
    init = client.request(
        "initialize",
        {"clientInfo": {"name": "pycodex_demo", "title": "pycodex demo", "version": "0.1.0"},
         "capabilities": {"experimentalApi": True}},
        on_message,
    )
    _say(raw, f"< userAgent {init['userAgent']}")
    client.notify("initialized")
    _say(raw, "> thread/start")
    started = client.request("thread/start", {"cwd": str(workspace)}, on_message)
    thread = started["thread"]
    _say(raw, f"< thread {thread['id']} (model {started.get('model')}, provider {started.get('modelProvider')})")
    prompt = "Show me that commands run: say hello from the workspace."
    _say(raw, f"> turn/start: {prompt}")
    try:
        client.request(
            "turn/start", {"threadId": thread["id"], "input": [{"type": "text", "text": prompt}]}, on_message
        )
    except RuntimeError as exc:
        _say(raw, f"< {exc}")
        return 1
    while "turn" not in status:
        on_message(client, client.read())
    return 0 if status["turn"] == "completed" else 1
