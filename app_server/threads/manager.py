"""Loaded threads: creating, resuming and forking them, subscriptions, and their wire views.

The ``ThreadManager`` is the one owner of ``ThreadRuntime`` objects in a process. Stored state lives in
the ``ThreadStore``; the manager overlays live state (status, active turn, environments) on it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from app_server.protocol import notices
from app_server.store import (
    LoadedThread,
    RolloutWriter,
    ThreadNotFoundError,
    ThreadStore,
    new_uuid7,
    parse_thread_id,
)
from app_server.store.thread_shape import build_thread
from app_server.threads.state import Subscriber, ThreadRuntime, ThreadSettings, fan_out
from pycodex import COMPATIBLE_CODEX_VERSION
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidRequest

if TYPE_CHECKING:
    from app_server.threads.services import ThreadServices

__all__ = ["Defaults", "MakeServices", "ThreadManager", "active_profile_wire", "sandbox_policy_wire", "settings_wire"]

logger = logging.getLogger(__name__)

#: Builds the services of a thread about to be loaded (its id and settings): ``AppServer.thread_services``.
MakeServices = Callable[[str, ThreadSettings], Awaitable["ThreadServices"]]


@dataclass(frozen=True)
class Defaults:
    """Thread settings from config, before per-thread overrides."""

    model: str
    model_provider: str
    approval_policy: str = "on-request"
    sandbox_mode: str = "workspace-write"
    developer_instructions: str | None = None
    base_instructions: str | None = None
    effort: str | None = None
    summary: str | None = None
    writable_roots: tuple[str, ...] = ()


def sandbox_policy_wire(settings: ThreadSettings) -> JsonObj:
    """The v2 ``SandboxPolicy`` for the thread's sandbox mode, writable roots and network access."""
    if settings.sandbox_mode == "danger-full-access":
        return {"type": "dangerFullAccess"}
    if settings.sandbox_mode == "read-only":
        return {"type": "readOnly", "networkAccess": False}
    return {"type": "workspaceWrite", "writableRoots": list(settings.writable_roots),
            "networkAccess": settings.network_access, "excludeTmpdirEnvVar": False, "excludeSlashTmp": False}


def active_profile_wire(settings: ThreadSettings) -> JsonObj | None:
    """Codex's ``ActivePermissionProfile`` of the thread (None when its sandbox mode was set directly)."""
    if settings.permission_profile is None:
        return None
    return {"id": settings.permission_profile, "extends": None}


def settings_wire(s: ThreadSettings) -> JsonObj:
    """Codex's ``ThreadSettings``, in its key order."""
    cwd = str(s.cwd)
    return {
        "disabledPluginIds": [], "cwd": cwd,
        "environments": [{"environmentId": "local", "cwd": cwd, "runtimeWorkspaceRoots": [cwd]}],
        "approvalPolicy": s.approval_policy, "approvalsReviewer": s.approvals_reviewer,
        "sandboxPolicy": sandbox_policy_wire(s), "activePermissionProfile": active_profile_wire(s),
        "model": s.model, "modelProvider": s.model_provider, "serviceTier": s.service_tier, "effort": s.effort,
        "summary": s.summary,
        "collaborationMode": {"mode": "default", "settings": {"model": s.model, "reasoning_effort": s.effort,
                                                              "developer_instructions": None}},
        "multiAgentMode": "explicitRequestOnly", "personality": None,
    }


class ThreadManager:
    """The loaded threads: creates, resumes and forks them from the store, and unloads them.

    ``services`` builds a new thread's ``ThreadServices``; ``connections`` lists every client connection (the
    audience of ``notices.BROADCAST`` notifications).
    """

    def __init__(self, store: ThreadStore, *, services: MakeServices,
                 connections: Callable[[], Iterable[Subscriber]] = tuple) -> None:
        self.store = store
        self.loaded: dict[str, ThreadRuntime] = {}
        self._services = services  # builds a thread's environment, skills and exec sessions
        #: Every initialized client connection (``notices.BROADCAST`` notifications go to all of them).
        self.connections = connections

    # -- views -----------------------------------------------------------------------------------
    def thread_wire(self, thread: ThreadRuntime, *, include_turns: bool = False) -> JsonObj:
        """The v2 Thread dict of a loaded thread (its turns with full items when ``include_turns``)."""
        turns = self.turns_wire(thread) if include_turns else []
        wire = build_thread(
            thread.meta, thread_id=thread.id, path=str(thread.writer.path) if thread.writer.path else None,
            preview=thread.preview, name=thread.name, created_at_ms=thread.created_at * 1000,
            updated_at_ms=max(thread.updated_at, thread.created_at) * 1000, turns=turns, status=thread.status(),
        )
        # The live settings, not the ones the thread started with: thread/settings/update and sticky turn
        # overrides change them, and Codex's thread/read and thread/list show the current ones.
        wire.update(model=thread.settings.model, modelProvider=thread.settings.model_provider,
                    reasoningEffort=thread.settings.effort)
        wire["environments"] = thread.services.environment.wire(thread.settings.cwd)
        wire["canAcceptDirectInput"] = True  # a loaded thread takes turn/start directly (Codex: true)
        return wire

    def listed_wire(self, stored: JsonObj) -> JsonObj:
        """A stored thread as Codex's listings (thread/list, thread/search) show it: a loaded one with its live
        state (and canAcceptDirectInput null); ``forkedFromId`` is never filled there, only by thread/read."""
        live = self.loaded.get(stored["id"])
        wire = dict(self.thread_wire(live), canAcceptDirectInput=None) if live is not None else dict(stored)
        wire["forkedFromId"] = None
        return wire

    @staticmethod
    def turns_wire(thread: ThreadRuntime) -> list[JsonObj]:
        """Every turn of the thread, the one in progress included (with its items so far), as Codex shows them."""
        turns = [dict(t) for t in thread.turns]
        active = thread.active
        if active is not None:
            turns.append(active.live_wire())
        return turns

    # -- lookup ----------------------------------------------------------------------------------
    def get_loaded(self, thread_id: str) -> ThreadRuntime:
        """The loaded thread ``thread_id``; InvalidRequest for a malformed id or a thread not loaded."""
        thread_id = parse_thread_id(thread_id)  # a malformed id: "invalid thread id: ..."
        thread = self.loaded.get(thread_id)
        if thread is None:
            raise InvalidRequest(f"thread not found: {thread_id}")
        return thread

    def subscribe(self, thread: ThreadRuntime, session: Subscriber) -> None:
        """Let ``session`` see the thread's notifications until it closes (subscribing twice is a no-op)."""
        if session not in thread.subscribers:
            thread.subscribers.add(session)
            session.on_close.append(lambda: thread.subscribers.discard(session))

    # -- creation ----------------------------------------------------------------------------------
    async def start(self, session: Subscriber, settings: ThreadSettings, *, ephemeral: bool,
                    thread_source: str | None, meta: JsonObj | None = None) -> ThreadRuntime:
        """Create and load a new thread with ``settings``; ``session`` is its first subscriber. ``meta``
        overrides stored fields (a sub-agent's ``source``, ``parentThreadId``, ``agentNickname``)."""
        thread_id = new_uuid7()
        overrides, meta = meta, {
            "id": thread_id, "sessionId": thread_id, "forkedFromId": None, "ephemeral": ephemeral,
            "historyMode": "paginated", "modelProvider": settings.model_provider, "model": settings.model,
            "reasoningEffort": settings.effort, "cwd": str(settings.cwd), "cliVersion": COMPATIBLE_CODEX_VERSION,
            "originator": session.client_name or None, "source": session.session_source, "threadSource": thread_source,
            "name": None, "settings": settings.to_record(),
            "baseInstructions": settings.base_instructions, "developerInstructions": settings.developer_instructions,
        }
        meta.update(overrides or {})
        # Services first: a thread whose environment cannot be had (a provider's engine is down) is refused
        # before anything of it is stored.
        services = await self._services(thread_id, settings)
        try:
            writer = await asyncio.to_thread(self.store.create_thread, meta)
        except BaseException:
            await services.environment.close()  # a provided environment's box is not left for the reaper
            if services.mcp is not None:
                await services.mcp.close()
            raise
        thread = ThreadRuntime(thread_id=thread_id, meta=meta, settings=settings, writer=writer, services=services)
        await self._register(thread, session)
        return thread

    async def _register(self, thread: ThreadRuntime, session: Subscriber) -> None:
        thread.codex_home = self.store.codex_home
        thread.connections = self.connections
        self.loaded[thread.id] = thread
        self.subscribe(thread, session)

    def _settings_from_store(self, loaded: LoadedThread, defaults: ThreadSettings) -> ThreadSettings:
        stored = {**(loaded.meta.get("settings") or {}), **loaded.settings}
        settings = replace(defaults)
        mapping = {"model": "model", "modelProvider": "model_provider", "approvalPolicy": "approval_policy",
                   "approvalsReviewer": "approvals_reviewer", "sandbox": "sandbox_mode", "effort": "effort",
                   "summary": "summary"}
        for key, attr in mapping.items():
            if stored.get(key) is not None:
                setattr(settings, attr, stored[key])
        if stored.get("cwd"):
            settings.cwd = Path(stored["cwd"])
        if stored.get("sandbox") is not None and stored["sandbox"] != defaults.sandbox_mode:
            settings.permission_profile = None  # the stored mode, not the default profile, is in effect
        settings.base_instructions = loaded.meta.get("baseInstructions")
        settings.developer_instructions = loaded.meta.get("developerInstructions")
        return settings

    async def resume(self, session: Subscriber, thread_id: str, defaults: ThreadSettings,
                     overrides: Callable[[ThreadSettings], ThreadSettings]) -> ThreadRuntime:
        """Load a stored thread (or subscribe to it if loaded) with its stored settings, then ``overrides``.

        Raises InvalidRequest when no rollout exists for ``thread_id``.
        """
        existing = self.loaded.get(thread_id)
        if existing is not None:
            self.subscribe(existing, session)
            return existing
        try:
            loaded = await asyncio.to_thread(self.store.load_thread, thread_id)
        except ThreadNotFoundError:
            raise InvalidRequest(f"no rollout found for thread id {thread_id}") from None
        writer = await asyncio.to_thread(self.store.open_writer, thread_id)
        settings = overrides(self._settings_from_store(loaded, defaults))
        thread = self._from_loaded(loaded, writer, settings, await self._services(loaded.thread_id, settings),
                                   history_initialization="cold_resume")
        await self._register(thread, session)
        return thread

    def _from_loaded(self, loaded: LoadedThread, writer: RolloutWriter, settings: ThreadSettings,
                     services: ThreadServices,
                     *, history_initialization: str) -> ThreadRuntime:
        thread = ThreadRuntime(
            thread_id=loaded.thread_id, meta=dict(loaded.meta), settings=settings, writer=writer, services=services,
            history=list(loaded.history), turns=list(loaded.turns), token_usage=loaded.token_usage,
            name=loaded.name, preview=loaded.preview, created_at=loaded.created_at_ms // 1000,
            history_initialization=history_initialization,
        )
        thread.updated_at = loaded.updated_at_ms // 1000
        stored = {**(loaded.meta.get("settings") or {}), **loaded.settings}
        thread.model_seen = stored.get("model") or loaded.meta.get("model")
        return thread

    async def fork(self, session: Subscriber, source_id: str, defaults: ThreadSettings, *, ephemeral: bool,
                   overrides: Callable[[ThreadSettings], ThreadSettings]) -> ThreadRuntime:
        """Copy thread ``source_id`` into a new loaded thread (flushing the source first when it is loaded).

        The fork's settings are the stored ones with ``overrides``; it starts read (the user made it). Raises
        InvalidRequest when no rollout exists for ``source_id``.
        """
        source = self.loaded.get(source_id)
        if source is not None:
            await asyncio.to_thread(source.writer.sync)
        try:
            writer, loaded = await asyncio.to_thread(self.store.fork_thread, source_id, None, ephemeral=ephemeral)
        except ThreadNotFoundError:
            raise InvalidRequest(f"no rollout found for thread id {source_id}") from None
        settings = overrides(self._settings_from_store(loaded, defaults))
        thread = self._from_loaded(loaded, writer, settings, await self._services(loaded.thread_id, settings),
                                   history_initialization="warm_fork")
        thread.meta["forkedFromId"] = source_id
        thread.created_at = int(time.time())
        read_states = thread.services.read_states
        if read_states is not None and not ephemeral:  # the user made the fork: nothing in it is unread
            await asyncio.to_thread(read_states.mark_read, thread.id)
        await self._register(thread, session)
        return thread

    async def read_stored(self, thread_id: str) -> LoadedThread:
        """The stored thread ``thread_id``, not loaded; raises InvalidRequest when it does not exist."""
        try:
            return await asyncio.to_thread(self.store.load_thread, thread_id)
        except ThreadNotFoundError:
            raise InvalidRequest(f"thread not loaded: {thread_id}") from None

    async def broadcast(self, notice: notices.Notice) -> None:
        """Send a ``notices.BROADCAST`` notification about a thread that is not loaded to every connection."""
        await fan_out(list(self.connections()), notice.method, notice.params)

    async def unload(self, thread: ThreadRuntime) -> None:
        """Close a loaded thread (thread/archive, thread/delete); its subscribers are told it is notLoaded."""
        self.loaded.pop(thread.id, None)
        await thread.services.exec_sessions.close_all()
        await thread.services.code_cells.close_all()
        await thread.services.environment.close()  # a provided environment's box goes with its thread
        if thread.services.mcp is not None:
            await thread.services.mcp.close()
        await asyncio.to_thread(self.store.close_writer, thread.id)
        await thread.emit(notices.thread_status_changed(thread.id, {"type": "notLoaded"}))

    async def interrupt_all(self, timeout: float) -> None:
        """Interrupt every running turn (the process is stopping) and wait, bounded, until each has
        recorded its end and told its subscribers, exactly as ``turn/interrupt`` would."""
        tasks = [task for thread in self.loaded.values() if (task := thread.interrupt()) is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    async def shutdown(self) -> None:
        """Close every loaded thread's exec sessions, then the store (the process is stopping)."""
        for thread in list(self.loaded.values()):
            await thread.services.exec_sessions.close_all()
            await thread.services.code_cells.close_all()
        await asyncio.to_thread(self.store.close)
