"""environment/add, environment/info and environment/status.

``local`` is this machine. Added environments are exec-servers reached over WebSocket: environment/add
records one and tries to connect right away, and status reports what that attempt observed (it never
reconnects by itself). Added environments are not yet offered to threads."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from app_server.context import HandlerContext
from app_server.protocol import responses_config as rc
from app_server.protocol import surface as p
from app_server.surface_state import AddedEnvironment
from exec_client.client import ExecServerClient
from pycodex.jsonrpc.errors import InternalError, InvalidRequest

__all__ = ["environment_add", "environment_info", "environment_status"]

LOCAL = "local"
DEFAULT_CONNECT_TIMEOUT_MS = 10_000


def _unknown(environment_id: str) -> str:
    return f"unknown environment id `{environment_id}`"


async def _connect(env: AddedEnvironment, token: str | None, timeout_s: float) -> None:
    try:
        client = await ExecServerClient.connect_websocket(env.url, token=token, connect_timeout=timeout_s)
        await asyncio.wait_for(client.initialize("pycodex-app-server"), timeout_s)
    except Exception as exc:
        detail = str(exc) or type(exc).__name__
        env.error = f"exec-server connection attempt failed: failed to connect to exec-server websocket `{env.url}`: {detail}"
        return
    env.client, env.error = client, None


async def environment_add(ctx: HandlerContext, params: p.EnvironmentAddParams) -> rc.EnvironmentAddResponse:
    if params.environment_id == LOCAL:
        raise InvalidRequest("exec-server protocol error: environment id `local` is reserved for EnvironmentManager")
    if not params.exec_server_url.startswith(("ws://", "wss://")):
        raise InvalidRequest(f"exec-server url must be a ws:// or wss:// url: {params.exec_server_url}")
    added = ctx.services.surface.environments
    old = added.pop(params.environment_id, None)
    if old is not None and old.client is not None:
        await old.client.close()
    env = added[params.environment_id] = AddedEnvironment(params.exec_server_url)
    timeout = (params.connect_timeout_ms or DEFAULT_CONNECT_TIMEOUT_MS) / 1000
    env.attempt = ctx.services.spawn(_connect(env, params.auth_bearer_token, timeout), name="environment/add")
    await asyncio.wait({env.attempt}, timeout=timeout)  # Codex reports the first attempt's outcome
    return rc.EnvironmentAddResponse()


def _local_shell() -> rc.EnvironmentShellInfo:
    path = os.environ.get("SHELL") or shutil.which("bash") or "/bin/sh"
    return rc.EnvironmentShellInfo(name=Path(path).name, path=path)


async def environment_info(ctx: HandlerContext, params: p.EnvironmentIdParams) -> rc.EnvironmentInfoResponse:
    if params.environment_id == LOCAL:
        return rc.EnvironmentInfoResponse(shell=_local_shell(), cwd=ctx.services.working_dir().resolve().as_uri())
    env = ctx.services.surface.environments.get(params.environment_id)
    if env is None:
        raise InvalidRequest(_unknown(params.environment_id))
    reason = env.error or "the environment is not connected"
    if env.client is not None:
        reason = "pycodex cannot query a remote environment's shell yet"
    raise InternalError(f"failed to get info for environment `{params.environment_id}`: {reason}")


async def environment_status(ctx: HandlerContext, params: p.EnvironmentIdParams) -> rc.EnvironmentStatusResponse:
    if params.environment_id == LOCAL:
        return rc.EnvironmentStatusResponse(status="ready")
    env = ctx.services.surface.environments.get(params.environment_id)
    if env is None:
        return rc.EnvironmentStatusResponse(status="unknown", error=_unknown(params.environment_id))
    if env.client is not None and not env.client.closed.is_set():
        return rc.EnvironmentStatusResponse(status="ready")
    if env.error is not None:
        return rc.EnvironmentStatusResponse(status="disconnected", error=env.error)
    if env.client is not None:
        return rc.EnvironmentStatusResponse(status="disconnected", error="the exec-server connection closed")
    return rc.EnvironmentStatusResponse(status="pending")
