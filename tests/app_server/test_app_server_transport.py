"""Acceptance tests of the app-server's stdio transport (foundation issue): framing, size, shutdown, backpressure.

Each test drives a real `pycodex app-server` subprocess over pipes through the validating harness, so every
stdout line is also checked to be one JSON object that the Codex 0.169.0 schema accepts.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path

import pytest

import pycodex
from pycodex.transport.base import Outbox
from tests.support import AppServerClient

StartServer = Callable[..., Awaitable[AppServerClient]]

SIXTY_FOUR_MIB = 64 * 1024 * 1024
OVERLOADED = {"code": -32001, "data": {"appErrorCode": "server_overloaded"},
              "message": "Server overloaded; retry later."}
LS_PS_NAME = "before\u2028between\u2029after \u00e9"


async def _start_thread(client: AppServerClient) -> str:
    result = await client.call("thread/start", {})
    thread_id: str = result["thread"]["id"]
    await client.wait_notification("thread/started", lambda p: p["thread"]["id"] == thread_id)
    return thread_id


async def test_a_64_mib_line_is_answered_and_the_server_lives_on(app_server: StartServer) -> None:
    client = await app_server(subprocess=True)
    # Multibyte characters at both ends make sure chunked reads never split a character into garbage.
    instructions = "\u00e9" + "x" * (SIXTY_FOUR_MIB - 4) + "\u00e9"
    assert len(instructions.encode()) >= SIXTY_FOUR_MIB
    response = await client.request("thread/start", {"developerInstructions": instructions}, timeout=45.0)
    if "error" in response:  # a clean refusal is allowed by the issue; it must still be a proper reply
        assert isinstance(response["error"].get("message"), str) and response["error"]["message"], response
    else:
        await client.wait_notification("thread/started", timeout=15.0)
        loaded = await client.call("thread/loaded/list", {})
        assert loaded["data"] == [response["result"]["thread"]["id"]]
    assert client.process.returncode is None
    assert await client.call("thread/list", {}) is not None


async def test_line_and_paragraph_separators_round_trip_and_are_escaped_on_stdout(
    app_server: StartServer,
) -> None:
    client = await app_server()
    thread_id = await _start_thread(client)
    # Sent raw (not \\u-escaped) inside the string: U+2028/U+2029 must not split the inbound line.
    line = json.dumps(
        {"id": "name-1", "method": "thread/name/set", "params": {"threadId": thread_id, "name": LS_PS_NAME}},
        ensure_ascii=False,
    )
    assert "\u2028" in line and "\u2029" in line
    client.request_methods["name-1"] = "thread/name/set"
    await client.send_raw(line.encode("utf-8") + b"\n")
    assert await client.wait_response("name-1") == {"id": "name-1", "result": {}}
    updated = await client.wait_notification("thread/name/updated")
    assert updated["params"]["threadName"] == LS_PS_NAME

    read = await client.call("thread/read", {"threadId": thread_id})
    assert read["thread"]["name"] == LS_PS_NAME

    carrying = [a.raw for a in client.arrivals if "between" in a.raw]
    assert len(carrying) >= 2, carrying  # the notification and the thread/read response
    for raw in carrying:
        assert "\u2028" not in raw and "\u2029" not in raw, raw[:300]
        assert "\\u2028" in raw and "\\u2029" in raw, raw[:300]
        assert "\u00e9" in raw  # other non-ASCII stays UTF-8; only the two separators are escaped


_LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \w+ [\w.]+: (.*)$")


def _log_times(stderr: str, needle: str) -> list[datetime]:
    found = []
    for line in stderr.splitlines():
        match = _LOG_TIME.match(line)
        if match and needle in match.group(2):
            found.append(datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S,%f"))
    return found


async def _eof_to_exit(app_server: StartServer) -> float:
    """Close stdin of an idle server; it exits 0, logging EOF then exit: seconds between, by its own clock."""
    client = await app_server(subprocess=True, env={"PYCODEX_LOG": "debug"})
    await _start_thread(client)
    await client.expect_silence(0.3)  # idle: nothing in flight
    await client.close_stdin()
    code = await client.wait_exit(5.0)
    assert code == 0, client.stderr_text[-2000:]
    # The server's own path, from seeing EOF to its last act before exiting, by its own clock.
    eof_at = _log_times(client.stderr_text, "stdin reached EOF")
    exit_at = _log_times(client.stderr_text, "app-server exiting")
    assert len(eof_at) == 1 and len(exit_at) == 1, client.stderr_text[-2000:]
    assert exit_at[0] >= eof_at[0]
    return (exit_at[0] - eof_at[0]).total_seconds()


async def test_stdin_eof_ends_an_idle_server_cleanly(app_server: StartServer) -> None:
    await _eof_to_exit(app_server)


@pytest.mark.slow  # a time budget: meaningful on an unloaded machine only, so not in the default run
async def test_stdin_eof_ends_an_idle_server_within_100_ms(app_server: StartServer) -> None:
    assert await _eof_to_exit(app_server) < 0.1


async def test_stdout_carries_protocol_lines_only_even_with_debug_logging(app_server: StartServer) -> None:
    client = await app_server(subprocess=True, env={"PYCODEX_LOG": "debug"})
    thread_id = await _start_thread(client)
    await client.call("thread/name/set", {"threadId": thread_id, "name": "logged"})
    await client.send_raw(b"{this is not json}\n")
    await client.request("thread/read", {"threadId": "not-a-uuid"})
    await client.request("bogus/method", {})
    await client.call("thread/read", {"threadId": thread_id})
    await client.close()  # raises if any stdout line was not a schema-valid JSON object
    assert client.arrivals and all(a.kind != "invalid" for a in client.arrivals)
    for arrival in client.arrivals:
        assert arrival.raw.startswith("{") and arrival.raw.endswith("}"), arrival.raw[:200]
    assert "Failed to deserialize JSONRPCMessage" in client.stderr_text
    assert "DEBUG" in client.stderr_text  # the logs exist, and they went to stderr


async def test_a_burst_beyond_the_inbound_queue_gets_server_overloaded(app_server: StartServer) -> None:
    client = await app_server(subprocess=True, env={"PYCODEX_MAX_QUEUED_REQUESTS": "1"})
    ids = list(range(1000, 1030))
    burst = "".join(json.dumps({"id": i, "method": "thread/loaded/list", "params": {}}) + "\n" for i in ids)
    await client.send_raw(burst)  # one write: the server reads it faster than it can dispatch
    replies = {i: await client.wait_response(i) for i in ids}
    overloaded = [i for i, r in replies.items() if "error" in r]
    served = [i for i, r in replies.items() if "result" in r]
    assert overloaded and served, replies
    assert sorted(overloaded + served) == ids  # exactly one reply each
    for i in overloaded:
        assert replies[i] == {"id": i, "error": OVERLOADED}
    await client.expect_silence(0.2)
    assert await client.call("thread/loaded/list", {}) == {"data": [], "nextCursor": None}


async def test_an_opted_out_notification_is_never_sent(app_server: StartServer) -> None:
    client = await app_server(opt_out=["thread/started"])
    result = await client.call("thread/start", {})  # thread/started follows this without the opt-out
    thread_id = result["thread"]["id"]
    # A later notification arriving proves the opted-out one was skipped, not merely late.
    await client.call("thread/name/set", {"threadId": thread_id, "name": "still notified"})
    await client.wait_notification("thread/name/updated")
    await client.expect_silence(0.3)
    assert client.notifications("thread/started") == []


async def test_initialized_notification_is_optional(app_server: StartServer) -> None:
    client = await app_server(initialize=False)
    await client.initialize(send_initialized=False)
    thread_id = await _start_thread(client)
    assert (await client.call("thread/read", {"threadId": thread_id}))["thread"]["id"] == thread_id


async def test_every_notification_carries_emitted_at_ms_beside_params(app_server: StartServer) -> None:
    before_ms = int(time.time() * 1000)
    client = await app_server()
    thread_id = await _start_thread(client)
    await client.call("thread/name/set", {"threadId": thread_id, "name": "stamped"})
    await client.wait_notification("thread/name/updated")
    after_ms = int(time.time() * 1000)
    notes = client.notifications()
    assert {n["method"] for n in notes} >= {"thread/started", "thread/name/updated"}
    for note in notes:
        assert set(note) == {"method", "params", "emittedAtMs"}, note
        stamp = note["emittedAtMs"]
        assert isinstance(stamp, int) and not isinstance(stamp, bool)
        assert before_ms - 1000 <= stamp <= after_ms + 1000, (before_ms, stamp, after_ms)
    stamps = [n["emittedAtMs"] for n in notes]
    assert stamps == sorted(stamps)  # one writer, in order


async def test_many_requests_in_one_write_are_answered_in_order_with_lf_or_crlf(
    app_server: StartServer,
) -> None:
    client = await app_server()
    ids = list(range(50, 70))
    ends = ["\n" if i % 2 else "\r\n" for i in ids]
    await client.send_raw(
        "".join(
            json.dumps({"id": i, "method": "thread/loaded/list"}) + e for i, e in zip(ids, ends, strict=True)
        )
    )
    replies = [await client.wait_response(i) for i in ids]
    assert all(
        r["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_params"},
                       "message": "Invalid request: missing field `params`"} for r in replies
    )
    order = [a.msg["id"] for a in client.arrivals if a.msg is not None and a.msg.get("id") in ids]
    assert order == ids


async def test_the_outbox_bounds_queued_bytes_but_lets_one_oversized_message_through() -> None:
    gate = asyncio.Event()
    written: list[bytes] = []

    async def write(data: bytes) -> None:  # a peer that reads nothing until the gate opens
        await gate.wait()
        written.append(data)

    outbox = Outbox(write, max_queued=1000, max_queued_bytes=1000)
    outbox.start()
    await asyncio.wait_for(outbox.send(b"a" * 5000), 1.0)  # alone it may exceed the budget
    blocked = asyncio.create_task(outbox.send(b"b" * 10))
    await asyncio.sleep(0.05)
    assert not blocked.done()  # 5000 queued bytes: no room for more
    gate.set()
    await asyncio.wait_for(blocked, 1.0)
    for _ in range(5):
        await asyncio.wait_for(outbox.send(b"c" * 300), 1.0)
    await outbox.close(flush_timeout=1.0)
    assert written == [b"a" * 5000, b"b" * 10, *[b"c" * 300] * 5]
    assert outbox.queued_bytes == 0


async def test_initialize_answers_the_four_fields_with_a_codex_shaped_user_agent(
    app_server: StartServer, codex_home: Path
) -> None:
    client = await app_server(initialize=False)
    result = await client.initialize(name="shape_check", version="9.8.7")
    assert set(result) == {"userAgent", "codexHome", "platformFamily", "platformOs"}
    assert result["codexHome"] == str(codex_home)
    assert (result["platformFamily"], result["platformOs"]) == ("unix", "linux")
    # SDKs read the runtime version after the first "/": it must be the Codex version we speak.
    assert result["userAgent"].startswith(f"shape_check/0.169.0 (pycodex {pycodex.__version__}; ")
    assert result["userAgent"].endswith("(shape_check; 9.8.7)")


async def test_requests_received_before_stdin_eof_are_all_answered(codex_home, workspace) -> None:  # type: ignore[no-untyped-def]
    """Every request gets exactly one response, even when the client closes stdin right after sending."""
    import asyncio
    import json
    import sys

    from tests.support.appserver_process import app_server_env

    lines = [{"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "1"}}}]
    lines += [{"id": i, "method": "thread/loaded/list", "params": {}} for i in range(2, 12)]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pycodex", "app-server", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, cwd=workspace,
        env=app_server_env(codex_home),
    )
    out, _ = await asyncio.wait_for(proc.communicate("".join(json.dumps(m) + "\n" for m in lines).encode()), 20)
    ids = [json.loads(line)["id"] for line in out.decode().splitlines() if '"id"' in line]
    assert ids == list(range(1, 12))
    assert proc.returncode == 0
