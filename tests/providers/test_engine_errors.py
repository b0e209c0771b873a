"""An engine that is not there or not running: thread/start fails at once, saying which and why."""

from __future__ import annotations

from pathlib import Path

from tests.providers.podman_support import write_environments
from tests.support.errors import as_codex
from tests.support.fake_model import model_config
from tests.support.tools import require_docker_cli, require_podman


async def test_a_missing_engine_binary_fails_thread_start_with_the_reason(
    app_server, codex_home: Path, workspace: Path
) -> None:
    model_config(codex_home, "http://127.0.0.1:9/v1")
    write_environments(codex_home, engine="/nonexistent/podman")
    client = await app_server()
    response = await client.request("thread/start", {"cwd": str(workspace)})
    assert as_codex(response["error"]) == {
        "code": -32600,
        "message": "environment `box` is unavailable: podman is not installed: no `/nonexistent/podman` on PATH",
    }
    # Nothing was loaded or stored: the next requests are served normally.
    assert (await client.call("thread/loaded/list", {}))["data"] == []
    assert (await client.call("thread/list", {}))["data"] == []


async def test_a_podman_service_that_is_not_running_fails_thread_start_with_the_reason(
    app_server, codex_home: Path, workspace: Path, tmp_path: Path
) -> None:
    require_podman()
    socket = tmp_path / "podman.sock"  # no service listens there
    model_config(codex_home, "http://127.0.0.1:9/v1")
    write_environments(codex_home, url=f"unix://{socket}")
    client = await app_server()
    response = await client.request("thread/start", {"cwd": str(workspace)}, timeout=60)
    error = as_codex(response["error"])
    assert error["code"] == -32600
    prefix = f"environment `box` is unavailable: podman at unix://{socket} is not running or not usable: "
    assert error["message"].startswith(prefix), error
    assert "unable to connect to Podman socket" in error["message"]


async def test_docker_without_a_daemon_fails_thread_start_saying_the_engine_is_not_running(
    app_server, codex_home: Path, workspace: Path, tmp_path: Path
) -> None:
    require_docker_cli()
    socket = tmp_path / "docker.sock"  # no daemon listens there, whether or not this host runs one
    model_config(codex_home, "http://127.0.0.1:9/v1")
    lines = ['default = "box"', "", "[environments.box]", 'provider = "docker"', f'url = "unix://{socket}"']
    (codex_home / "environments.toml").write_text("\n".join(lines) + "\n")
    client = await app_server()
    response = await client.request("thread/start", {"cwd": str(workspace)}, timeout=60)
    error = as_codex(response["error"])
    assert error["code"] == -32600
    prefix = (f"environment `box` is unavailable: docker at unix://{socket} is not running or not usable: "
              "`docker info` failed: ")
    assert error["message"].startswith(prefix), error
    assert "Cannot connect to the Docker daemon" in error["message"], error
    assert (await client.call("thread/loaded/list", {}))["data"] == []
