"""``pycodex exec-server --remote URL --environment-id ID``: options and the async entry point.

Bearer for the registry: ``CODEX_API_KEY``, or one line read from stdin with
``--registration-bearer-stdin``. Registration failure exits 1 (no retry), as Codex 0.169.0 does.
``--name`` is accepted for compatibility; 0.169.0 does not send it to the registry either.
``--remote unix:///PATH`` (pycodex's own) reaches a relay's ``--listen-unix`` socket: registry calls and the
rendezvous websocket both go over it, so an executor in a box without a network can still serve.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
from urllib.parse import urlsplit

from exec_client.wire.registry import RegistryError, RegistryResponseError, new_http_client
from exec_server.remote.args import API_KEY_ENV_VAR, add_remote_arguments
from exec_server.remote.executor import RemoteExecutor
from exec_server.remote.mux import SessionFactory
from exec_server.remote.registration import RegistryClient
from pycodex.signals import stop_on_signals

__all__ = ["API_KEY_ENV_VAR", "add_remote_arguments", "run_remote_executor"]

log = logging.getLogger(__name__)



class _UsageError(Exception):
    pass


#: The base URL registry calls name when they go over a unix socket (the socket is what routes them).
UNIX_BASE_URL = "http://localhost"


def _check(args: argparse.Namespace) -> tuple[str, str]:
    remote = getattr(args, "remote", None)
    environment_id = getattr(args, "environment_id", None)
    if not remote:
        raise _UsageError("--remote URL is required for remote mode")
    parts = urlsplit(remote)
    unix = parts.scheme == "unix" and parts.path.startswith("/") and not parts.netloc
    if not unix and (parts.scheme not in ("http", "https") or not parts.hostname):
        raise _UsageError(f"--remote must be an http(s) URL or unix:///PATH, got {remote!r}")
    if not environment_id:
        raise _UsageError("--remote requires --environment-id")
    if getattr(args, "remote_transport", "noise") != "noise":
        raise _UsageError("--remote-transport direct is not supported by pycodex (it needs AWS SigV4)")
    return remote, environment_id


async def _bearer(args: argparse.Namespace) -> str:
    if getattr(args, "registration_bearer_stdin", False):
        line = await asyncio.to_thread(sys.stdin.readline)
        token = str(line).strip()
        if not token:
            raise _UsageError("--registration-bearer-stdin: stdin gave no token line")
        return token
    token = os.environ.get(API_KEY_ENV_VAR, "").strip()
    if not token:
        raise _UsageError(
            f"remote exec-server registration requires a bearer token: set {API_KEY_ENV_VAR} "
            "or pass --registration-bearer-stdin"
        )
    return token


async def run_remote_executor(args: argparse.Namespace, make_session: SessionFactory) -> int:
    """Register, then serve the rendezvous until SIGINT/SIGTERM. 2: bad options, 1: registration failed."""
    try:
        remote, environment_id = _check(args)
        token = await _bearer(args)
    except _UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    socket_path = urlsplit(remote).path if remote.startswith("unix:") else None
    async with new_http_client(uds=socket_path) as http:
        registry = RegistryClient(http, UNIX_BASE_URL if socket_path else remote, environment_id, token)
        executor = RemoteExecutor(registry, make_session, unix_socket=socket_path)
        try:
            registration = await executor.register()
        except (RegistryError, RegistryResponseError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        name = getattr(args, "name", None)
        print(
            f"registered remote environment {registration.environment_id}"
            + (f" ({name})" if name else "")
            + f", registration {registration.executor_registration_id}",
            file=sys.stderr,
            flush=True,
        )
        stop = stop_on_signals()
        serving = asyncio.create_task(executor.serve_forever(), name="remote-executor")
        stopping = asyncio.create_task(stop.wait())
        try:
            await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (serving, stopping):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.gather(serving, stopping, return_exceptions=True), 10)
        if serving.done() and not serving.cancelled() and serving.exception() is not None:
            print(f"error: remote executor failed: {serving.exception()}", file=sys.stderr)
            return 1
    return 0
