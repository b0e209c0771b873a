"""The app-server's process edges: odd stdin, listener mistakes, SIGTERM.

Pinned to Codex 0.169.0: `app-server </dev/null` exits 0; a port in use or a malformed `--listen` ends
the process with one stderr line (no traceback); SIGTERM exits 0. Beyond Codex we promise that a running
turn is interrupted on SIGTERM the same way `turn/interrupt` ends it: the client hears
`turn/completed` (interrupted) and the rollout records the end, so a new process resumes it as such.
Every subprocess runs in its own process group, killed at teardown.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import IO, Any

import pytest

from tests.support import AppServerClient, app_server_env, default_argv
from tests.support.fake_model import message, model_config

INIT = {"clientInfo": {"name": "edges_test", "version": "1"}}
Run = Callable[..., Awaitable[tuple[int, bytes, str]]]


@pytest.fixture
async def run_cli(codex_home: Path, workspace: Path) -> AsyncIterator[Run]:
    """`await run_cli(*args, stdin=file)` -> (exit status, stdout, stderr); bounded, group killed at teardown."""
    procs: list[asyncio.subprocess.Process] = []

    async def run(*args: str, stdin: IO[bytes] | int | None = None, timeout: float = 20.0) -> tuple[int, bytes, str]:
        proc = await asyncio.create_subprocess_exec(
            *default_argv(*args), stdin=stdin, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env=app_server_env(codex_home), cwd=workspace, start_new_session=True,
        )
        procs.append(proc)
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
        assert proc.returncode is not None
        return proc.returncode, out, err.decode("utf-8", "replace")

    yield run
    for proc in procs:
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
            await asyncio.wait_for(proc.wait(), 10)


def _one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


# -- stdin that epoll cannot watch ------------------------------------------------------------------------

async def test_stdin_from_dev_null_exits_0_at_once_without_a_traceback(run_cli: Run) -> None:
    with open(os.devnull, "rb") as devnull:
        code, out, err = await run_cli(stdin=devnull)
    assert (code, out) == (0, b""), err
    assert "Traceback" not in err and "Error" not in err, err


async def test_stdin_from_a_regular_file_answers_every_request_then_exits_0(run_cli: Run, tmp_path: Path) -> None:
    lines = [
        {"id": 1, "method": "initialize", "params": INIT},
        {"id": 2, "method": "thread/loaded/list", "params": {}},
        {"id": "three", "method": "thread/start", "params": {}},
        {"id": 4, "method": "bogus/method", "params": {}},
        {"id": 5, "method": "thread/loaded/list", "params": {}},
    ]
    requests = tmp_path / "requests.jsonl"
    # A bad line in the middle and no newline after the last one: both ordinary in a file.
    requests.write_bytes(b"\n".join([*(json.dumps(m).encode() for m in lines[:3]), b"{bad json",
                                     *(json.dumps(m).encode() for m in lines[3:])]))
    with requests.open("rb") as stdin:
        code, out, err = await run_cli(stdin=stdin)
    assert code == 0, err
    replies = [json.loads(line) for line in out.splitlines()]
    answered = [r["id"] for r in replies if "id" in r and "method" not in r]
    assert answered == [1, 2, "three", 4, 5], replies
    by_id = {r["id"]: r for r in replies if "id" in r and "method" not in r}
    assert by_id[2]["result"] == {"data": [], "nextCursor": None}
    assert by_id["three"]["result"]["thread"]["id"]
    assert by_id[4]["error"]["code"] == -32601
    assert len(by_id[5]["result"]["data"]) == 1
    assert "Traceback" not in err


# -- listener mistakes: one line, no traceback --------------------------------------------------------

async def test_a_port_in_use_is_one_line_and_exit_1(run_cli: Run) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code, out, err = await run_cli("--listen", f"ws://127.0.0.1:{port}")
    assert (code, out) == (1, b"")
    assert _one_line(err) == f"Error: cannot listen on 127.0.0.1:{port}: Address already in use"


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ws://nosuch.invalid:4500", "invalid websocket --listen URL `{url}`; expected `ws://IP:PORT`"),
        ("ws://localhost:4500", "invalid websocket --listen URL `{url}`; expected `ws://IP:PORT`"),
        ("ws://127.0.0.1", "invalid websocket --listen URL `{url}`; expected `ws://IP:PORT`"),
        ("ws://127.0.0.1:99999", "invalid websocket --listen URL `{url}`; expected `ws://IP:PORT`"),
        ("ws://::1:4500", "invalid websocket --listen URL `{url}`; expected `ws://IP:PORT`"),
        ("http://127.0.0.1:4500", "unsupported --listen URL `{url}`; expected `stdio://`, `unix://`, `unix://PATH`, "
         "`ws://IP:PORT`, or `off`"),
    ],
)
async def test_a_malformed_or_host_name_listen_url_is_one_line_and_exit_2(run_cli: Run, url: str, reason: str) -> None:
    # Codex accepts IP addresses only (no resolution), and refuses anything else as a usage error.
    code, out, err = await run_cli("--listen", url)
    assert (code, out) == (2, b"")
    assert _one_line(err) == f"error: invalid value '{url}' for '--listen <URL>': {reason.format(url=url)}"


# -- SIGTERM -------------------------------------------------------------------------------------------

async def _wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() >= deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def test_sigterm_on_an_idle_stdio_server_exits_0(app_server: Any) -> None:
    client: AppServerClient = await app_server(subprocess=True)
    client.process.proc.send_signal(signal.SIGTERM)
    assert await client.wait_exit(10.0) == 0
    assert "Traceback" not in client.stderr_text


def _rollout_lines(codex_home: Path, thread_id: str) -> Sequence[dict[str, Any]]:
    found = [p for p in codex_home.rglob("*.jsonl") if thread_id in p.name]
    assert len(found) == 1, found
    return [json.loads(line) for line in found[0].read_text().splitlines() if line.strip()]


async def test_sigterm_interrupts_a_running_turn_tells_the_client_and_records_it(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [message("never finished")], "stall_after": 2, "stall_s": 30}])
    model_config(codex_home, model.url)
    first: AppServerClient = await app_server(subprocess=True)
    thread_id = (await first.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn = (await first.call("turn/start", {"threadId": thread_id,
                                            "input": [{"type": "text", "text": "hang on"}]}))["turn"]
    await first.wait_notification("turn/started", timeout=10)
    await _wait_for(lambda: bool(model.requests()), 10, "the model request")

    first.process.proc.send_signal(signal.SIGTERM)
    done = await first.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn["id"], timeout=10)
    assert done["params"]["turn"]["status"] == "interrupted"
    assert await first.wait_exit(10.0) == 0
    assert "Traceback" not in first.stderr_text

    # The end is in the rollout itself (not reconstructed after a crash) ...
    # recorded as Codex records an interrupted turn: a turn_aborted event
    ends = [rec["payload"] for rec in _rollout_lines(codex_home, thread_id) if rec["type"] == "event_msg"
            and rec["payload"].get("turn_id") == turn["id"]
            and rec["payload"]["type"] in ("task_complete", "turn_aborted")]
    assert [(e["type"], e.get("reason")) for e in ends] == [("turn_aborted", "interrupted")], ends
    # ... and a new process resumes the thread with the turn interrupted.
    second: AppServerClient = await app_server()
    resumed = await second.call("thread/resume", {"threadId": thread_id})
    assert [(t["id"], t["status"]) for t in resumed["thread"]["turns"]] == [(turn["id"], "interrupted")]


async def test_sigterm_on_a_websocket_server_exits_0(app_server_ws: Any) -> None:
    client = await app_server_ws()
    assert client.process is not None
    client.process.proc.send_signal(signal.SIGTERM)
    assert await client.process.wait_exit(10.0) == 0
    assert "Traceback" not in client.stderr_text
