"""command/exec (buffered, streamed, stdin, PTY resize, terminate, timeout, cap, sandbox) and process/*."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tests.support.appserver import AppServerClient
from tests.support.errors import as_codex
from tests.support.tools import skip_without_landlock

Start = Callable[..., Awaitable[AppServerClient]]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def start(client: AppServerClient, rid: str, params: dict[str, Any]) -> None:
    """Send command/exec without waiting: requests on one connection are dispatched in order, so the
    process is registered before any follow-up request sent after this one is handled."""
    await client.send({"id": rid, "method": "command/exec", "params": params})


def joined(notes: list[dict[str, Any]], stream: str) -> bytes:
    return b"".join(base64.b64decode(n["params"]["deltaBase64"]) for n in notes if n["params"]["stream"] == stream)


async def test_buffered_exec(app_server: Start, tmp_path: Path) -> None:
    client = await app_server()
    result = await client.call("command/exec", {"command": ["sh", "-c", "echo out; echo err >&2; exit 3"]})
    assert result == {"exitCode": 3, "stdout": "out\n", "stderr": "err\n"}
    cwd = await client.call("command/exec", {"command": ["pwd"], "cwd": str(tmp_path), "env": {"X": "1"}})
    assert cwd["stdout"].strip() == str(tmp_path)
    env = await client.call("command/exec", {"command": ["sh", "-c", "echo ${X-unset}"], "env": {"X": "v"}})
    assert env["stdout"] == "v\n"
    capped = await client.call("command/exec", {"command": ["head", "-c", "5000", "/dev/zero"], "outputBytesCap": 10})
    assert capped["stdout"] == "\0" * 10 and capped["exitCode"] == 0
    slow = await client.call("command/exec", {"command": ["sleep", "30"], "timeoutMs": 100})
    assert slow["exitCode"] == 124
    empty = await client.request("command/exec", {"command": []})
    assert empty["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                              "message": "command must not be empty"}
    missing = await client.request("command/exec", {"command": ["nosuch-cmd"], "sandboxPolicy": {"type": "dangerFullAccess"}})
    assert missing["error"] == {"code": -32603, "data": {"appErrorCode": "internal_error"},
                                "message": "failed to spawn command: No such file or directory (os error 2)"}
    both = await client.request("command/exec", {"command": ["true"], "timeoutMs": 5, "disableTimeout": True})
    assert both["error"] == {"code": -32602, "data": {"appErrorCode": "invalid_params"},
                             "message": "command/exec cannot set both timeoutMs and disableTimeout"}
    needs_id = await client.request("command/exec", {"command": ["true"], "streamStdoutStderr": True})
    assert needs_id["error"]["message"] == "command/exec tty or streaming requires a client-supplied processId"


async def test_streaming_stdin_and_terminate(app_server: Start) -> None:
    client = await app_server()
    streamed = await client.call("command/exec", {
        "command": ["sh", "-c", "echo out; echo err >&2"], "processId": "s1", "streamStdoutStderr": True})
    assert streamed == {"exitCode": 0, "stdout": "", "stderr": ""}
    notes = client.notifications("command/exec/outputDelta")
    assert joined(notes, "stdout") == b"out\n" and joined(notes, "stderr") == b"err\n"
    assert all(n["params"]["processId"] == "s1" and n["params"]["capReached"] is False for n in notes)

    # The command answers when it exits; writes and terminate are served meanwhile.
    await start(client, "cat", {"command": ["cat"], "processId": "c1", "streamStdin": True})
    assert await client.call("command/exec/write", {"processId": "c1", "deltaBase64": b64(b"hello")}) == {}
    assert await client.call("command/exec/write", {"processId": "c1", "closeStdin": True}) == {}
    assert (await client.wait_response("cat"))["result"] == {"exitCode": 0, "stdout": "hello", "stderr": ""}
    neither = await client.request("command/exec/write", {"processId": "c1"})
    assert neither["error"] == {"code": -32602, "data": {"appErrorCode": "invalid_params"},
                                "message": "command/exec/write requires deltaBase64 or closeStdin"}

    await start(client, "sleep", {"command": ["sleep", "30"], "processId": "t1"})
    assert await client.call("command/exec/terminate", {"processId": "t1"}) == {}
    assert (await client.wait_response("sleep"))["result"]["exitCode"] == 137
    gone = await client.request("command/exec/terminate", {"processId": "t1"})
    assert gone["error"] == {"code": -32600, "data": {"appErrorCode": "process_not_found"},
                             "message": 'no active command/exec for process id "t1"'}


async def test_pty_resize(app_server: Start) -> None:
    client = await app_server()
    await start(client, "tty", {"command": ["sh", "-c", "read x; stty size"], "processId": "p", "tty": True,
                                "size": {"rows": 24, "cols": 80}})
    assert await client.call("command/exec/resize", {"processId": "p", "size": {"rows": 7, "cols": 33}}) == {}
    await client.call("command/exec/write", {"processId": "p", "deltaBase64": b64(b"go\n")})
    assert (await client.wait_response("tty"))["result"]["exitCode"] == 0
    assert b"7 33" in joined(client.notifications("command/exec/outputDelta"), "stdout")
    await start(client, "pipes", {"command": ["sleep", "30"], "processId": "q"})
    reply = await client.request("command/exec/resize", {"processId": "q", "size": {"rows": 1, "cols": 1}})
    assert reply["error"]["message"] == "failed to resize PTY: process is not attached to a PTY"
    await client.call("command/exec/terminate", {"processId": "q"})
    await client.wait_response("pipes")


@skip_without_landlock()
async def test_sandbox_policy(app_server: Start, tmp_path: Path) -> None:
    client = await app_server()
    target = tmp_path / "x"
    denied = await client.call("command/exec", {
        "command": ["touch", str(target)], "sandboxPolicy": {"type": "readOnly"}})
    assert denied["exitCode"] != 0 and not target.exists()
    allowed = await client.call("command/exec", {
        "command": ["touch", str(target)], "sandboxPolicy": {"type": "dangerFullAccess"}})
    assert allowed["exitCode"] == 0 and target.exists()


async def test_a_sandbox_policy_of_an_unknown_type_or_with_a_relative_root_is_refused(
    app_server: Start, tmp_path: Path
) -> None:
    """Fail closed, as Codex 0.169 does: nothing runs under a policy the server cannot read exactly."""
    client = await app_server()
    target = tmp_path / "ran"
    unknown = await client.request("command/exec", {
        "command": ["touch", str(target)], "sandboxPolicy": {"type": "bogus"}})
    assert unknown["error"]["code"] == -32602 and "unknown variant `bogus`" in unknown["error"]["message"]
    relative = await client.request("command/exec", {
        "command": ["touch", str(target)], "sandboxPolicy": {"type": "workspaceWrite", "writableRoots": ["rel"]}})
    assert as_codex(relative["error"]) == {"code": -32600,
                                 "message": "Invalid request: AbsolutePathBuf deserialized without a base path"}
    assert not target.exists()


async def test_process_spawn_family(app_server: Start, tmp_path: Path) -> None:
    client = await app_server(experimental=True)
    assert await client.call("process/spawn", {
        "command": ["sh", "-c", "echo a; echo b >&2"], "cwd": str(tmp_path), "processHandle": "p1"}) == {}
    exited = await client.wait_notification("process/exited", lambda p: p["processHandle"] == "p1")
    assert exited["params"] == {"processHandle": "p1", "exitCode": 0, "outputDrainTimedOut": False,
                                "stdout": "a\n", "stdoutCapReached": False, "stderr": "b\n", "stderrCapReached": False}
    await client.call("process/spawn", {"command": ["cat"], "cwd": str(tmp_path), "processHandle": "p2",
                                        "streamStdin": True, "streamStdoutStderr": True})
    await client.call("process/writeStdin", {"processHandle": "p2", "deltaBase64": b64(b"hi"), "closeStdin": True})
    exited = await client.wait_notification("process/exited", lambda p: p["processHandle"] == "p2")
    assert exited["params"]["stdout"] == ""
    assert joined(client.notifications("process/outputDelta"), "stdout") == b"hi"
    await client.call("process/spawn", {"command": ["sleep", "30"], "cwd": str(tmp_path), "processHandle": "p3"})
    dup = await client.request("process/spawn", {"command": ["true"], "cwd": str(tmp_path), "processHandle": "p3"})
    assert dup["error"]["code"] == -32600
    no_stdin = await client.request("process/writeStdin", {"processHandle": "p3", "deltaBase64": b64(b"x")})
    assert no_stdin["error"]["message"] == "stdin streaming is not enabled for this process"
    no_pty = await client.request("process/resizePty", {"processHandle": "p3", "size": {"rows": 1, "cols": 1}})
    assert no_pty["error"]["message"] == "failed to resize PTY: process is not attached to a PTY"
    assert await client.call("process/kill", {"processHandle": "p3"}) == {}
    killed = await client.wait_notification("process/exited", lambda p: p["processHandle"] == "p3")
    assert killed["params"]["exitCode"] == 137
    gone = await client.request("process/kill", {"processHandle": "p3"})
    assert gone["error"] == {"code": -32600, "data": {"appErrorCode": "process_not_found"},
                             "message": 'no active process for process handle "p3"'}
    relative = await client.request("process/spawn", {"command": ["true"], "cwd": "rel", "processHandle": "p4"})
    assert relative["error"]["code"] == -32600


async def test_process_methods_need_experimental_api(app_server: Start, tmp_path: Path) -> None:
    client = await app_server()
    reply = await client.request("process/spawn", {"command": ["true"], "cwd": str(tmp_path), "processHandle": "p"})
    assert reply["error"] == {"code": -32600, "data": {"appErrorCode": "experimental_api_required", "feature": "process/spawn"},
                              "message": "process/spawn requires experimentalApi capability"}


async def test_process_output_cap(app_server: Start, tmp_path: Path) -> None:
    client = await app_server(experimental=True)
    await client.call("process/spawn", {"command": ["head", "-c", "100", "/dev/zero"], "cwd": str(tmp_path),
                                        "processHandle": "c", "outputBytesCap": 10})
    exited = await client.wait_notification("process/exited")
    assert exited["params"]["stdout"] == "\0" * 10 and exited["params"]["stdoutCapReached"] is True
