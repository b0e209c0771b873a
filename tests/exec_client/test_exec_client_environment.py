"""One contract for every ``ExecutionEnvironment``: in-process local, and over our and Codex's exec-server."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from exec_client.client import ExecServerClient
from exec_client.environment import (
    ExecServerEnvironment,
    ExecutionEnvironment,
    OutputChunk,
    ProcessExit,
    ProcessSpec,
)
from exec_client.local_environment import LocalEnvironment
from tests.support.execserver import STEP, run_ws_server, server_params

ENV = {"PATH": "/usr/bin:/bin"}


def _env_params() -> list[object]:
    return [pytest.param("local", id="local")] + [
        pytest.param(f"exec-server-{p.values[0]}", id=f"exec-server-{p.id}", marks=p.marks)
        for p in server_params()
    ]


@pytest.fixture(params=_env_params())
async def env(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ExecutionEnvironment]:
    if request.param == "local":
        local = LocalEnvironment()
        yield local
        await local.close()
        return
    with run_ws_server(request.param.removeprefix("exec-server-"), tmp_path) as server:
        client = await ExecServerClient.connect_websocket(server.url)
        await client.initialize()
        remote = ExecServerEnvironment(client)
        yield remote
        await remote.close()


async def _collect(env: ExecutionEnvironment, spec: ProcessSpec) -> tuple[dict[str, bytes], int]:
    proc = await env.start(spec)
    out: dict[str, bytes] = {}
    code = None
    async for event in proc.events(STEP):
        if isinstance(event, OutputChunk):
            out[event.stream] = out.get(event.stream, b"") + event.data
        elif isinstance(event, ProcessExit):
            code = event.exit_code
    assert code is not None and proc.exit_code == code
    return out, code


async def test_output_streams_and_the_exit_code_come_back(env: ExecutionEnvironment, tmp_path: Path) -> None:
    spec = ProcessSpec(["/bin/sh", "-c", "echo out; echo err >&2; exit 5"], tmp_path, ENV)
    out, code = await _collect(env, spec)
    assert out == {"stdout": b"out\n", "stderr": b"err\n"} and code == 5


async def test_cwd_env_and_arg0_reach_the_child(env: ExecutionEnvironment, tmp_path: Path) -> None:
    spec = ProcessSpec(["/bin/sh", "-c", 'echo "$0 $(pwd) $X"'], tmp_path, {**ENV, "X": "y"}, arg0="zero")
    out, _ = await _collect(env, spec)
    assert out["stdout"] == f"zero {tmp_path} y\n".encode()


async def test_env_none_inherits_the_environments_own_variables(
    env: ExecutionEnvironment, tmp_path: Path
) -> None:
    out, _ = await _collect(env, ProcessSpec(["/bin/sh", "-c", "echo $HOME"], tmp_path))
    assert out["stdout"] == os.environ["HOME"].encode() + b"\n"


async def test_stdin_can_be_written(env: ExecutionEnvironment, tmp_path: Path) -> None:
    proc = await env.start(
        ProcessSpec(["/bin/sh", "-c", "read x; echo got-$x"], tmp_path, ENV, pipe_stdin=True)
    )
    assert await proc.write_stdin(b"abc\n")
    events = [event async for event in proc.events(STEP)]
    assert [e for e in events if isinstance(e, OutputChunk)] == [OutputChunk("stdout", b"got-abc\n")]
    assert proc.exit_code == 0


async def test_a_tty_process_sees_a_terminal(env: ExecutionEnvironment, tmp_path: Path) -> None:
    out, code = await _collect(
        env, ProcessSpec(["/bin/sh", "-c", "tty -s && echo yes"], tmp_path, ENV, tty=True)
    )
    assert out == {"pty": b"yes\r\n"} and code == 0


async def test_terminate_kills_the_group_and_reports_137(env: ExecutionEnvironment, tmp_path: Path) -> None:
    proc = await env.start(ProcessSpec(["/bin/sh", "-c", "sleep 30 & echo up; wait"], tmp_path, ENV))
    assert await proc.next_event(STEP) == OutputChunk("stdout", b"up\n")
    assert await proc.terminate() is True
    assert await proc.wait(STEP) == 137


async def test_interrupt_reports_130(env: ExecutionEnvironment, tmp_path: Path) -> None:
    proc = await env.start(ProcessSpec(["/bin/cat"], tmp_path, ENV, pipe_stdin=True))
    # The echo says cat runs: a SIGINT sent before the child has exec'd it would meet the forked
    # interpreter's handler and be lost (a fixed sleep lost that race on a loaded machine).
    assert await proc.write_stdin(b"up\n")
    assert await proc.next_event(STEP) == OutputChunk("stdout", b"up\n")
    await proc.interrupt()
    assert await proc.wait(STEP) == 130


async def test_next_event_times_out_with_none_while_the_process_is_quiet(
    env: ExecutionEnvironment, tmp_path: Path
) -> None:
    proc = await env.start(ProcessSpec(["/bin/sleep", "30"], tmp_path, ENV))
    assert await proc.next_event(0.2) is None and not proc.is_closed
    await proc.terminate()
    assert await proc.wait(STEP) == 137


async def test_files_can_be_written_read_listed_and_removed(
    env: ExecutionEnvironment, tmp_path: Path
) -> None:
    await env.create_directory(tmp_path / "a" / "b", recursive=True)
    await env.write_file(tmp_path / "a" / "f.txt", b"data")
    assert await env.read_file(tmp_path / "a" / "f.txt") == b"data"
    listing = await env.list_dir(tmp_path / "a")
    assert [(e.name, e.is_dir, e.is_file) for e in listing] == [("b", True, False), ("f.txt", False, True)]
    meta = await env.metadata(tmp_path / "a" / "f.txt")
    assert (meta.is_file, meta.is_dir, meta.size) == (True, False, 4)
    await env.remove(tmp_path / "a", recursive=True)
    assert not (tmp_path / "a").exists()
    with pytest.raises(FileNotFoundError):
        await env.read_file(tmp_path / "a" / "f.txt")
    with pytest.raises(FileNotFoundError):
        await env.metadata(tmp_path / "nothing")


async def test_canonicalize_resolves_dots_and_symlinks(env: ExecutionEnvironment, tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert await env.canonicalize(tmp_path / "link" / ".." / "link") == (tmp_path / "real").resolve()
    with pytest.raises(FileNotFoundError):
        await env.canonicalize(tmp_path / "nothing")
