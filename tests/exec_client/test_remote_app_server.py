"""Our ``pycodex app-server`` as the harness: ``CODEX_EXEC_SERVER_NOISE_*`` → our relay → an executor.

A real app-server subprocess, the scripted fake Responses server and a model turn whose
``exec_command`` writes a marker only the executor's environment holds, as in the version-skew test.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.remote import (
    MARKER,
    MARKER_VAR,
    app_server_turn,
    assert_relay_data_is_encrypted,
    codex_exec_server,
    running_executor,
    running_relay,
)
from tests.support.tools import require_codex

PYCODEX_APP_SERVER = [sys.executable, "-m", "pycodex", "app-server"]


async def test_pycodex_app_server_runs_a_turn_on_our_executor_through_our_relay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MARKER_VAR, MARKER)  # our executor runs in this process: only it knows the marker
    capture = tmp_path / "frames.jsonl"
    async with running_relay(capture=capture) as relay, running_executor(relay):
        workspace = await app_server_turn(PYCODEX_APP_SERVER, relay, tmp_path)
    assert (workspace / "skew-output.txt").read_text() == MARKER
    assert_relay_data_is_encrypted(capture, ("initialize", "process/start", MARKER))


@pytest.mark.codex
async def test_pycodex_app_server_runs_a_turn_on_codex_exec_server_through_our_relay(tmp_path: Path) -> None:
    codex_bin = require_codex()
    capture = tmp_path / "frames.jsonl"
    async with (
        running_relay(capture=capture) as relay,
        codex_exec_server(codex_bin, relay, tmp_path / "home"),
    ):
        workspace = await app_server_turn(PYCODEX_APP_SERVER, relay, tmp_path)
    assert (workspace / "skew-output.txt").read_text() == MARKER
    assert_relay_data_is_encrypted(capture, ("initialize", "process/start", MARKER))
    actions = [path.rpartition("/")[2] for _, path, _ in relay.registry.request_log]
    assert actions == ["register", "connect", "validate"]
