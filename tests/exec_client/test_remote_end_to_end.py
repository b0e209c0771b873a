"""Our harness → our relay → our executor (the real exec-server session), all on 127.0.0.1 sockets."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

import pytest

from exec_client.remote import (
    NoiseRemoteConfig,
    RemoteAuthorizationRejected,
    RemoteConfigError,
    RemoteStreamReset,
)
from exec_client.wire import protocol as p
from exec_client.wire.relay_frames import RelayData, decode_frame
from relay.registry import AuthorizationDecision, fixed_policy
from tests.support.remote import (
    ENV_ID,
    STEP,
    TOKEN,
    harness_connector,
    running_executor,
    running_relay,
)

CANARY = "canary-7f3e9b1c-plaintext-must-not-leak"


async def test_json_rpc_runs_end_to_end_and_relay_data_is_encrypted(tmp_path: Path) -> None:
    capture = tmp_path / "frames.jsonl"
    target = tmp_path / "note.txt"
    target.write_text(CANARY * 4000)  # ~160 KiB: several records per message
    async with (
        running_relay(capture=capture) as relay,
        running_executor(relay),
        harness_connector(relay) as connector,
    ):
        client = await asyncio.wait_for(connector.open_client("noise-relay-test"), STEP)
        try:
            assert client.environment_info is not None
            assert (await asyncio.wait_for(client.read_file(target), STEP)).decode() == CANARY * 4000
            sub = await asyncio.wait_for(
                client.start_process(
                    "p1", ["/bin/sh", "-c", f"echo {CANARY}"], tmp_path, {"PATH": "/usr/bin:/bin"}
                ),
                STEP,
            )
            output = b""
            for _ in range(20):
                event = await sub.next(STEP)
                if event is None or isinstance(event, p.ProcessClosed):
                    break
                if isinstance(event, p.ProcessOutput):
                    output += base64.b64decode(event.chunk)
            assert output == f"{CANARY}\n".encode()
        finally:
            await client.close()

    frames = [json.loads(line) for line in capture.read_text().splitlines() if '"frame"' in line]
    decoded = [decode_frame(base64.b64decode(f["frame"])) for f in frames]
    data = [f.body.payload for f in decoded if isinstance(f.body, RelayData)]
    assert len(data) >= 4
    for payload in data:
        text = payload.decode("utf-8", errors="replace")
        for marker in ("initialize", "process/start", "fs/readFile", "noise-relay-test", CANARY, "canary"):
            assert marker not in text
    assert any(len(p) > 60 * 1024 for p in data), "the 160 KiB file should need full-size records"


async def test_a_401_from_validate_gives_the_harness_one_clear_rejection() -> None:
    policy = fixed_policy(AuthorizationDecision.UNAUTHORIZED)
    async with (
        running_relay(policy=policy) as relay,
        running_executor(relay),
        harness_connector(relay) as connector,
    ):
        with pytest.raises(RemoteAuthorizationRejected, match="rejected this harness") as rejected:
            await asyncio.wait_for(connector.open_client(attempts=5), STEP)
        assert rejected.value.environment_id == ENV_ID
        validations = [entry for entry in relay.registry.request_log if entry[1].endswith("/validate")]
        assert len(validations) == 1, "an authorization rejection must not be retried"


async def test_valid_false_from_the_registry_resets_the_stream_during_the_handshake() -> None:
    policy = fixed_policy(AuthorizationDecision.INVALID)
    async with (
        running_relay(policy=policy) as relay,
        running_executor(relay),
        harness_connector(relay) as connector,
    ):
        with pytest.raises(RemoteStreamReset) as reset:
            await asyncio.wait_for(connector.open_stream(), STEP)
        assert reset.value.reason == "noise_relay_protocol_error"


async def test_a_dropped_executor_websocket_reconnects_and_the_harness_resumes_its_session(
    tmp_path: Path,
) -> None:
    async with (
        running_relay() as relay,
        running_executor(relay) as (executor, _sessions),
        harness_connector(relay) as connector,
    ):
        client = await asyncio.wait_for(connector.open_client(), STEP)
        session_id = client.session_id
        script = "echo before; sleep 0.6; echo after"
        await asyncio.wait_for(client.start_process("p1", ["/bin/sh", "-c", script], tmp_path, {}), STEP)

        assert relay.rendezvous.drop_environment(ENV_ID)
        await asyncio.wait_for(client.closed.wait(), STEP)  # the relay reset the harness stream
        for _ in range(int(STEP / 0.02)):
            if executor.connections >= 2 and relay.rendezvous.executor_connected(ENV_ID):
                break
            await asyncio.sleep(0.02)
        assert executor.connections == 2
        registers = [e for e in relay.registry.request_log if e[1].endswith("/register")]
        assert len(registers) == 1, "reconnecting must not register again"

        await client.close()
        resumed = await asyncio.wait_for(connector.open_client(), STEP)
        try:
            assert resumed.session_id == session_id
            seen, after_seq = b"", 0
            for _ in range(50):  # until the process is closed, so nothing outlives the test
                read = await asyncio.wait_for(
                    resumed.read_process("p1", after_seq=after_seq, wait_ms=500), STEP
                )
                seen += b"".join(base64.b64decode(c.chunk) for c in read.chunks)
                after_seq = read.next_seq - 1
                if read.closed:
                    break
            assert read.closed
            # Output written while no harness was attached was buffered by the detached session.
            assert seen == b"before\nafter\n"
        finally:
            await resumed.close()


async def test_a_harness_that_leaves_can_resume_its_session_on_a_new_stream_at_once() -> None:
    # Without the relay's Reset on departure the executor would keep the old stream attached and
    # refuse the resume with -32010 until its own websocket reconnects (exec_server.md §6.1).
    async with running_relay() as relay, running_executor(relay), harness_connector(relay) as connector:
        first = await asyncio.wait_for(connector.open_client(), STEP)
        session_id = first.session_id
        await first.close()
        second = await asyncio.wait_for(connector.open_client(attempts=1), STEP)
        try:
            assert second.session_id == session_id
        finally:
            await second.close()


def test_the_harness_config_comes_from_the_codex_noise_environment_variables() -> None:
    env = {
        "CODEX_EXEC_SERVER_NOISE_REGISTRY_URL": "http://127.0.0.1:9",
        "CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID": ENV_ID,
        "CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN": TOKEN,
    }
    config = NoiseRemoteConfig.from_env(env)
    assert config == NoiseRemoteConfig("http://127.0.0.1:9", ENV_ID, TOKEN)
    assert TOKEN not in repr(config)
    assert NoiseRemoteConfig.from_env({}) is None
    with pytest.raises(RemoteConfigError, match="CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN not set"):
        NoiseRemoteConfig.from_env({k: v for k, v in env.items() if not k.endswith("AUTH_TOKEN")})
    with pytest.raises(RemoteConfigError, match="http"):
        NoiseRemoteConfig.from_env({**env, "CODEX_EXEC_SERVER_NOISE_REGISTRY_URL": "ftp://x"})
