"""The validating clients driven against the reference Codex binary: proof that the harness accepts what the
reference sends, and the error surface the pycodex tests will compare against."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.appserver import OMIT, AppServerClient
from tests.support.appserver_ws import WsAppServerClient

pytestmark = pytest.mark.codex

StdioFactory = Callable[..., Awaitable[AppServerClient]]
WsFactory = Callable[..., Awaitable[WsAppServerClient]]

# Methods without params whose response type the schema cannot name; each must validate against our table.
NO_PARAMS_METHODS = [
    "account/logout",
    "account/securitySetup/read",
    "account/gatewayOAuth/cancel",
    "config/mcpServer/reload",
    "configRequirements/read",
    "externalAgentConfig/import/readHistories",
    "windowsSandbox/readiness",
]


@pytest.fixture
def codex_argv(codex_bin: Path) -> list[str]:
    return [str(codex_bin), "app-server"]


async def test_initialize_and_thread_start_validate_and_announce_the_thread(
    app_server: StdioFactory, codex_argv: list[str], codex_home: Path, workspace: Path
) -> None:
    client = await app_server(argv=codex_argv, initialize=False)
    result = await client.initialize(name="harness_probe")
    assert result["codexHome"] == str(codex_home)
    assert result["userAgent"].startswith("harness_probe/0.169.0 ")
    started = await client.call("thread/start", {})
    thread_id = started["thread"]["id"]
    assert started["cwd"] == str(workspace)
    note = await client.wait_notification(
        "thread/started", lambda p: p["thread"]["id"] == thread_id, timeout=5
    )
    assert "emittedAtMs" in note
    assert thread_id in (await client.call("thread/loaded/list", {}))["data"]
    kinds = {a.kind for a in client.arrivals}
    assert kinds == {"response", "notification"}
    assert await client.close() == 0


async def test_a_request_before_initialize_is_refused(
    app_server: StdioFactory, codex_argv: list[str]
) -> None:
    client = await app_server(argv=codex_argv, initialize=False)
    response = await client.request("thread/list", {})
    assert response["error"] == {"code": -32600, "message": "Not initialized"}
    await client.initialize()
    assert "data" in await client.call("thread/list", {})


async def test_the_error_surface_seen_through_the_harness(
    app_server: StdioFactory, codex_argv: list[str]
) -> None:
    client = await app_server(argv=codex_argv)
    unknown = await client.request("foo/bar", {})
    assert unknown["error"]["code"] == -32600
    assert unknown["error"]["message"].startswith("Invalid request: unknown variant `foo/bar`")
    missing = await client.request("thread/start", OMIT)
    assert missing["error"] == {"code": -32600, "message": "Invalid request: missing field `params`"}
    again = await client.request("initialize", {"clientInfo": {"name": "x", "version": "1"}})
    assert again["error"] == {"code": -32600, "message": "Already initialized"}
    string_id = await client.request("thread/loaded/list", {}, id="abc")
    assert string_id["id"] == "abc" and "result" in string_id


async def test_unparseable_lines_get_no_reply_and_the_server_keeps_going(
    app_server: StdioFactory, codex_argv: list[str]
) -> None:
    client = await app_server(argv=codex_argv)
    # The last post-handshake notification: after it, anything new would be a reply to the garbage.
    await client.wait_notification("remoteControl/status/changed", timeout=5)
    await client.send_raw(b"this is not json\n[1,2]\n\n")
    await client.expect_silence(0.3)
    await client.send_raw(b'{"id":41,"method":"thread/loaded/list","params":{}}\n')
    assert (await client.wait_response(41, timeout=5))["result"]["data"] == []
    assert "Failed to deserialize JSONRPCMessage" in client.stderr_text


async def test_methods_without_params_match_the_response_types_we_derived(
    app_server: StdioFactory, codex_argv: list[str]
) -> None:
    client = await app_server(argv=codex_argv)
    for method in NO_PARAMS_METHODS:
        response: dict[str, Any] = await client.request(method, OMIT)
        assert "result" in response, (method, response)  # the client validated it on arrival
        assert client.validator is not None
        assert client.validator.response_types[method].endswith("Response")


async def test_an_experimental_client_is_checked_against_the_experimental_bundle(
    app_server: StdioFactory, codex_argv: list[str]
) -> None:
    stable = await app_server(argv=codex_argv)
    gated = await stable.request("collaborationMode/list", {})
    assert gated["error"]["message"] == "collaborationMode/list requires experimentalApi capability"
    experimental = await app_server(argv=codex_argv, experimental=True)
    assert experimental.validator is not None and experimental.validator.experimental
    assert "data" in await experimental.call("collaborationMode/list", {})


async def test_stdin_eof_makes_the_server_exit_cleanly(
    app_server: StdioFactory, codex_argv: list[str]
) -> None:
    client = await app_server(argv=codex_argv)
    await client.close_stdin()
    assert await client.wait_exit(timeout=5) == 0


async def test_the_websocket_client_speaks_to_codex_listening_on_loopback(
    app_server_ws: WsFactory, codex_argv: list[str]
) -> None:
    client = await app_server_ws(argv=codex_argv)
    started = await client.call("thread/start", {})
    await client.wait_notification("thread/started", lambda p: p["thread"]["id"] == started["thread"]["id"])
    await client.send_raw("not json")
    await client.send_raw('{"id":"w1","method":"thread/loaded/list","params":{}}')
    assert (await client.wait_response("w1", timeout=5))["result"]["data"] == [started["thread"]["id"]]
    assert client.process is not None and "listening on: ws://127.0.0.1:" in client.stderr_text


async def test_opted_out_notifications_are_not_sent(app_server: StdioFactory, codex_argv: list[str]) -> None:
    client = await app_server(argv=codex_argv, opt_out=["thread/started"])
    await client.wait_notification("remoteControl/status/changed", timeout=5)
    started = await client.call("thread/start", {})
    await client.expect_silence(0.3)
    assert client.notifications("thread/started") == []
    assert started["thread"]["status"] == {"type": "idle"}
