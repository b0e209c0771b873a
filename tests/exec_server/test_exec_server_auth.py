"""Capability-token auth at the websocket upgrade, for our server and Codex's."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import websockets

from tests.support.execserver import raw_client, run_ws_server, server_params

TOKEN = "s3cret-capability-token"


@pytest.mark.parametrize("name", server_params())
@pytest.mark.parametrize("how", ["token-file", "token-sha256"])
async def test_a_missing_or_wrong_bearer_token_is_refused_with_401(
    name: str, how: str, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    if how == "token-file":
        flags = ["--ws-auth", "capability-token", "--ws-token-file", str(token_file)]
    else:
        flags = [
            "--ws-auth",
            "capability-token",
            "--ws-token-sha256",
            hashlib.sha256(TOKEN.encode()).hexdigest(),
        ]
    with run_ws_server(name, tmp_path, *flags) as server:
        for headers in (None, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
            with pytest.raises(websockets.InvalidStatus) as info:
                async with raw_client(server.url, additional_headers=headers):
                    pass
            assert info.value.response.status_code == 401
        async with raw_client(server.url, additional_headers={"Authorization": f"Bearer {TOKEN}"}) as c:
            assert (await c.initialize())["sessionId"]


@pytest.mark.parametrize("name", server_params())
async def test_the_refusal_body_says_whether_the_token_was_missing_or_wrong(
    name: str, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    with run_ws_server(
        name, tmp_path, "--ws-auth", "capability-token", "--ws-token-file", str(token_file)
    ) as srv:
        bodies = []
        for headers in (None, {"Authorization": "Bearer nope"}):
            with pytest.raises(websockets.InvalidStatus) as info:
                async with raw_client(srv.url, additional_headers=headers):
                    pass
            bodies.append(info.value.response.body)
        assert bodies == [b"missing websocket bearer token", b"invalid websocket bearer token"]
