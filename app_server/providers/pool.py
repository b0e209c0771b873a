"""Boxes for threads: start (or take from the warm pool), register through the relay, lease, release, reap.

A thread's lease is its box plus the exec-server environment connected to it. ``acquire`` hands back a
lease whose exec-server is already registered and initialized, so the thread's first command runs at once.
When the box dies, the lease's environment is closed at once (a command in flight ends as lost, not at
the model's yield time) and the next ``acquire`` starts a new box. A box's network follows the thread's
sandbox policy (``network_for``); a box that no longer fits a changed policy is replaced (``fits``), and
warm boxes are made for the network the last thread asked for. The reaper runs every
``reap_interval_s``: it releases leases whose thread object is gone, and removes containers labelled as
ours that no lease knows, and those of app-servers on this host that are no longer running.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import weakref
from collections.abc import Coroutine
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app_server.providers.base import (
    LABEL_BOX,
    LABEL_OWNER,
    Box,
    BoxLaunch,
    BoxProvider,
    BoxRequest,
    ProviderError,
)
from app_server.providers.relay_link import RelayLink
from exec_client.environment import ExecServerEnvironment

if TYPE_CHECKING:
    from exec_client.remote import RemoteEnvironmentConnector

__all__ = ["BoxPool", "Lease", "PoolSettings", "owner_label"]

logger = logging.getLogger(__name__)


def owner_label() -> str:
    """A new pool's owner label: ``<hostname>:<pid>:<nonce>`` (several servers may share a process)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def _owner_alive(owner: str) -> bool | None:
    """Whether the labelled owner's process runs (None: another host's, which only that host can tell)."""
    parts = owner.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return None
    pid = parts[1]
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class PoolSettings:
    """How many boxes wait warm, how often the reaper runs, how long a box may take to register."""

    size: int = 0
    reap_interval_s: float = 30.0
    start_timeout_s: float = 60.0


@dataclass
class Lease:
    """One thread's box and the environment connected to it."""

    box: Box
    environment: ExecServerEnvironment
    connector: RemoteEnvironmentConnector
    #: What the box was started with (its workspace mount and network): ``BoxPool.fits`` compares it.
    request: BoxRequest = field(default_factory=BoxRequest)
    thread_id: str = ""
    #: The object whose life the lease follows (the thread's environment); gone = reap.
    owner: weakref.ref[object] | None = None
    released: bool = field(default=False)

    @property
    def dead(self) -> bool:
        """The box exited or its connection is gone: the thread needs a new box."""
        return self.box.exited.is_set() or self.environment.client.closed.is_set()


class BoxPool:
    """The boxes of one configured environment (``[environments.NAME]``)."""

    def __init__(self, name: str, provider: BoxProvider, request: BoxRequest, settings: PoolSettings,
                 relay: RelayLink | None = None) -> None:
        self.name = name
        self.provider = provider
        self.request = request
        self.settings = settings
        self.relay = relay or RelayLink()
        self.owner = owner_label()
        self._warm: list[Lease] = []
        #: The network warm boxes get: the last thread's (at first none, the default sandbox's).
        self._warm_network = "none"
        self._leases: dict[str, Lease] = {}  # box id -> lease (warm ones included)
        self._starting = 0
        #: Boxes started but not registered yet: the reaper must not take them for leftovers.
        self._pending: set[str] = set()
        self._warmed = asyncio.Event()
        self._checked = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._releasing: set[asyncio.Task[None]] = set()  # never cancelled: a half-done release leaks a box
        self._reaper: asyncio.Task[None] | None = None
        self._closed = False

    # -- life of the pool -------------------------------------------------------------------------
    def start(self) -> None:
        """Begin filling the warm pool and reaping (in the running loop); idempotent."""
        if self._reaper is None and not self._closed:
            self._reaper = asyncio.get_running_loop().create_task(self._reap_loop(), name=f"reaper-{self.name}")
            self._refill()

    async def check(self) -> None:
        """The engine check, once per pool: raises ``EngineUnavailable`` saying what is missing."""
        if not self._checked:
            await self.provider.check()
            self._checked = True

    async def close(self) -> None:
        """Release every box (warm and leased), stop the reaper and the relay."""
        self._closed = True
        if self._reaper is not None:
            self._reaper.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, *self._releasing, return_exceptions=True)
        await asyncio.gather(*(self.release(lease) for lease in list(self._leases.values())), return_exceptions=True)
        await self.relay.close()

    # -- leases -----------------------------------------------------------------------------------
    def network_for(self, allowed: bool) -> str:
        """The box network of a thread whose sandbox policy allows the network (or not): ``none`` without
        it, the configured one (``host`` unless said) with it; ``network = "none"`` never gives one."""
        return self.request.network if allowed else "none"

    def fits(self, lease: Lease, cwd: Path | None, *, read_only: bool = False, network: bool = False) -> bool:
        """Whether ``lease``'s box still suits the thread's policy (after a turn changed it: a new box)."""
        made = lease.request
        if made.network != self.network_for(network) or made.workspace_read_only != read_only:
            return False
        if cwd is None or (made.workspace is not None and cwd.is_relative_to(made.workspace)):
            return True
        return not read_only and self._covers(cwd)

    async def acquire(self, thread_id: str, owner: object, cwd: Path | None, *, read_only: bool = False,
                      network: bool = False) -> Lease:
        """A ready box for ``thread_id``: a warm one when it sees ``cwd`` as the thread may (read-write
        unless ``read_only``) on the network its policy gives (``network_for``), else a new one so."""
        self.start()
        await self.check()
        wanted = self.network_for(network)
        if wanted != self._warm_network:  # warm boxes follow the last thread's policy
            self._warm_network = wanted
            for stale in [w for w in self._warm if w.request.network != wanted]:
                self._warm.remove(stale)
                self.release_soon(stale)
        lease: Lease | None = None
        while self._warm and self._covers(cwd) and not read_only:
            candidate = self._warm.pop(0)
            if not candidate.dead:
                lease = candidate
                break
            await self.release(candidate)
        if lease is None:
            workspace = None if self._covers(cwd) and not read_only else cwd
            request = replace(self.request, workspace=workspace, workspace_read_only=read_only, network=wanted)
            lease = await self._new_lease(request, thread_id)
        lease.thread_id, lease.owner = thread_id, weakref.ref(owner)
        self._refill()
        return lease

    def _covers(self, cwd: Path | None) -> bool:
        """Whether a box of the pool's own request already sees ``cwd`` read-write."""
        if cwd is None:
            return True
        return any(cwd.is_relative_to(m.target) for m in self.request.mounts if not m.read_only)

    async def _new_lease(self, request: BoxRequest, thread_id: str) -> Lease:
        box_id = f"box-{secrets.token_hex(6)}"
        await self.relay.registry_url()  # the child relay runs (and has its socket) before a box dials it
        launch = BoxLaunch(self.relay.box_registry_url, box_id, await self.relay.grant(box_id), self.name,
                           self.owner, thread_id, relay_dir=self.relay.socket_dir)
        self._pending.add(box_id)
        try:
            box = await self.provider.start(request, launch)
            try:
                await self.relay.wait_registered(box, self.settings.start_timeout_s)
                environment, connector = await asyncio.wait_for(
                    self.relay.connect(box_id), self.settings.start_timeout_s)
            except BaseException as exc:
                await self.provider.stop(box)
                await self.relay.revoke(box_id)
                if isinstance(exc, ProviderError | asyncio.CancelledError):
                    raise
                raise ProviderError(f"the box could not be reached through the relay: {exc}") from exc
        finally:
            self._pending.discard(box_id)
        lease = Lease(box, environment, connector, request)
        self._leases[box_id] = lease
        self._spawn(self._on_exit(lease), f"box-exit-{box_id}")
        return lease

    async def _on_exit(self, lease: Lease) -> None:
        await lease.box.exited.wait()
        if not lease.released:
            logger.warning("environment %s: %s", self.name, lease.box.why)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(lease.environment.close(), 5)  # commands in flight end as lost now

    def release_soon(self, lease: Lease) -> None:
        """``release`` in the background (for callers that cannot wait); ``close`` waits for it."""
        task = asyncio.get_running_loop().create_task(self.release(lease), name=f"release-{lease.box.box_id}")
        self._releasing.add(task)
        task.add_done_callback(self._releasing.discard)

    async def release(self, lease: Lease) -> None:
        """Stop the lease's box and forget it (idempotent)."""
        if lease.released:
            return
        lease.released = True
        self._leases.pop(lease.box.box_id, None)
        with contextlib.suppress(ValueError):
            self._warm.remove(lease)
        # The box first: stopping begins before the first await (its stdin closes), so even a release
        # cancelled halfway leaves a box that is ending by itself.
        await self.provider.stop(lease.box)
        await self.relay.revoke(lease.box.box_id)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(lease.environment.close(), 5)
        with contextlib.suppress(Exception):
            await lease.connector.aclose()

    # -- the warm pool ----------------------------------------------------------------------------
    def _refill(self) -> None:
        missing = self.settings.size - len(self._warm) - self._starting
        for _ in range(max(0, missing) if not self._closed else 0):
            self._starting += 1
            self._spawn(self._warm_one(), "warm-box")

    async def _warm_one(self) -> None:
        try:
            await self.check()
            lease = await self._new_lease(replace(self.request, network=self._warm_network), "")
        except ProviderError as exc:
            logger.warning("environment %s: warming a box failed: %s", self.name, exc)
            return
        finally:
            self._starting -= 1
        if self._closed or lease.request.network != self._warm_network:  # closed, or made for a past policy
            await self.release(lease)
            self._refill()
        else:
            self._warm.append(lease)
            self._warmed.set()

    @property
    def warm_count(self) -> int:
        """How many boxes wait ready."""
        return len(self._warm)

    async def wait_warm(self, timeout: float) -> None:
        """Until the warm pool is full (benchmarks and tests); raises TimeoutError."""
        async def full() -> None:
            while len(self._warm) < self.settings.size:
                self._warmed.clear()
                await self._warmed.wait()
        await asyncio.wait_for(full(), timeout)

    # -- reaping ----------------------------------------------------------------------------------
    async def _reap_loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.reap_interval_s)
            try:
                await self.reap()
            except Exception as exc:  # an engine hiccup must not end reaping
                logger.warning("environment %s: reaping failed: %s", self.name, exc)

    async def reap(self) -> list[str]:
        """One reaper pass; returns the names of the containers it removed or the leases it released."""
        reaped: list[str] = []
        for lease in list(self._leases.values()):
            if lease.owner is not None and lease.owner() is None:  # its thread is gone
                reaped.append(lease.box.box_id)
                await self.release(lease)
        for info in await self.provider.list_boxes():
            owner, box_id = info.labels.get(LABEL_OWNER, ""), info.labels.get(LABEL_BOX, "")
            mine = owner == self.owner and box_id not in self._leases and box_id not in self._pending
            orphan = owner != self.owner and _owner_alive(owner) is False
            if mine or orphan:
                reaped.append(info.name)
                await self.provider.remove(info.name)
        return reaped

    def _spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
