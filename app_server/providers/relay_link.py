"""The relay between the app-server and its boxes: a child relay process on loopback, or one elsewhere.

By default the app-server starts ``python -m relay --control-stdin`` on 127.0.0.1 with a harness token only
it knows, and asks it over that control channel for one token per box (``grant``): the token lets that box
register and validate as its own environment id and nothing else, and is withdrawn (``revoke``) when the box
is released. Boxes reach it through its unix socket (``--listen-unix``), in a private directory each box
mounts read-only, so a box with no network at all still registers. The relay ends when the app-server
does: its control stdin reaches end of file. A relay elsewhere (``relay_url``: a cluster's relay Service)
takes one configured token for both sides, since minting needs the relay's own process.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from app_server.lazy import LazyModule
from app_server.providers.base import BOX_RELAY_DIR, Box, ProviderError
from exec_client.environment import ExecServerEnvironment

if TYPE_CHECKING:
    from exec_client import remote as exec_client_remote
    from exec_client.remote import RemoteEnvironmentConnector
else:
    exec_client_remote = LazyModule("exec_client.remote")

__all__ = ["ExternalRelay", "RelayLink"]

CLIENT_NAME = "codex-environment"
_POLL_S = 0.05
START_TIMEOUT_S = 30.0
ANSWER_TIMEOUT_S = 10.0
#: The child relay's unix socket, in its private directory (``RelayLink.socket_dir``).
SOCKET_NAME = "relay.sock"


@dataclass(frozen=True)
class ExternalRelay:
    """A relay the app-server does not run: its registry URL and the bearer token it accepts."""

    registry_url: str
    token: str = field(repr=False)


class RelayLink:
    """Starts (or names) the relay, hands out box tokens, waits for registrations, connects harnesses."""

    def __init__(self, external: ExternalRelay | None = None) -> None:
        self._external = external
        self._harness_token = external.token if external is not None else secrets.token_urlsafe(32)
        self._proc: asyncio.subprocess.Process | None = None
        self._url: str | None = None
        #: The child relay's private directory (mode 0700) holding its unix socket; boxes mount it.
        self.socket_dir: Path | None = None
        self._start_lock = asyncio.Lock()
        self._ask_lock = asyncio.Lock()  # one command at a time: answers come back in order

    async def registry_url(self) -> str:
        """The registry URL boxes register with (the child relay starts on first use)."""
        if self._external is not None:
            return self._external.registry_url
        async with self._start_lock:
            if self._url is None or self._proc is None or self._proc.returncode is not None:
                self._url = await self._start()
            return self._url

    @property
    def box_registry_url(self) -> str:
        """The registry URL as a box dials it: the unix socket in ``BOX_RELAY_DIR``, or the relay elsewhere."""
        if self._external is not None:
            return self._external.registry_url
        return f"unix://{BOX_RELAY_DIR / SOCKET_NAME}"

    async def _start(self) -> str:
        env = dict(os.environ, PYCODEX_RELAY_TOKEN=self._harness_token)
        # A new private directory per relay (boxes of a relay that died could not register again anyway):
        # the relay makes it (0700) and removes it when it ends, even after this process was killed.
        self.socket_dir = Path(tempfile.gettempdir()) / f"pycodex-relay-{secrets.token_hex(8)}"
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "relay", "--listen", "127.0.0.1:0", "--control-stdin",
            "--listen-unix", str(self.socket_dir / SOCKET_NAME), env=env,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        assert proc.stdout is not None
        try:
            url = (await asyncio.wait_for(proc.stdout.readline(), START_TIMEOUT_S)).decode().strip()
            await asyncio.wait_for(proc.stdout.readline(), START_TIMEOUT_S)  # the rendezvous URL
        except TimeoutError:
            url = ""
        if not url.startswith("http://"):
            await _stop(proc)
            raise ProviderError(f"the relay for the boxes did not start (it printed {url!r})")
        self._proc = proc
        return url

    async def _ask(self, command: str, environment_id: str) -> str:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None or proc.returncode is not None:
            raise ProviderError("the relay for the boxes is not running")
        async with self._ask_lock:
            try:
                proc.stdin.write(f"{command} {environment_id}\n".encode())
                await proc.stdin.drain()
                answer = (await asyncio.wait_for(proc.stdout.readline(), ANSWER_TIMEOUT_S)).decode().strip()
            except (ConnectionError, TimeoutError) as exc:
                raise ProviderError(f"the relay for the boxes did not answer {command}: {exc}") from None
        if not answer or answer.startswith("error:"):
            raise ProviderError(f"the relay for the boxes refused {command}: {answer or 'it exited'}")
        return answer

    async def grant(self, environment_id: str) -> str:
        """A registration token for the box of ``environment_id`` (``registry_url`` must have run)."""
        if self._external is not None:
            return self._external.token
        return await self._ask("grant", environment_id)

    async def revoke(self, environment_id: str) -> None:
        """Withdraw the box's token and registration (a no-op on a relay elsewhere or one that is gone)."""
        if self._external is None and self._proc is not None and self._proc.returncode is None:
            with contextlib.suppress(ProviderError):
                await self._ask("revoke", environment_id)

    async def _connected(self, environment_id: str) -> bool:
        return await self._ask("connected", environment_id) == "yes"

    async def wait_registered(self, box: Box, timeout: float) -> None:
        """Until the box's exec-server is on the rendezvous; raises if the box exits or time runs out.

        On a relay elsewhere there is no rendezvous to look at: the first harness connection (with its
        retries) is the check.
        """
        if self._external is not None:
            return
        deadline = time.monotonic() + timeout
        while not await self._connected(box.environment_id):
            if box.exited.is_set():
                raise ProviderError(f"the box exited before it registered with the relay: {box.why}")
            if time.monotonic() > deadline:
                raise ProviderError(f"the box did not register with the relay within {timeout:.0f}s")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(box.exited.wait(), _POLL_S)

    async def connect(self, environment_id: str) -> tuple[ExecServerEnvironment, RemoteEnvironmentConnector]:
        """An initialized exec-server environment on the box, through the relay."""
        url = await self.registry_url()
        config = exec_client_remote.NoiseRemoteConfig(url, environment_id, self._harness_token)
        connector = exec_client_remote.RemoteEnvironmentConnector(config, handshake_timeout=15.0)
        try:
            client = await connector.open_client(CLIENT_NAME)
        except BaseException:
            await connector.aclose()
            raise
        return ExecServerEnvironment(client), connector

    async def close(self) -> None:
        """Stop the child relay: end of its control stdin, then signals (bounded)."""
        proc, self._proc, self._url = self._proc, None, None
        if proc is not None:
            await _stop(proc)
        folder, self.socket_dir = self.socket_dir, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.stdin is not None:
        proc.stdin.close()
    for signal_step in (None, proc.terminate, proc.kill):
        if signal_step is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                signal_step()
        try:
            await asyncio.wait_for(proc.wait(), 5)
            return
        except TimeoutError:
            continue
