"""The typed client against real exec-servers (ours and Codex's) over loopback websockets and stdio."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from exec_client.client import ExecServerClient, ProcessEvent, ProcessSubscription
from exec_client.wire import protocol as p
from exec_client.wire.errors import NOT_FOUND, SESSION_ALREADY_ATTACHED, ExecServerClosed, ExecServerError
from pycodex.transport.memory import memory_pair
from tests.support.execserver import STEP, ServerProc, run_ws_server, server_argv, server_env, server_params

ENV = {"PATH": "/usr/bin:/bin"}


@pytest.fixture(params=server_params())
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProc]:
    with run_ws_server(request.param, tmp_path) as srv:
        yield srv


async def _all_events(sub: ProcessSubscription) -> list[ProcessEvent]:
    events: list[ProcessEvent] = []
    for _ in range(10_000):
        event = await sub.next(STEP)
        assert event is not None, "no event in time"
        events.append(event)
        if isinstance(event, p.ProcessClosed):
            return events
    raise AssertionError("too many events")


async def test_initialize_returns_the_session_and_environment_info(server: ServerProc) -> None:
    client = await ExecServerClient.connect_websocket(server.url)
    try:
        result = await client.initialize("pytest")
        assert client.session_id == result.session_id
        assert result.environment_info.executor_version == "0.169.0"
        assert result.environment_info.cwd.startswith("file:///")
    finally:
        await client.close()


async def test_a_started_process_streams_typed_events_in_order(server: ServerProc, tmp_path: Path) -> None:
    client = await ExecServerClient.connect_websocket(server.url)
    try:
        await client.initialize()
        sub = await client.start_process(
            "p", ["/bin/sh", "-c", "echo hi; echo oops >&2; exit 4"], tmp_path, ENV
        )
        events = await _all_events(sub)
        outputs = [e for e in events if isinstance(e, p.ProcessOutput)]
        assert sorted((o.stream, o.data) for o in outputs) == [("stderr", b"oops\n"), ("stdout", b"hi\n")]
        exited = [e for e in events if isinstance(e, p.ProcessExited)]
        assert [e.exit_code for e in exited] == [4]
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        read = await client.read_process("p", after_seq=0)
        assert read.closed and read.exit_code == 4 and read.next_seq == len(events) + 1
    finally:
        await client.close()


async def test_stdin_writes_and_terminate(server: ServerProc, tmp_path: Path) -> None:
    client = await ExecServerClient.connect_websocket(server.url)
    try:
        await client.initialize()
        sub = await client.start_process("cat", ["/bin/cat"], tmp_path, ENV, pipe_stdin=True)
        assert await client.write_process("cat", b"ping\n") == "accepted"
        first = await sub.next(STEP)
        assert isinstance(first, p.ProcessOutput) and first.data == b"ping\n"
        assert await client.terminate_process("cat") is True
        events = await _all_events(sub)
        assert [e.exit_code for e in events if isinstance(e, p.ProcessExited)] == [137]
        assert await client.write_process("nobody", b"x") == "unknownProcess"
    finally:
        await client.close()


async def test_fs_round_trip_and_typed_errors(server: ServerProc, tmp_path: Path) -> None:
    client = await ExecServerClient.connect_websocket(server.url)
    try:
        await client.initialize()
        await client.create_directory(tmp_path / "d" / "e", recursive=True)
        await client.write_file(tmp_path / "d" / "f.bin", bytes(range(256)))
        assert await client.read_file(tmp_path / "d" / "f.bin") == bytes(range(256))
        meta = await client.get_metadata(tmp_path / "d" / "f.bin")
        assert (meta.is_file, meta.size) == (True, 256)
        entries = await client.read_directory(tmp_path / "d")
        assert [(e.file_name, e.is_directory) for e in entries] == [("e", True), ("f.bin", False)]
        assert await client.canonicalize(tmp_path / "d" / "e" / "..") == (tmp_path / "d").resolve()
        await client.copy(tmp_path / "d" / "f.bin", tmp_path / "g.bin")
        await client.remove(tmp_path / "d", recursive=True)
        assert not (tmp_path / "d").exists() and (tmp_path / "g.bin").exists()
        with pytest.raises(ExecServerError) as info:
            await client.read_file(tmp_path / "missing")
        assert info.value.code == NOT_FOUND
    finally:
        await client.close()


async def _resume(url: str, session: str) -> ExecServerClient:
    """Resume, retrying while the server has not yet noticed the old connection is gone (-32010)."""
    for _ in range(100):
        client = await ExecServerClient.connect_websocket(url)
        try:
            await client.initialize(resume_session_id=session)
            return client
        except ExecServerError as exc:
            await client.close()
            if exc.code != SESSION_ALREADY_ATTACHED:
                raise
        await asyncio.sleep(0.1)
    raise AssertionError(f"session {session} stayed attached")


async def test_a_second_client_resumes_the_session_and_catches_up(server: ServerProc, tmp_path: Path) -> None:
    first = await ExecServerClient.connect_websocket(server.url)
    await first.initialize()
    session = first.session_id
    assert session is not None
    await first.start_process("r", ["/bin/sh", "-c", "echo before; sleep 0.3; echo after"], tmp_path, ENV)
    busy = await ExecServerClient.connect_websocket(server.url)
    try:
        with pytest.raises(ExecServerError) as info:
            await busy.initialize(resume_session_id=session)
        assert info.value.code == SESSION_ALREADY_ATTACHED
    finally:
        await busy.close()
    await first.close()
    second = await _resume(server.url, session)
    try:
        seen, after = b"", 0
        for _ in range(50):
            read = await second.read_process("r", after_seq=after, wait_ms=200)
            seen += b"".join(c.data for c in read.chunks)
            after = read.next_seq - 1
            if read.closed:
                break
        assert seen == b"before\nafter\n"
    finally:
        await second.close()


async def test_a_refused_connection_and_a_lost_one_raise_exec_server_closed(tmp_path: Path) -> None:
    token = tmp_path / "tok"
    token.write_text("right")
    with run_ws_server(
        "pycodex", tmp_path, "--ws-auth", "capability-token", "--ws-token-file", str(token)
    ) as srv:
        with pytest.raises(ExecServerClosed, match="HTTP 401"):
            await ExecServerClient.connect_websocket(srv.url, token="wrong")
        client = await ExecServerClient.connect_websocket(srv.url, token="right")
        await client.initialize()
        sub = await client.start_process("s", ["/bin/sleep", "30"], tmp_path, ENV)
        srv.proc.kill()
        await asyncio.wait_for(client.closed.wait(), STEP)
        with pytest.raises(ExecServerClosed):
            await sub.next(STEP)
        with pytest.raises(ExecServerClosed):
            await client.read_file(tmp_path / "tok")
        await client.close()


@pytest.mark.parametrize("name", server_params())
async def test_the_client_speaks_stdio_to_a_child_server(name: str, tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        *server_argv(name, "--listen", "stdio"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=server_env(tmp_path),
        cwd=tmp_path,
    )
    assert proc.stdin is not None and proc.stdout is not None
    client = ExecServerClient.over_stdio(proc.stdout, proc.stdin)
    try:
        await client.initialize()
        sub = await client.start_process("e", ["/bin/echo", "over stdio"], tmp_path, ENV)
        events = await _all_events(sub)
        assert [e.data for e in events if isinstance(e, p.ProcessOutput)] == [b"over stdio\n"]
        await client.close()
        assert await asyncio.wait_for(proc.wait(), STEP) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_a_process_event_missing_a_field_ends_the_wait_naming_the_field() -> None:
    """A skewed exec-server (``exitCode`` renamed): the subscriber is told which field, not only that the
    connection went away (the in-memory pair stands in for the server: one notification is all it sends)."""
    client_end, server_end = memory_pair()
    client = ExecServerClient(client_end)
    try:
        sub = client.subscribe("p")
        bad = {"method": "process/exited", "params": {"processId": "p", "seq": 1, "exitCodeRenamed": 0}}
        await server_end.send(json.dumps(bad).encode())
        with pytest.raises(ExecServerClosed) as caught:
            await sub.next(STEP)
        assert str(caught.value) == "exec-server sent an invalid process/exited: params.exitCode: Field required"
    finally:
        await client.close()
