"""The real Codex 0.169 TUI drives a turn in which the model patches a file, against pycodex's app-server and,
with the same steps, against Codex's own (which proves the steps).

The model (a slug without metadata, so no apply_patch tool) sends the patch through the shell, as models do:
`apply_patch <<'EOF' ... EOF`, which the server intercepts. The TUI runs read-only, so the edit needs the
user's approval: the file-change prompt shows, the user approves, the file is changed on disk, and `/diff`
(the TUI's git diff of its cwd, which is the server's here) shows the change.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import exec_call, message, model_config
from tests.support.tools import require_tmux
from tests.support.tui import Tui, error_lines, remote_app_server

pytestmark = [pytest.mark.codex, pytest.mark.timeout(240)]

PROMPT = "Ask Codex to do anything"
READY = "mock-model default · "
PATCH = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-old line\n+new line from the patch\n*** End Patch\n"
SCRIPT = [
    {"output": [exec_call("c1", f"apply_patch <<'EOF'\n{PATCH}EOF\n", yield_time_ms=30_000)]},
    {"output": [message('{"title":"Patch notes"}')]},
    {"output": [message("notes patched")]},
]
EDIT_PROMPT = "Would you like to make the following edits?"


@pytest.fixture
def tui(tmp_path: Path) -> Any:
    require_tmux()
    session = Tui(f"pycodex-tui-patch-{os.getpid()}", tmp_path)
    yield session
    session.close()


# The TUI against Codex's own app-server proves the scripted steps and screens (the test's expectations), not
# pycodex: it runs with PYCODEX_SLOW=1; the pycodex server stays in the default run.
@pytest.fixture(params=["pycodex", pytest.param("codex", marks=pytest.mark.slow)])
def server_kind(request: Any) -> str:
    return str(request.param)


def _git(cwd: Path, *args: str) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, timeout=30)


async def _approve(tui: Tui, attempts: int = 5) -> None:
    """Press "y" on the edit prompt; a key sent while the prompt is still drawing can be lost (bounded retries)."""
    for _ in range(attempts):
        tui.key("y")
        try:
            await tui.wait_until("the prompt gone", lambda s: EDIT_PROMPT not in s, timeout=4)
            return
        except AssertionError:
            continue
    raise AssertionError(f"the approval was not taken after {attempts} presses:\n{tui.screen()}")


async def test_tui_approves_a_patch_and_shows_it_in_diff(
    tui: Tui, server_kind: str, codex_bin: Path, tmp_path: Path
) -> None:
    async with remote_app_server(server_kind, SCRIPT, codex_bin, tmp_path) as remote:
        client_home = tmp_path / "client_home"
        model_config(client_home, remote.model.url, approval_policy="on-request", sandbox_mode="read-only")
        env = {"CODEX_HOME": str(client_home), "TERM": "xterm-256color", "PATH": os.environ.get("PATH", ""),
               "HOME": str(tmp_path)}
        cwd = tmp_path / "server_cwd"  # a remote thread runs in the server's cwd; the TUI runs there too
        (cwd / "notes.txt").write_text("old line\n")
        _git(cwd, "init", "-q")
        _git(cwd, "add", "notes.txt")
        _git(cwd, "commit", "-qm", "start")
        tui.start([str(codex_bin), "--remote", remote.url], env, cwd)
        await tui.wait_until("the composer", lambda s: PROMPT in s and READY in s)
        await tui.submit("patch the notes")
        screen = await tui.wait_for(EDIT_PROMPT)
        assert "notes.txt" in screen, screen
        await _approve(tui)
        screen = await tui.wait_for("notes patched")
        assert not error_lines(screen), screen
        assert (cwd / "notes.txt").read_text() == "new line from the patch\n"
        await tui.submit("/diff")
        screen = await tui.wait_for("+new line from the patch")
        assert "-old line" in screen, screen
