"""A recorded debugging session: one pycodex app-server turn with an approval, run on a remote executor.

Everything is real and on 127.0.0.1: ``pycodex mock-model`` (through the CLI) plays the model, the relay
and our executor run in-process (tests/support/remote.py), and ``pycodex app-server`` logs at debug
level as JSON. The debugging commands are then tested on the CODEX_HOME it leaves behind.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.appserver_process import write_codex_config
from tests.support.fake_model import exec_call, message
from tests.support.remote import (
    ENV_ID,
    STEP,
    TOKEN,
    codex_env,
    process,
    running_executor,
    running_relay,
)

PYCODEX = [sys.executable, "-m", "pycodex"]
ANSWER = "the approved file is written"


@dataclass(frozen=True)
class RecordedSession:
    home: Path
    workspace: Path
    thread_id: str
    turn_id: str
    stderr: Path  # the app-server's stderr (PYCODEX_LOG=debug, PYCODEX_LOG_FORMAT=json)
    requests: Path  # the mock model's request log
    messages: list[dict[str, Any]]  # every protocol line the app-server wrote


async def _read(proc: Any, seen: list[dict[str, Any]]) -> dict[str, Any]:
    line = await asyncio.wait_for(proc.stdout.readline(), STEP)
    assert line, "process ended early"
    parsed: dict[str, Any] = json.loads(line)
    seen.append(parsed)
    return parsed


async def _send(proc: Any, payload: dict[str, Any]) -> None:
    proc.stdin.write(json.dumps(payload).encode() + b"\n")
    await proc.stdin.drain()


async def _call(proc: Any, seen: list[dict[str, Any]], request_id: int, method: str, params: Any) -> Any:
    await _send(proc, {"id": request_id, "method": method, "params": params})
    for _ in range(10_000):
        msg = await _read(proc, seen)
        if msg.get("id") == request_id and "method" not in msg:
            assert "error" not in msg, msg
            return msg["result"]
    raise AssertionError(f"no answer to {method}")


async def record_session(root: Path) -> RecordedSession:
    workspace, home = root / "workspace", root / "home"
    workspace.mkdir(parents=True)
    script = root / "model.json"
    escalated = exec_call("call_approved", "printf approved > approved.txt", workdir=str(workspace),
                          sandbox_permissions="require_escalated", justification="write the file")
    script.write_text(json.dumps([[escalated], [message(ANSWER)]]))
    requests, stderr = root / "requests.jsonl", root / "app-server.stderr"
    mock_argv = [*PYCODEX, "mock-model", "--script", str(script), "--listen", "127.0.0.1:0", "--log", str(requests)]
    seen: list[dict[str, Any]] = []
    async with running_relay() as relay, running_executor(relay), \
            process(mock_argv, dict(os.environ), root, pipes=True) as model:
        base_url = (await asyncio.wait_for(model.stdout.readline(), STEP)).decode().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1"), base_url
        write_codex_config(home, base_url=base_url, approval_policy="on-request")
        env = codex_env(home) | {
            "PYCODEX_LOG": "debug", "PYCODEX_LOG_FORMAT": "json",
            "CODEX_EXEC_SERVER_NOISE_REGISTRY_URL": relay.registry_url,
            "CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID": ENV_ID,
            "CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN": TOKEN,
        }
        async with process([*PYCODEX, "app-server"], env, root, pipes=True, stderr=stderr) as app:
            await _call(app, seen, 1, "initialize", {"clientInfo": {"name": "debug-test", "version": "0"}})
            await _send(app, {"method": "initialized"})
            thread = (await _call(app, seen, 2, "thread/start", {"cwd": str(workspace)}))["thread"]
            turn = (await _call(app, seen, 3, "turn/start", {
                "threadId": thread["id"], "input": [{"type": "text", "text": "write the file"}]}))["turn"]
            for _ in range(10_000):
                msg = await _read(app, seen)
                if msg.get("method") == "item/commandExecution/requestApproval":
                    await _send(app, {"id": msg["id"], "result": {"decision": "accept"}})
                if msg.get("method") == "turn/completed":
                    break
            app.stdin.close()
            await asyncio.wait_for(app.wait(), STEP)
    return RecordedSession(home, workspace, thread["id"], turn["id"], stderr, requests, seen)
