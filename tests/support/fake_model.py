"""The fake Responses server (fixtures/fake_responses_server.py) as a real subprocess for tests."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from .procs import kill_group, spawn

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / "fixtures" / "fake_responses_server.py"


class FakeModel:
    """A running fake model server: ``url`` for config, ``requests()`` for what it received."""

    def __init__(self, proc: asyncio.subprocess.Process, port: int, log: Path) -> None:
        self.proc = proc
        self.port = port
        self.log = log

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @classmethod
    async def start(cls, script: list[Any] | dict[str, Any], tmp: Path) -> FakeModel:
        tmp.mkdir(parents=True, exist_ok=True)
        script_path = tmp / "model_script.json"
        script_path.write_text(json.dumps(script))
        log = tmp / "model_requests.jsonl"
        proc = await spawn(
            sys.executable, str(SERVER), str(script_path), "--log", str(log),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 10)
        return cls(proc, int(line.strip()), log)

    def requests(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    async def stop(self) -> None:
        if self.proc.returncode is None:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            try:
                await asyncio.wait_for(self.proc.wait(), 5)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        kill_group(self.proc.pid)


def model_config(codex_home: Path, url: str, *, approval_policy: str | None = "never",
                 sandbox_mode: str | None = "workspace-write", extra: str = "") -> None:
    """A config.toml for the fake model at ``url``. The sandbox is explicit (workspace-write unless told):
    with none configured, the project's trust decides it, and an unknown directory starts read-only.
    ``None`` leaves a key out."""
    codex_home.mkdir(parents=True, exist_ok=True)
    approval = f'approval_policy = "{approval_policy}"\n' if approval_policy is not None else ""
    sandbox = f'sandbox_mode = "{sandbox_mode}"\n' if sandbox_mode is not None else ""
    (codex_home / "config.toml").write_text(
        f'model = "mock-model"\n{approval}{sandbox}'
        f'model_provider = "mock_provider"\n{extra}\n[model_providers.mock_provider]\nname = "Mock provider"\n'
        f'base_url = "{url}"\nwire_api = "responses"\nrequest_max_retries = 0\nstream_max_retries = 0\n'
    )


def exec_call(call_id: str, cmd: str, **extra: Any) -> dict[str, Any]:
    return {"type": "function_call", "name": "exec_command", "call_id": call_id,
            "arguments": json.dumps({"cmd": cmd, **extra})}


def message(text: str, *, deltas: list[str] | None = None, item_id: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "message", "text": text}
    if deltas is not None:
        spec["deltas"] = deltas
    if item_id is not None:
        spec["id"] = item_id
    return spec


async def run_turn(client: Any, thread_id: str, text: str, *, timeout: float = 15, **extra: Any) -> dict[str, Any]:
    """Start a text turn (``extra`` adds turn/start params) and return its ``turn/completed`` turn."""
    turn = (
        await client.call(
            "turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": text}], **extra}
        )
    )["turn"]
    done = await client.wait_notification(
        "turn/completed", lambda p: p["turn"]["id"] == turn["id"], timeout=timeout
    )
    final: dict[str, Any] = done["params"]["turn"]
    return final


async def ok_model(fake_model: Any, codex_home: Path) -> FakeModel:
    """A fake model answering every request with the message "ok", configured as ``codex_home``'s provider
    (``fake_model`` is the conftest fixture that starts and stops it)."""
    model: FakeModel = await fake_model({"responses": [{"output": [message("ok")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    return model


async def thread_with_a_turn(client: Any, workspace: Path, text: str = "hello") -> str:
    """Start a thread in ``workspace``, run one text turn on it, and return the thread id."""
    thread_id: str = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, thread_id, text)
    return thread_id
