"""``pycodex trace replay``: the client side of a trace against a fresh server; the first divergence.

The server under test (any build spec of the compat matrix) starts in a private CODEX_HOME holding the
recorded config, with its model provider pointed at a loopback server that plays back the recorded SSE
streams in order; a recording made on the offline `scripted` model replays on it (see
:mod:`pycodex.trace.replay_config`), so the same provider, and the same config warnings, come back. The process environment is passed through (minus the trace variable), so an executor the
recording reached through ``CODEX_EXEC_SERVER_*`` serves the replay too. The recorded client messages go
out in order; before each one, the server must have sent what it sent at that point of the recording.
Messages are matched by method (responses by request id), so harmless reordering between notifications
is not a divergence; values are compared with :func:`pycodex.trace.diff.first_difference`. Command output
deltas are skipped: their chunking depends on pipe timing (the completed item carries the whole output).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import tempfile
from pathlib import Path

from pycodex.json_types import JsonObj, JsonValue
from pycodex.trace.diff import IdMap, first_difference, substitute
from pycodex.trace.recorder import ENV_VAR
from pycodex.trace.replay_config import recorded_provider, replay_setup
from pycodex.trace.replay_support import ReplayError, build_argv, recorded_model, toml_document

__all__ = ["ReplayError", "replay"]

_SKIPPED_SUFFIXES = ("outputDelta",)
_EXIT_TIMEOUT = 5.0


def replay(events: list[JsonObj], spec: str, *, timeout: float = 30.0) -> str | None:
    """None when the server answered as recorded, else one line naming the method and the JSON path."""
    argv = build_argv(spec)
    client = [e for e in events if e.get("channel") == "client" and isinstance(e.get("msg"), dict)]
    if not client:
        raise ReplayError("the trace holds no client messages")
    conn = client[0].get("conn")
    script = [e for e in client if e.get("conn") == conn]
    header = _header(events)
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    with recorded_model(_model_responses(events)) as base_url, tempfile.TemporaryDirectory() as home:
        setup = replay_setup(header, recorded_provider(header, events), base_url, env, Path(home))
        if setup.config is not None:
            Path(home, "config.toml").write_text(toml_document(setup.config), encoding="utf-8")
        command = [*argv, "app-server", *(f"-c{o}" for o in setup.overrides)]
        env = setup.env | {"CODEX_HOME": home}
        return asyncio.run(_run(command, env, Path(home), script, timeout, _stand_in_dirs(script, Path(home))))


def _model_responses(events: list[JsonObj]) -> list[list[JsonValue]]:
    streams: dict[JsonValue, list[JsonValue]] = {}
    for event in events:
        if event.get("channel") != "model":
            continue
        if event.get("dir") == "out":
            streams[event.get("conn")] = []
        elif event.get("conn") in streams:
            streams[event.get("conn")].append(event.get("msg"))
    return list(streams.values())


def _header(events: list[JsonObj]) -> JsonObj:
    """The trace's meta summaries in order, merged: the header, then what the server noted after start-up."""
    header: JsonObj = {}
    for event in events:
        if event.get("dir") == "meta" and isinstance(event.get("summary"), dict):
            header.update(event["summary"])
    return header


def _stand_in_dirs(script: list[JsonObj], home: Path) -> IdMap:
    """An empty directory for each recorded ``cwd`` that is gone (the offline demo's workspace is deleted
    when it ends): the recorded path -> its stand-in, substituted into the client messages."""
    stand_ins: IdMap = {}
    for event in script:
        params = event["msg"].get("params") if event.get("dir") == "in" else None
        cwd = params.get("cwd") if isinstance(params, dict) else None
        if isinstance(cwd, str) and cwd not in stand_ins and os.path.isabs(cwd) and not os.path.isdir(cwd):
            stand_in = home / "workspaces" / str(len(stand_ins))
            stand_in.mkdir(parents=True)
            stand_ins[cwd] = str(stand_in)
    return stand_ins


def _key(msg: JsonObj) -> str:
    """What a server message is matched by: its method, or the id it answers."""
    return str(msg["method"]) if "method" in msg else f"response to request {msg.get('id')!r}"


def _skipped(msg: JsonObj) -> bool:
    return str(msg.get("method", "")).endswith(_SKIPPED_SUFFIXES)


class _Session:
    def __init__(self, proc: asyncio.subprocess.Process, timeout: float, ids: IdMap) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self._stdin, self._stdout, self._timeout = proc.stdin, proc.stdout, timeout
        self._unmatched: list[JsonObj] = []
        self.ids = ids

    async def send(self, msg: JsonObj) -> None:
        self._stdin.write(json.dumps(substitute(msg, self.ids)).encode() + b"\n")
        await self._stdin.drain()

    async def _read(self) -> JsonObj | None:
        while True:
            try:
                line = await asyncio.wait_for(self._stdout.readline(), self._timeout)
            except TimeoutError:
                return None
            if not line:
                return None
            try:
                msg = json.loads(line)
            except ValueError:
                raise ReplayError(f"the server wrote a line that is not JSON: {line[:80]!r}") from None
            if isinstance(msg, dict) and not _skipped(msg):
                return msg

    async def expect(self, expected: JsonObj) -> str | None:
        """Find the server message matching ``expected`` (reading more as needed) and compare them."""
        key = _key(expected)
        while not any(_key(m) == key for m in self._unmatched):
            msg = await self._read()
            if msg is None:
                return f"{key}: never sent (expected as in the recording)"
            self._unmatched.append(msg)
        actual = next(m for m in self._unmatched if _key(m) == key)
        self._unmatched.remove(actual)
        found = first_difference(expected, actual, self.ids)
        return f"{key}: {found}" if found else None

    def leftover(self) -> str | None:
        return f"{_key(self._unmatched[0])}: sent but not in the recording" if self._unmatched else None


async def _run(command: list[str], env: dict[str, str], home: Path, script: list[JsonObj],
               timeout: float, ids: IdMap) -> str | None:
    with open(home / "server.stderr", "wb") as stderr:
        try:
            proc = await asyncio.create_subprocess_exec(
                *command, env=env, cwd=home, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=stderr, start_new_session=True)
        except OSError as exc:
            raise ReplayError(f"cannot start {command[0]}: {exc.strerror or exc}") from None
        try:
            return await _drive(_Session(proc, timeout, ids), script, home)
        finally:
            await _stop(proc)


async def _drive(session: _Session, script: list[JsonObj], home: Path) -> str | None:
    for event in script:
        msg = event["msg"]
        if event.get("dir") == "out":
            if _skipped(msg):
                continue
            found = await session.expect(msg)
            if found:
                # A message never sent often means the server died: its last words say why.
                return found + (_last_stderr_line(home) if "never sent" in found else "")
        else:
            await session.send(msg)
    return session.leftover()


def _last_stderr_line(home: Path) -> str:
    with contextlib.suppress(OSError):
        lines = [line for line in (home / "server.stderr").read_text(errors="replace").splitlines() if line]
        if lines:
            return f" [server stderr: {lines[-1][:120]}]"
    return ""


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        await asyncio.wait_for(proc.wait(), _EXIT_TIMEOUT)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
