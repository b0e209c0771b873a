"""The real Codex TUI (`codex --remote unix://PATH`) against `pycodex app-server --listen unix://PATH`: it starts,
runs a prompt with an approval and shows the answer, with no error line, with the 0.169 TUI and the 0.171 one (from
the compat build cache, installed with npm on first use, else skipped). Skips without tmux or the Codex binary."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pycodex.transport.unix_paths import socket_answers
from tests.app_server.test_tui_remote import PROMPT, READY
from tests.support.appserver_process import ServerProcess, app_server_env
from tests.support.fake_model import FakeModel, exec_call, message, model_config
from tests.support.tools import require_tmux
from tests.support.tui import Tui, error_lines, tui_binary

pytestmark = [pytest.mark.codex, pytest.mark.timeout(240)]

#: The escalated command, then "done writing" for every later request: the TUI's title request (second, or
#: later under load) gets the same answer as the main turn's follow-up (not a title, so the TUI names the thread
#: after the prompt; tests/app_server/test_tui_remote.py checks the generated title).
SCRIPT = {
    "responses": [
        {"output": [exec_call("c1", "printf hi > out.txt", sandbox_permissions="require_escalated",
                              justification="write a file", yield_time_ms=30_000)]},
        {"output": [message("done writing")]},
    ],
    "when_exhausted": "repeat_last",
}


@pytest.fixture(params=["0.169.0", "0.171.0"])
def tui_bin(request: pytest.FixtureRequest) -> Path:
    """The Codex TUI to drive: the reference 0.169 binary, and 0.171 from the compat build cache."""
    return tui_binary(request)


@pytest.fixture
def tui(tmp_path: Path) -> Iterator[Tui]:
    require_tmux()
    session = Tui(f"pycodex-tui-unix-{os.getpid()}", tmp_path)
    yield session
    session.close()


async def test_tui_over_a_unix_socket_runs_an_approved_command(tui: Tui, tui_bin: Path, tmp_path: Path) -> None:
    model = await FakeModel.start(SCRIPT, tmp_path / "model")
    server_home = tmp_path / "server_home"
    model_config(server_home, model.url, approval_policy="on-request")
    (tmp_path / "server_cwd").mkdir()
    alias = tmp_path / "app.sock"
    process = await ServerProcess.spawn(
        [sys.executable, "-m", "pycodex", "app-server", "--listen", f"unix://{alias}"], env=app_server_env(server_home),
        cwd=tmp_path / "server_cwd", protocol_stdio=False,
    )
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while not socket_answers(alias):
            assert process.returncode is None and loop.time() < deadline, process.stderr_text[-2000:]
            await asyncio.sleep(0.05)
        client_home = tmp_path / "client_home"
        model_config(client_home, model.url, approval_policy="on-request")
        env = {"CODEX_HOME": str(client_home), "TERM": "xterm-256color", "PATH": os.environ.get("PATH", ""),
               "HOME": str(tmp_path)}
        cwd = tmp_path / "client_cwd"
        cwd.mkdir()
        tui.start([str(tui_bin), "--remote", f"unix://{alias}"], env, cwd)
        await tui.wait_until("the composer with its status line", lambda s: PROMPT in s and READY in s)
        await tui.submit("write the file")
        await tui.wait_for("Would you like to run the following command?")
        for _ in range(5):  # a key sent while the prompt is still drawn can be lost: press again, bounded
            tui.key("y")
            try:
                await tui.wait_for("You approved", timeout=4)
                break
            except AssertionError:
                if "Would you like to run the following command?" not in tui.screen():
                    break
        screen = await tui.wait_for("done writing")
        assert not error_lines(screen), screen
    finally:
        tui.close()
        await process.stop(3.0, eof_first=False)
        await model.stop()
    assert "Traceback" not in process.stderr_text, process.stderr_text[-3000:]
