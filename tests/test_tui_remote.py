"""The real Codex 0.169 TUI (`codex --remote ws://...`) driven in tmux against pycodex's app-server, and, with the
same steps, against Codex's own: it starts, runs a prompt with an approval, shows no error, and
`codex --remote ... resume <id>` shows the earlier turn again. Skips when tmux or the Codex binary is absent.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.appserver_process import ServerProcess, app_server_env, free_port
from tests.support.fake_model import FakeModel, exec_call, message, model_config
from tests.support.http_probe import wait_ready

pytestmark = pytest.mark.codex

TMUX = shutil.which("tmux")
# Lines the TUI shows when something failed (a failed request, a failed resume, a model error).
ERROR_PATTERNS = re.compile(r"Failed to|failed to|■|Connection failed|not supported|error", re.IGNORECASE)
# The model: one escalated command (the approval), its follow-up, and the title thread's structured answer.
SCRIPT = [
    {"output": [exec_call("c1", "printf hi > out.txt", sandbox_permissions="require_escalated",
                          justification="write a file")]},
    {"output": [message('{"title":"Write file"}')]},
    {"output": [message("done writing")]},
]


class Tui:
    """One TUI process in a private tmux server (its own socket), read by capturing the pane."""

    def __init__(self, socket_name: str) -> None:
        assert TMUX is not None
        self.base = [TMUX, "-L", socket_name]

    def _run(self, *args: str) -> str:
        done = subprocess.run([*self.base, *args], capture_output=True, text=True, timeout=10, check=False)
        return done.stdout

    def start(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        command = f"env -i {exports} {' '.join(shlex.quote(a) for a in argv)}"
        self._run("kill-server")
        self._run("new-session", "-d", "-s", "tui", "-x", "120", "-y", "40", "-c", str(cwd), command)
        self._run("set-option", "-t", "tui", "remain-on-exit", "on")

    def screen(self) -> str:
        return self._run("capture-pane", "-p", "-t", "tui")

    async def wait_for(self, text: str, timeout: float = 30.0) -> str:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if loop.time() >= deadline:
                raise AssertionError(f"{text!r} not on the TUI screen within {timeout} s:\n{screen}")
            await asyncio.sleep(0.2)

    def type(self, text: str) -> None:
        self._run("send-keys", "-t", "tui", "-l", text)

    def key(self, key: str) -> None:
        self._run("send-keys", "-t", "tui", key)

    def close(self) -> None:
        self._run("kill-server")


async def _approve(tui: Tui, attempts: int = 5) -> None:
    """Press "y" on the approval prompt; a key sent while the TUI is still drawing the prompt can be lost, so
    press again (a bounded number of times) while the prompt is still shown."""
    for _ in range(attempts):
        tui.key("y")
        try:
            await tui.wait_for("You approved", timeout=4)
            return
        except AssertionError:
            if "Would you like to run the following command?" not in tui.screen():
                return
    raise AssertionError(f"the approval was not taken after {attempts} presses:\n{tui.screen()}")


@pytest.fixture
def tui() -> Any:
    if TMUX is None:
        pytest.skip("tmux is not installed (apt-get install -y tmux)")
    session = Tui(f"pycodex-tui-{os.getpid()}")
    yield session
    session.close()


@pytest.fixture(params=["pycodex", "codex"])
async def remote_server(request: Any, codex_bin: Path, tmp_path: Path) -> AsyncIterator[tuple[str, FakeModel]]:
    """An app-server listening on ws://127.0.0.1:PORT with the fake model; yields (url, model)."""
    model = await FakeModel.start(SCRIPT, tmp_path / "model")
    home = tmp_path / "server_home"
    model_config(home, model.url, approval_policy="on-request")
    port = free_port()
    listen = ["app-server", "--listen", f"ws://127.0.0.1:{port}"]
    argv = [sys.executable, "-m", "pycodex", *listen] if request.param == "pycodex" else [str(codex_bin), *listen]
    workspace = tmp_path / "server_cwd"
    workspace.mkdir()
    process = await ServerProcess.spawn(argv, env=app_server_env(home), cwd=workspace, protocol_stdio=False)
    try:
        await wait_ready(port, exited=lambda: process.returncode is not None)
        yield f"ws://127.0.0.1:{port}", model
    finally:
        await process.stop(3.0, eof_first=False)
        await model.stop()
    assert "Traceback" not in process.stderr_text, process.stderr_text[-3000:]


def _thread_id(model: FakeModel) -> str:
    """The main thread's id, from the session header the model saw on the first request."""
    first = model.requests()[0]
    found = first["headers"].get("session-id") or first["headers"].get("session_id")
    assert found, first["headers"]
    return str(found)


async def test_tui_runs_an_approved_command_and_resumes_the_session(
    tui: Tui, remote_server: tuple[str, FakeModel], codex_bin: Path, tmp_path: Path
) -> None:
    url, model = remote_server
    client_home = tmp_path / "client_home"
    model_config(client_home, model.url, approval_policy="on-request")
    env = {"CODEX_HOME": str(client_home), "TERM": "xterm-256color", "PATH": os.environ.get("PATH", ""),
           "HOME": str(tmp_path)}
    cwd = tmp_path / "client_cwd"
    cwd.mkdir()

    tui.start([str(codex_bin), "--remote", url], env, cwd)
    await tui.wait_for("Ask Codex to do anything")
    tui.type("write the file")
    await tui.wait_for("write the file")
    tui.key("Enter")
    try:
        await tui.wait_for("Would you like to run the following command?")
    except AssertionError as exc:  # say which thread got which scripted answer (title and main race)
        order = [(r["headers"].get("thread-id"), bool((r["body"] or {}).get("text"))) for r in model.requests()]
        raise AssertionError(f"{exc}\nmodel requests (thread, structured): {order}") from None
    await _approve(tui)
    screen = await tui.wait_for("done writing")
    assert not [line for line in screen.splitlines() if ERROR_PATTERNS.search(line)], screen

    thread_id = _thread_id(model)
    tui.close()
    tui.start([str(codex_bin), "--remote", url, "resume", thread_id], env, cwd)
    screen = await tui.wait_for("done writing")
    assert "write the file" in screen and "printf hi > out.txt" in screen, screen
    await tui.wait_for("Ask Codex to do anything")
    screen = tui.screen()
    assert not [line for line in screen.splitlines() if ERROR_PATTERNS.search(line)], screen
