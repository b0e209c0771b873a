"""Our relay, executor and harness against the real Codex 0.169.0 binary (the version-skew shape of seed 003).

* our relay + Codex ``exec-server --remote`` + our harness channel: ``initialize``, ``fs/readFile``, a process;
* Codex ``app-server`` (``CODEX_EXEC_SERVER_NOISE_*``) → our relay → our executor or Codex's executor: a full
  model turn whose ``exec_command`` writes a marker only the executor's environment knows; every relayed
  data frame is checked for plaintext.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import pytest

from exec_client.wire import protocol as p
from tests.support.remote import (
    ENV_ID,
    MARKER,
    MARKER_VAR,
    app_server_turn,
    assert_relay_data_is_encrypted,
    codex_exec_server,
    harness_connector,
    running_executor,
    running_relay,
)

pytestmark = pytest.mark.codex

#: The version-skew test (seed 003) runs its turn under this sandbox mode.
SEED_SANDBOX = "workspace-write"

ROOT = Path(__file__).resolve().parents[2]
WAIT = 30.0


async def test_our_harness_drives_codex_exec_server_through_our_relay(
    codex_bin: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    capture = tmp_path / "frames.jsonl"
    target = tmp_path / "readme.txt"
    target.write_text("noise-relay-test file body\n")
    async with (
        running_relay(capture=capture) as relay,
        codex_exec_server(codex_bin, relay, home),
        harness_connector(relay) as connector,
    ):
        client = await asyncio.wait_for(connector.open_client("noise-relay-test"), WAIT)
        try:
            assert client.environment_info is not None
            assert client.environment_info.executor_version == "0.169.0"
            assert await asyncio.wait_for(client.read_file(target), WAIT) == target.read_bytes()
            argv = ["/bin/sh", "-c", f'printf "%s" "${MARKER_VAR}"']
            sub = await asyncio.wait_for(
                client.start_process("p1", argv, tmp_path, {MARKER_VAR: MARKER}), WAIT
            )
            output = b""
            for _ in range(50):
                event = await sub.next(WAIT)
                if event is None or isinstance(event, p.ProcessClosed):
                    break
                if isinstance(event, p.ProcessOutput):
                    output += base64.b64decode(event.chunk)
            assert output == MARKER.encode()
        finally:
            await client.close()
    assert_relay_data_is_encrypted(capture, ("initialize", "process/start", "noise-relay-test", MARKER))


async def test_codex_app_server_runs_a_turn_on_our_executor_through_our_relay(
    codex_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MARKER_VAR, MARKER)  # our executor runs in this process: only it knows the marker
    capture = tmp_path / "frames.jsonl"
    async with running_relay(capture=capture) as relay, running_executor(relay):
        workspace = await app_server_turn(
            [str(codex_bin), "app-server"], relay, tmp_path, sandbox_mode=SEED_SANDBOX
        )
    assert (workspace / "skew-output.txt").read_text() == MARKER
    assert_relay_data_is_encrypted(capture, ("initialize", "process/start", MARKER))
    actions = [path.rpartition("/")[2] for _, path, _ in relay.registry.request_log]
    assert actions == ["register", "connect", "validate"]


async def test_codex_app_server_runs_a_turn_on_codex_exec_server_through_our_relay(
    codex_bin: Path, tmp_path: Path
) -> None:
    home = tmp_path / "executor_home"
    home.mkdir()
    capture = tmp_path / "frames.jsonl"
    async with running_relay(capture=capture) as relay, codex_exec_server(codex_bin, relay, home):
        workspace = await app_server_turn(
            [str(codex_bin), "app-server"], relay, tmp_path, sandbox_mode=SEED_SANDBOX
        )
    assert (workspace / "skew-output.txt").read_text() == MARKER
    assert_relay_data_is_encrypted(capture, ("initialize", "process/start", MARKER))
    actions = [path.rpartition("/")[2] for _, path, _ in relay.registry.request_log]
    assert actions == ["register", "connect", "validate"]


async def test_codex_app_server_recovers_from_an_executor_websocket_drop_through_our_relay(
    codex_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MARKER_VAR, MARKER)
    async with running_relay() as relay, running_executor(relay) as (executor, _):

        async def drop_executor() -> None:
            for _ in range(int(WAIT / 0.05)):  # the app-server dials lazily after thread/start
                if relay.rendezvous.stream_count(ENV_ID):
                    break
                await asyncio.sleep(0.05)
            assert relay.rendezvous.drop_environment(ENV_ID)
            for _ in range(int(WAIT / 0.05)):
                if executor.connections == 2 and relay.rendezvous.executor_connected(ENV_ID):
                    return
                await asyncio.sleep(0.05)
            raise AssertionError("our executor did not reconnect")

        workspace = await app_server_turn(
            [str(codex_bin), "app-server"], relay, tmp_path, before_turn=drop_executor
        )
    assert (workspace / "skew-output.txt").read_text() == MARKER
    actions = [path.rpartition("/")[2] for _, path, _ in relay.registry.request_log]
    assert actions.count("register") == 1
    assert actions.count("validate") == 2, "the app-server opened a second stream after the drop"
