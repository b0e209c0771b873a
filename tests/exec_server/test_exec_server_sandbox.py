"""``process/start.sandbox``: writes outside the writable roots and TCP are denied, for both servers.

Codex confines with bubblewrap; we use Landlock (see ``exec_server.sandbox``). Policies we cannot apply
are refused (fail closed) unless ``--allow-unsandboxed``: a deliberate difference, tested for ours only.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.execserver import ServerProc, raw_client, run_ws_server, server_params, start_params, uri
from tests.support.tools import skip_without_landlock

pytestmark = skip_without_landlock(4)


def workspace_policy(workspace: Path) -> dict[str, Any]:
    """The shape Codex's app-server sends in workspace-write mode, minus /tmp (our tmp_path is there)."""
    special = {"type": "special", "value": {"kind": "project_roots"}}
    return {
        "permissions": {
            "type": "managed",
            "file_system": {
                "type": "restricted",
                "entries": [
                    {"path": {"type": "special", "value": {"kind": "root"}}, "access": "read"},
                    {"path": special, "access": "write"},
                ],
            },
            "network": "restricted",
        },
        "cwd": uri(workspace),
        "workspaceRoots": [uri(workspace)],
        "windowsSandboxLevel": "disabled",
        "windowsSandboxProxySettingsMode": "reconcile",
        "useLegacyLandlock": False,
    }


@pytest.fixture(params=server_params())
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProc]:
    with run_ws_server(request.param, tmp_path) as srv:
        yield srv


async def test_a_sandboxed_command_writes_only_in_the_workspace_and_has_no_tcp(
    server: ServerProc, tmp_path: Path
) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    listener = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    script = (
        f"echo in > {workspace}/ok.txt && echo wrote-inside; "
        f"echo out > {outside}/no.txt 2>/dev/null && echo wrote-outside; "
        f"(echo > /dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo tcp-open || echo tcp-closed"
    )
    try:
        async with raw_client(server.url) as c:
            await c.initialize()
            params = start_params(
                "s", ["/bin/bash", "-c", script], workspace, sandbox=workspace_policy(workspace)
            )
            assert await c.ok("process/start", params) == {"processId": "s", "sandboxType": "linuxSeccomp"}
            events = await c.events_until_closed("s")
    finally:
        listener.close()
    out = b"".join(base64.b64decode(e["params"]["chunk"]) for e in events if e["method"] == "process/output")
    assert b"wrote-inside" in out and b"wrote-outside" not in out and b"tcp-closed" in out
    assert (workspace / "ok.txt").exists() and not (outside / "no.txt").exists()


@pytest.mark.parametrize("allow", [False, True], ids=["default", "allow-unsandboxed"])
async def test_a_policy_we_cannot_apply_is_refused_unless_unsandboxed_runs_are_allowed(
    tmp_path: Path, allow: bool
) -> None:
    flags = ["--allow-unsandboxed"] if allow else []
    bogus = {"permissions": {"type": "something-new"}, "cwd": uri(tmp_path)}
    with run_ws_server("pycodex", tmp_path, *flags) as server:
        async with raw_client(server.url) as c:
            await c.initialize()
            got = await c.call("process/start", start_params("s", ["/bin/true"], tmp_path, sandbox=bogus))
            if allow:
                assert got["result"] == {"processId": "s", "sandboxType": "none"}
            else:
                assert got["error"]["code"] == -32603
                assert (
                    "cannot apply the requested sandbox: unsupported sandbox permissions"
                    in got["error"]["message"]
                )
