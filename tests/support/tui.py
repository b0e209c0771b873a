"""Driving the real Codex TUI (`codex --remote ws://...`) in a private tmux server, and the app-server it talks to.

The TUI is read by capturing its pane; every wait polls the screen with a bound. `remote_app_server` starts
pycodex's app-server (with `--trace`, so the test can read every JSON-RPC answer) or Codex's own with the
same config and fake model, so one test body proves itself against Codex and checks pycodex.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .appserver_process import ServerProcess, app_server_env, free_port
from .fake_model import FakeModel, model_config
from .http_probe import wait_ready
from .tools import require_codex_release

#: A list popup's selected row: `› 4. Read Only`.
_SELECTED_ROW = re.compile(r"›\s*(\d+)\.\s")

__all__ = [
    "ERROR_PATTERNS",
    "REFERENCE_RELEASE",
    "TMUX",
    "Remote",
    "Tui",
    "catalog_rows",
    "error_lines",
    "remote_app_server",
    "tui_binary",
    "unsupported_answers",
]

TMUX = shutil.which("tmux")
# Lines the TUI shows when something failed (a failed request, a failed resume, a model error).
ERROR_PATTERNS = re.compile(r"Failed to|failed to|■|Connection failed|not supported|error", re.IGNORECASE)
# JSON-RPC "method not found": the server does not implement a method the TUI called.
METHOD_NOT_FOUND = -32601


#: The Codex release pycodex is wire-compatible with: its TUI is the reference binary (the `codex_bin` fixture).
REFERENCE_RELEASE = "0.169.0"


def tui_binary(request: pytest.FixtureRequest) -> Path:
    """The Codex binary of the release a parametrized fixture's `request.param` names: the reference binary for
    0.169, another release from the compat build cache (skipped when it cannot be had)."""
    version = str(request.param)
    if version == REFERENCE_RELEASE:
        return Path(request.getfixturevalue("codex_bin"))
    return require_codex_release(version)


def error_lines(screen: str) -> list[str]:
    return [line for line in screen.splitlines() if ERROR_PATTERNS.search(line)]


class Tui:
    """One TUI process in a private tmux server (its own socket), read by capturing the pane. Waits poll with
    generous bounds (60 s): on a busy shared machine one TUI step was seen to take over 30 s."""

    def __init__(self, socket_name: str, workdir: Path) -> None:
        assert TMUX is not None
        self.base = [TMUX, "-L", socket_name]
        self.status_file = workdir / "tui_exit_status"
        # tmux leaves its socket file behind after kill-server; close() removes it.
        tmpdir = os.environ.get("TMUX_TMPDIR") or "/tmp"
        self.socket = Path(tmpdir) / f"tmux-{os.getuid()}" / socket_name

    def _run(self, *args: str) -> str:
        done = subprocess.run([*self.base, *args], capture_output=True, text=True, timeout=10, check=False)
        return done.stdout

    def start(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        self.status_file.unlink(missing_ok=True)
        command = (f"env -i {exports} {' '.join(shlex.quote(a) for a in argv)}; "
                   f"echo $? > {shlex.quote(str(self.status_file))}")
        self._run("kill-server")
        self._run("new-session", "-d", "-s", "tui", "-x", "120", "-y", "40", "-c", str(cwd), command)
        self._run("set-option", "-t", "tui", "remain-on-exit", "on")

    def screen(self) -> str:
        return self._run("capture-pane", "-p", "-t", "tui")

    async def wait_until(self, what: str, test: Callable[[str], bool], timeout: float = 60.0) -> str:
        """The first screen for which `test` holds, polled until `timeout` (then an error naming `what`)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            screen = self.screen()
            if test(screen):
                return screen
            if loop.time() >= deadline:
                raise AssertionError(f"{what} not on the TUI screen within {timeout} s:\n{screen}")
            await asyncio.sleep(0.2)

    async def wait_for(self, text: str, timeout: float = 60.0) -> str:
        return await self.wait_until(repr(text), lambda screen: text in screen, timeout)

    async def select_row(self, number: int, timeout: float = 60.0) -> str:
        """Move a list popup's selection (``› N.``) to row ``number`` with Down and Up, judged by the screen.

        A key sent while the TUI redraws can be lost under load, so each press waits a bounded while for the
        selection to move and then reads the screen afresh: a lost key is pressed again, a late one that
        overshot is walked back."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout

        def selected(screen: str) -> int | None:
            found = _SELECTED_ROW.search(screen)
            return int(found.group(1)) if found else None

        while True:
            screen = self.screen()
            current = selected(screen)
            if current == number:
                return screen
            if loop.time() >= deadline:
                raise AssertionError(f"row {number} not selected on the TUI screen within {timeout} s:\n{screen}")
            if current is None:
                await asyncio.sleep(0.2)
                continue
            self.key("Down" if number > current else "Up")
            with contextlib.suppress(AssertionError):  # not moved yet: look again, press again
                await self.wait_until("the selection to move", lambda s, was=current: selected(s) != was, timeout=3.0)

    def type(self, text: str) -> None:
        self._run("send-keys", "-t", "tui", "-l", text)

    def key(self, key: str) -> None:
        self._run("send-keys", "-t", "tui", key)

    async def submit(self, text: str) -> None:
        """Type a prompt or slash command, wait until the composer shows it, and press Enter."""
        self.type(text)
        await self.wait_for(f"› {text}")
        self.key("Enter")

    async def exit_status(self, timeout: float = 60.0) -> str:
        """The TUI process's exit status, written by the pane's shell once the process ended (tmux 3.3 can leave
        a dead pane's process unreaped, so its own `pane_dead_status` may never come)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.status_file.exists() or not self.status_file.read_text().strip():
            if loop.time() >= deadline:
                raise AssertionError(f"the TUI did not exit within {timeout} s:\n{self.screen()}")
            await asyncio.sleep(0.2)
        return self.status_file.read_text().strip()

    def close(self) -> None:
        self._run("kill-server")
        self.socket.unlink(missing_ok=True)


@dataclass(frozen=True)
class Remote:
    """A running app-server on ws://127.0.0.1:PORT with its fake model; `trace` is pycodex's protocol record."""

    kind: str
    url: str
    model: FakeModel
    trace: Path | None


@asynccontextmanager
async def remote_app_server(
    kind: str, script: list[Any] | dict[str, Any], codex_bin: Path, tmp: Path, *, config_extra: str = ""
) -> AsyncIterator[Remote]:
    """`kind` ("pycodex" or "codex") app-server listening on loopback, its model the scripted fake;
    `config_extra` is more top-level config.toml text (an `[mcp_servers.NAME]` table, say)."""
    model = await FakeModel.start(script, tmp / "model")
    home = tmp / "server_home"
    model_config(home, model.url, approval_policy="on-request", extra=config_extra)
    port = free_port()
    listen = ["--listen", f"ws://127.0.0.1:{port}"]
    trace = tmp / "trace.jsonl" if kind == "pycodex" else None
    if trace is not None:
        argv = [sys.executable, "-m", "pycodex", "app-server", "--trace", str(trace), *listen]
    else:
        argv = [str(codex_bin), "app-server", *listen]
    workspace = tmp / "server_cwd"
    workspace.mkdir()
    process = await ServerProcess.spawn(argv, env=app_server_env(home), cwd=workspace, protocol_stdio=False)
    try:
        await wait_ready(port, exited=lambda: process.returncode is not None)
        yield Remote(kind, f"ws://127.0.0.1:{port}", model, trace)
    finally:
        await process.stop(3.0, eof_first=False)
        await model.stop()
    assert "Traceback" not in process.stderr_text, process.stderr_text[-3000:]


def unsupported_answers(trace: Path) -> list[str]:
    """The requests pycodex answered with -32601 (method not found), by method, from its `--trace` record."""
    methods: dict[Any, str] = {}
    missing: list[str] = []
    for line in trace.read_text().splitlines():
        record = json.loads(line)
        msg = record.get("msg") or {}
        key = (record.get("conn"), json.dumps(msg.get("id")))
        if record.get("dir") == "in" and "method" in msg and "id" in msg:
            methods[key] = msg["method"]
        elif record.get("dir") == "out" and (msg.get("error") or {}).get("code") == METHOD_NOT_FOUND:
            missing.append(methods.get(key, f"<request {msg.get('id')!r}>"))
    return missing


def catalog_rows(codex_bin: Path) -> list[tuple[str, str]]:
    """The /model picker rows Codex's own catalog gives: (display name, description) of each listed model,
    in priority order, from `codex debug models` (the binary's bundled catalog)."""
    with tempfile.TemporaryDirectory() as home:
        done = subprocess.run([str(codex_bin), "debug", "models"], capture_output=True, text=True, timeout=60,
                              check=True, env={"CODEX_HOME": home, "PATH": "/usr/bin:/bin"})
    models = [m for m in json.loads(done.stdout)["models"] if m.get("visibility") == "list"]
    models.sort(key=lambda m: m["priority"])
    return [(m["display_name"], m["description"]) for m in models]
