"""Keys and tokens never reach logs, stored threads or error messages, even at the most verbose log level.

Each test first proves the secret was really used (the model saw the Authorization header, the relay
accepted the token), so an assertion that it is absent from the logs can fail.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from app_server.tools.shell_snapshot import snapshot_lines
from tests.support.fake_model import exec_call, message, model_config, run_turn
from tests.support.remote import (
    MARKER,
    MARKER_VAR,
    TOKEN,
    app_server_turn,
    running_executor,
    running_relay,
)

API_KEY = "sk-canary-4f1d2a9e7b3c"
VERBOSE = {"PYCODEX_LOG": "trace", "RUST_LOG": "trace"}


def files_holding(root: Path, secret: str) -> list[Path]:
    needle = secret.encode()
    return [path for path in root.rglob("*") if path.is_file() and needle in path.read_bytes()]


async def test_the_model_api_key_is_sent_but_never_logged_or_stored(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([
        {"output": [exec_call("call_1", "echo ran")]},  # a command: the thread's shell snapshot is written
        {"output": [message("hello")]},
        {"status": 401, "body": {"error": {"message": "bad key", "type": "invalid_request_error"}}},
    ])
    model_config(codex_home, model.url, extra="")
    with (codex_home / "config.toml").open("a") as config:
        config.write('env_key = "PYCODEX_CANARY_KEY"\n')
    # A real process: its environment, stderr and shell snapshot are what a user would have.
    client = await app_server(env={**VERBOSE, "PYCODEX_CANARY_KEY": API_KEY}, subprocess=True)
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    assert (await run_turn(client, thread_id, "hi"))["status"] == "completed"
    assert (await run_turn(client, thread_id, "again"))["status"] == "failed"  # the 401 path logs its error
    await client.close()

    sent = [request["headers"].get("authorization") for request in model.requests()]
    assert sent and all(value == f"Bearer {API_KEY}" for value in sent)
    assert client.stderr_text.strip(), "the verbose run should have logged something"
    assert API_KEY not in client.stderr_text
    assert list((codex_home / "shell_snapshots").glob("*.sh")), "no shell snapshot was written"
    assert files_holding(codex_home, API_KEY) == []


def test_a_shell_snapshot_keeps_only_what_the_login_shell_changed() -> None:
    dump = b"\0".join([
        b"API_KEY=" + API_KEY.encode(), b"PATH=/opt/profile/bin:/usr/bin", b"PROFILE_ONLY=it's set",
        b"PWD=/somewhere", b"SHLVL=2", b"BASH_FUNC_x%%=() {  :\n}", b"",
    ])
    lines = snapshot_lines(dump, {"API_KEY": API_KEY, "PATH": "/usr/bin"})
    assert lines == ["export PATH=/opt/profile/bin:/usr/bin", "export PROFILE_ONLY='it'\"'\"'s set'"]


async def test_the_relay_token_reaches_the_registry_but_never_the_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(MARKER_VAR, MARKER)
    caplog.set_level(1)  # our relay and executor run in this process: capture everything they log
    stderr = tmp_path / "app-server.stderr"
    async with running_relay() as relay, running_executor(relay):
        workspace = await app_server_turn(
            [sys.executable, "-m", "pycodex", "app-server"], relay, tmp_path, extra_env=VERBOSE, stderr=stderr
        )
        requests = list(relay.registry.request_log)
    assert (workspace / "skew-output.txt").read_text() == MARKER  # the token was accepted: the turn ran
    assert requests, "the registry saw no request"
    logged = stderr.read_text(errors="replace")
    assert logged.strip(), "the verbose run should have logged something"
    assert TOKEN not in logged
    assert TOKEN not in caplog.text
    assert files_holding(tmp_path / "app_home", TOKEN) == []
