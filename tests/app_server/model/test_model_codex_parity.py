"""Our model client reports the same retry notices and final errors as Codex 0.169 for the same faults.

Each case runs the real Codex app-server against the fake Responses server, records its `error`
notifications, then replays the same script through `ModelClient` and compares the payloads.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from app_server.model import ModelClient, ModelError, ProviderConfig, RequestContext, RetryNotice
from app_server.model.retry import no_backoff
from tests.support.schema import find_codex_bin
from tests.support.tools import skip_without_codex

ROOT = Path(__file__).resolve().parents[3]
FAKE_SERVER = ROOT / "fixtures" / "fake_responses_server.py"
CODEX = find_codex_bin()

pytestmark = [
    pytest.mark.codex,
    skip_without_codex,
]

FAILED = {"output": [], "failed": {"code": "server_error", "message": "mock failed"}}
CASES: dict[str, list[Any]] = {
    "http_500": [{"status": 500, "body": "boom"}] * 4,
    "http_401": [{"status": 401, "body": {"error": {"message": "nope"}}}] * 2,
    "http_400": [{"status": 400, "body": "plain bad"}],
    "response_failed": [FAILED] * 2,
    "truncated": [{"output": [{"type": "message", "text": "x"}], "truncate_after": 2}] * 2,
    "stalled": [{"output": [{"type": "message", "text": "x"}], "stall_after": 1, "stall_s": 10}] * 2,
    "context_window": [{"output": [], "failed": {"code": "context_length_exceeded", "message": "long"}}],
}
RETRIES: dict[str, int] = {"request_max_retries": 1, "stream_max_retries": 1, "stream_idle_timeout_ms": 700}


class Fake:
    def __init__(self, tmp: Path, script: list[Any]) -> None:
        script_path = tmp / "script.json"
        script_path.write_text(json.dumps(script))
        self.proc = subprocess.Popen(
            [sys.executable, str(FAKE_SERVER), str(script_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline())

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=5)
        self.proc.stdout.close()


def codex_errors(tmp: Path, port: int) -> list[dict[str, Any]]:
    """Run one turn on Codex; return its `error` notification params up to the final one."""
    home, workspace = tmp / "home", tmp / "ws"
    home.mkdir()
    workspace.mkdir()
    (home / "config.toml").write_text(
        'model = "mock-model"\napproval_policy = "never"\nsandbox_mode = "read-only"\n'
        'model_provider = "mock"\n[model_providers.mock]\nname = "Mock"\n'
        f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\n'
        + "".join(f"{k} = {v}\n" for k, v in RETRIES.items())
    )
    env = {**os.environ, "CODEX_HOME": str(home), "RUST_LOG": "error"}
    proc = subprocess.Popen(
        [str(CODEX), "app-server"],
        cwd=workspace,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    errors: list[dict[str, Any]] = []

    def send(msg: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write((json.dumps(msg) + "\n").encode())
        proc.stdin.flush()

    def wait_for(predicate: Any, timeout: float) -> dict[str, Any]:
        assert proc.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 0.1)
            if not ready:
                continue
            line = proc.stdout.readline()
            if not line:
                break
            msg = json.loads(line)
            if msg.get("method") == "error":
                errors.append(msg["params"])
            if predicate(msg):
                return dict(msg)
        raise AssertionError("Codex did not answer in time")

    try:
        send({"id": 0, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "1"}}})
        wait_for(lambda m: m.get("id") == 0, 60)  # generous: Codex can be slow to start on a busy machine
        send({"id": 1, "method": "thread/start", "params": {"cwd": str(workspace)}})
        thread_id = wait_for(lambda m: m.get("id") == 1, 60)["result"]["thread"]["id"]
        send(
            {
                "id": 2,
                "method": "turn/start",
                "params": {"threadId": thread_id, "input": [{"type": "text", "text": "hi"}]},
            }
        )
        # As generous as the start-up waits: a busy 2-core machine was seen to take longer than 20 s here.
        wait_for(lambda m: m.get("method") == "error" and not m["params"]["willRetry"], 60)
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        proc.stdout.close()
    return errors


async def ours(port: int) -> list[dict[str, Any]]:
    provider = ProviderConfig(
        id="mock",
        name="Mock",
        base_url=f"http://127.0.0.1:{port}/v1",
        request_max_retries=RETRIES["request_max_retries"],
        stream_max_retries=RETRIES["stream_max_retries"],
        stream_idle_timeout_ms=RETRIES["stream_idle_timeout_ms"],
    )
    ctx = RequestContext(thread_id="t", turn_id="u", originator="t", user_agent="t/1")
    notices: list[RetryNotice] = []
    async with ModelClient(provider, env={}, backoff=no_backoff) as client:
        with pytest.raises(ModelError) as info:
            async for _ in client.stream({"model": "mock-model", "input": []}, ctx, on_retry=notices.append):
                pass
    payloads = [{"error": n.payload.to_wire(), "willRetry": True} for n in notices]
    return [*payloads, {"error": info.value.payload.to_wire(), "willRetry": False}]


def strip_port(value: Any, port: int) -> str:
    return json.dumps(value).replace(str(port), "PORT")


@pytest.mark.parametrize("case", sorted(CASES))
async def test_error_notifications_match_codex(tmp_path: Path, case: str) -> None:
    (tmp_path / "codex").mkdir()
    fake = Fake(tmp_path / "codex", CASES[case])
    try:
        theirs = [
            {"error": e["error"], "willRetry": e["willRetry"]}
            for e in codex_errors(tmp_path / "codex", fake.port)
        ]
        theirs_port = fake.port
    finally:
        fake.close()
    fake = Fake(tmp_path, CASES[case])
    try:
        mine = await ours(fake.port)
    finally:
        fake.close()
    assert strip_port(mine, fake.port) == strip_port(theirs, theirs_port)
