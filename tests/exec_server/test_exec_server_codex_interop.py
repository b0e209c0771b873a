"""Codex's own app-server drives OUR exec-server through a whole model turn (``CODEX_EXEC_SERVER_URL``).

A scripted Responses endpoint asks for one ``exec_command``; the command must run on our executor, and
the turn must complete. This is the consumer our wire has to satisfy, so it is worth one slower test.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.execserver import CODEX_BIN, STEP, run_ws_server
from tests.support.tools import skip_without_codex

pytestmark = [
    pytest.mark.codex,
    skip_without_codex,
]

USAGE = {
    "input_tokens": 100,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 20,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 120,
}


def _sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def _turn(n: int, item: dict[str, Any]) -> bytes:
    rid = f"resp_{n}"
    return _sse(
        [
            {"type": "response.created", "response": {"id": rid}},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {"id": rid, "usage": USAGE}},
        ]
    )


SCRIPT = [
    _turn(
        1,
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "exec_command",
            "arguments": json.dumps({"cmd": "printf hi > out.txt && echo made-it-on-$EXECUTOR_MARK"}),
        },
    ),
    _turn(
        2,
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_2",
            "content": [{"type": "output_text", "text": "done", "annotations": []}],
        },
    ),
]


@contextlib.asynccontextmanager
async def scripted_model() -> AsyncIterator[tuple[int, list[bytes]]]:
    """A tiny HTTP server answering each POST /v1/responses with the next scripted SSE body."""
    bodies: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), STEP)
            length = 0
            for line in head.decode("latin-1").split("\r\n"):
                if line.lower().startswith("content-length:"):
                    length = int(line.split(":", 1)[1])
            bodies.append(await asyncio.wait_for(reader.readexactly(length), STEP))
            payload = SCRIPT[min(len(bodies), len(SCRIPT)) - 1]
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                + f"content-length: {len(payload)}\r\nconnection: close\r\n\r\n".encode()
                + payload
            )
            await writer.drain()
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], bodies
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("sandbox_mode", ["danger-full-access", "workspace-write"])
async def test_codex_app_server_runs_a_command_on_our_exec_server(tmp_path: Path, sandbox_mode: str) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    home = tmp_path / "app_home"
    home.mkdir()
    with run_ws_server("pycodex", tmp_path, env_extra={"EXECUTOR_MARK": "pycodex"}) as executor:
        async with scripted_model() as (port, bodies):
            (home / "config.toml").write_text(
                f'model = "mock-model"\napproval_policy = "never"\nsandbox_mode = "{sandbox_mode}"\n'
                'model_provider = "mock_provider"\n[model_providers.mock_provider]\nname = "Mock"\n'
                f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\n'
                "request_max_retries = 0\nstream_max_retries = 0\n"
            )
            env = {
                **os.environ,
                "CODEX_HOME": str(home),
                "CODEX_API_KEY": "dummy",
                "CODEX_EXEC_SERVER_URL": executor.url,
                "RUST_LOG": "warn",
            }
            app = await asyncio.create_subprocess_exec(
                str(CODEX_BIN),
                "app-server",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                env=env,
                cwd=workspace,
                start_new_session=True,
            )
            try:
                completed = await asyncio.wait_for(_drive_turn(app, workspace), 30)
            finally:
                if app.returncode is None:
                    app.kill()
                    await app.wait()
    assert completed["turn"]["status"] == "completed", completed
    assert (workspace / "out.txt").read_text() == "hi"
    follow_up = json.loads(bodies[1])
    outputs = [i for i in follow_up["input"] if i.get("type") == "function_call_output"]
    assert (
        "made-it-on-pycodex" in outputs[0]["output"] and "Process exited with code 0" in outputs[0]["output"]
    )


async def _drive_turn(app: asyncio.subprocess.Process, workspace: Path) -> dict[str, Any]:
    assert app.stdin is not None and app.stdout is not None

    async def send(msg: dict[str, Any]) -> None:
        assert app.stdin is not None
        app.stdin.write(json.dumps(msg).encode() + b"\n")
        await app.stdin.drain()

    async def until(pred: Any) -> dict[str, Any]:
        assert app.stdout is not None
        for _ in range(10_000):
            line = await app.stdout.readline()
            assert line, "app-server closed stdout"
            msg: dict[str, Any] = json.loads(line)
            if pred(msg):
                return msg
        raise AssertionError("message never came")

    await send(
        {"id": 0, "method": "initialize", "params": {"clientInfo": {"name": "pytest", "version": "0"}}}
    )
    await until(lambda m: m.get("id") == 0)
    await send({"method": "initialized"})
    await send({"id": 1, "method": "thread/start", "params": {"cwd": str(workspace)}})
    thread = (await until(lambda m: m.get("id") == 1))["result"]["thread"]["id"]
    text = {"type": "text", "text": "make out.txt", "textElements": []}
    await send({"id": 2, "method": "turn/start", "params": {"threadId": thread, "input": [text]}})
    done = await until(lambda m: m.get("method") == "turn/completed")
    params: dict[str, Any] = done["params"]
    return params
