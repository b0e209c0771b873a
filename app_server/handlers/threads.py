"""thread/* requests: start, resume, fork, read, list, archive, names and subscriptions."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app_server.connection import Session
from app_server.protocol import threads as p
from app_server.protocol.codex_0171 import ThreadListParams0171, speaks_0171
from app_server.store import (
    InvalidCursorError,
    RolloutCorruptError,
    ThreadArchivedStateError,
    ThreadNotFoundError,
    parse_thread_id,
)
from app_server.threads import history
from app_server.threads.sections import section_listing
from app_server.threads.skills_glue import ThreadSkills
from app_server.threads.state import ThreadRuntime, ThreadSettings
from app_server.threads.tool_policy import apply_start_params
from pycodex.jsonrpc.errors import InternalError, InvalidRequest

if TYPE_CHECKING:
    from app_server.app import AppServer

__all__ = ["apply_overrides", "register"]

JsonObj = dict[str, Any]
logger = logging.getLogger(__name__)


def _resolve_cwd(cwd: str | None, fallback: Path) -> Path:
    if not cwd:
        return fallback
    path = Path(cwd)
    return path if path.is_absolute() else (Path(os.getcwd()) / path)


def apply_overrides(settings: ThreadSettings, params: Any) -> ThreadSettings:
    """Copy ``settings`` with the thread-level overrides a start/resume/fork request carries."""
    s = replace(settings)
    if getattr(params, "cwd", None):
        s.cwd = _resolve_cwd(params.cwd, s.cwd)
    for attr, field in (("model", "model"), ("model_provider", "model_provider"),
                        ("approvals_reviewer", "approvals_reviewer"), ("sandbox_mode", "sandbox"),
                        ("base_instructions", "base_instructions"),
                        ("developer_instructions", "developer_instructions"), ("service_tier", "service_tier")):
        value = getattr(params, field, None)
        if value is not None:
            setattr(s, attr, value)
    policy = getattr(params, "approval_policy", None)
    if isinstance(policy, str):
        s.approval_policy = policy
    elif policy is not None:  # a granular policy: ask when the model requests escalation
        s.approval_policy = "on-request"
    return s


@contextmanager
def _rollout_errors() -> Iterator[None]:
    """A damaged rollout is a server-side fault (-32603, as Codex answers) but gets a message naming the
    thread, the file, the line and the cause, and one stderr line rather than a traceback."""
    try:
        yield
    except RolloutCorruptError as exc:
        logger.warning("%s", exc)
        raise InternalError(f"failed to read thread: {exc}") from None


def _last_turn_id(thread: ThreadRuntime) -> str:
    """The turn restored token usage is reported against (Codex: the last turn; the schema wants a string)."""
    return str(thread.turns[-1]["id"]) if thread.turns else ""


def _summary_items(turn: JsonObj) -> list[JsonObj]:
    """The summary view of a turn: its first user message and its final agent message."""
    items = list(turn.get("items") or [])
    user = [i for i in items if i.get("type") == "userMessage"][:1]
    agent = [i for i in items if i.get("type") == "agentMessage"][-1:]
    return user + agent


async def _interrupt_and_wait(thread: ThreadRuntime, timeout: float = 10.0) -> None:
    """End the active turn as interrupted (Codex archives a busy thread that way) and wait for its end."""
    active = thread.active
    if active is None:
        return
    active.interrupt_requested = True
    for _ in range(100):  # a turn accepted a moment ago may not have its task yet
        if active.task is not None or active.ended:
            break
        await asyncio.sleep(0.01)
    if active.task is not None and not active.task.done():
        active.task.cancel()
        await asyncio.wait({active.task}, timeout=timeout)


def _turn_cursor(thread_id: str, turn_id: str, *, include_anchor: bool) -> str:
    return json.dumps({"requestedThreadId": thread_id, "turnId": turn_id, "includeAnchor": include_anchor,
                       "scope": {"kind": "turns"}}, separators=(",", ":"))


def _turns_page(thread_id: str, ordered: list[JsonObj], cursor: str | None, limit: int | None) -> JsonObj:
    """One page of ``ordered`` turns. Like Codex's, a cursor names an anchor turn: ``nextCursor`` continues
    after the page's last turn, ``backwardsCursor`` starts at its first (use it with the other direction)."""
    start = 0
    if cursor:
        try:
            anchor = json.loads(cursor)
            ids = [t["id"] for t in ordered]
            index = ids.index(anchor["turnId"])
            if anchor.get("requestedThreadId") != thread_id:
                raise ValueError("cursor of another thread")
        except (ValueError, KeyError, TypeError):
            raise InvalidRequest(f"invalid cursor: {cursor}") from None
        start = index if anchor.get("includeAnchor") else index + 1
    size = limit or len(ordered) or 1
    page = ordered[start : start + size]
    more = start + size < len(ordered)
    return {
        "data": page,
        "nextCursor": _turn_cursor(thread_id, page[-1]["id"], include_anchor=False) if page and more else None,
        "backwardsCursor": _turn_cursor(thread_id, page[0]["id"], include_anchor=True) if page else None,
    }


def register(app: AppServer) -> None:
    router, threads = app.router, app.threads

    async def thread_start(session: Session, params: p.ThreadStartParams) -> JsonObj:
        settings = apply_overrides(app.thread_defaults(params.config), params)
        app.check_model(settings.model_provider)
        ThreadSkills.parse_roots(params.selected_capability_roots)  # reject bad roots before creating
        thread = await threads.start(session, settings, ephemeral=bool(params.ephemeral),
                                     thread_source=params.thread_source)
        apply_start_params(thread, params.environments, params.config)
        await thread.skills.select_roots(thread, params.selected_capability_roots)
        response = threads.settings_response(thread, include_turns=False)
        if params.service_tier is None and "service_tier" in params.model_fields_set:
            response["serviceTier"] = "default"  # Codex's answer to an explicit null

        async def started() -> None:
            await thread.emit("thread/started", {"thread": threads.thread_wire(thread)})

        session.after_response(started)
        return response

    async def thread_resume(session: Session, params: p.ThreadResumeParams) -> JsonObj:
        # Like Codex, joining a loaded thread needs no config; loading one reads config.toml again.
        defaults = app.thread_defaults(params.config, reload=params.thread_id not in threads.loaded)
        with _rollout_errors():
            thread = await threads.resume(session, params.thread_id, defaults,
                                          lambda s: apply_overrides(s, params))
        response = history.resume_fields(threads.settings_response(thread, include_turns=not params.exclude_turns),
                                          thread.id, threads.turns_wire(thread), thread.settings)
        if not params.exclude_turns:
            await session.notify("deprecationNotice", history.hydration_notice(history.HYDRATION_RESUME))
        goal = await asyncio.to_thread(app.thread_state.goal, thread.id)

        async def after() -> None:
            await session.notify("thread/status/changed", {"threadId": thread.id, "status": thread.status()})
            usage = thread.token_usage_wire()
            if usage is not None:
                await session.notify("thread/tokenUsage/updated",
                                     {"threadId": thread.id, "turnId": _last_turn_id(thread), "tokenUsage": usage})
            if goal is None:  # Codex tells a resuming client the goal state either way
                await session.notify("thread/goal/cleared", {"threadId": thread.id})
            else:
                await session.notify("thread/goal/updated", {"threadId": thread.id, "turnId": None,
                                                             "goal": goal.wire()})
            active = thread.active
            if active is not None and not active.ended:  # a client that joins may answer open approvals
                for pending in list(active.open_requests.values()):
                    pending.offer(session)

        session.after_response(after)
        return response

    async def thread_fork(session: Session, params: p.ThreadForkParams) -> JsonObj:
        defaults = app.thread_defaults(params.config)
        with _rollout_errors():
            thread = await threads.fork(session, params.thread_id, defaults, ephemeral=params.ephemeral,
                                        overrides=lambda s: apply_overrides(s, params))
        response = threads.settings_response(thread, include_turns=not params.exclude_turns)
        if not params.exclude_turns:
            await session.notify("deprecationNotice", history.hydration_notice(history.HYDRATION_RESUME))

        async def after() -> None:
            usage = thread.token_usage_wire()
            if usage is not None:
                await session.notify("thread/tokenUsage/updated",
                                     {"threadId": thread.id, "turnId": _last_turn_id(thread), "tokenUsage": usage})
            await thread.emit("thread/started", {"thread": threads.thread_wire(thread)})

        session.after_response(after)
        return response

    async def thread_read(session: Session, params: p.ThreadReadParams) -> JsonObj:
        loaded = threads.loaded.get(params.thread_id)
        if loaded is not None:
            wire = threads.thread_wire(loaded, include_turns=params.include_turns)
            last = loaded.turns[-1]["id"] if loaded.turns else None
        else:
            with _rollout_errors():
                stored = await threads.read_stored(params.thread_id)
            wire = stored.thread(include_turns=params.include_turns)
            last = stored.last_turn_id
        state = await asyncio.to_thread(app.thread_state.read_state, wire["id"], default_turn=last)
        if params.include_turns:
            await session.notify("deprecationNotice", history.hydration_notice(history.HYDRATION_READ))
        return {"thread": wire, "readState": state}

    async def thread_list(session: Session, params: ThreadListParams0171) -> JsonObj:
        cwd = params.cwd
        if params.sort_key == "section_position":
            return await section_listing(threads, app.thread_state, params.section_id)
        try:
            page = await asyncio.to_thread(
                threads.store.list_threads, cursor=params.cursor, limit=params.limit,
                sort_key=params.sort_key or "created_at", sort_direction=params.sort_direction or "desc",
                archived=bool(params.archived), cwd=cwd, search_term=params.search_term,
                source_kinds=params.source_kinds, model_providers=params.model_providers,
                excluded_ids=params.excluded_thread_ids,
                included_ids=params.included_thread_ids if speaks_0171(session.client_version) else None,
            )
        except InvalidCursorError:
            raise InvalidRequest(f"invalid cursor: {params.cursor}") from None  # Codex's wording
        data = []
        for wire in page.threads:
            live = threads.loaded.get(wire["id"])
            if live is not None and not live.turns and live.active is None:
                continue  # Codex lists a thread only once it has a user message
            data.append(dict(threads.thread_wire(live), canAcceptDirectInput=None) if live is not None else wire)
        read_states = await asyncio.to_thread(app.thread_state.read_states, {t["id"]: None for t in data})
        return {"data": data, "readStates": read_states, "nextCursor": page.next_cursor, "backwardsCursor": None}

    async def loaded_list(session: Session, params: p.ThreadLoadedListParams) -> JsonObj:
        ids = list(threads.loaded)
        return {"data": ids, "nextCursor": None}

    async def turns_list(session: Session, params: p.ThreadTurnsListParams) -> JsonObj:
        loaded = threads.loaded.get(params.thread_id)
        if loaded is not None:
            turns = threads.turns_wire(loaded)
            if not turns:
                raise history.not_materialized(loaded.id, "thread/turns/list")
        else:
            with _rollout_errors():
                turns = (await threads.read_stored(params.thread_id)).turns
        view = params.items_view or "summary"
        data = []
        for turn in turns:
            items = list(turn.get("items") or [])
            if view == "summary":
                items = _summary_items(turn)
            elif view == "notLoaded":
                items = []
            data.append(dict(turn, items=items, itemsView=view))
        if params.sort_direction != "asc":  # newest first unless asked otherwise, as Codex does
            data.reverse()
        return _turns_page(params.thread_id, data, params.cursor, params.limit or history.DEFAULT_TURNS_PAGE)

    async def name_set(session: Session, params: p.ThreadSetNameParams) -> JsonObj:
        loaded = threads.loaded.get(params.thread_id)
        try:
            if loaded is not None:
                await asyncio.to_thread(loaded.writer.name_changed, params.name)
                loaded.name = params.name
            else:
                with _rollout_errors():
                    await asyncio.to_thread(threads.store.set_name, params.thread_id, params.name)
        except ThreadNotFoundError:
            raise InvalidRequest(f"no rollout found for thread id {params.thread_id}") from None

        async def after() -> None:
            note = {"threadId": params.thread_id, "threadName": params.name}
            if loaded is not None:
                await loaded.emit("thread/name/updated", note)
            else:
                await session.notify("thread/name/updated", note)

        session.after_response(after)
        return {}

    async def archive(session: Session, params: p.ThreadArchiveParams) -> JsonObj:
        loaded = threads.loaded.get(params.thread_id)
        if loaded is not None and loaded.active is not None and not loaded.active.ended:
            await _interrupt_and_wait(loaded)
        if loaded is not None:
            subscribers = list(loaded.subscribers)
            await threads.unload(loaded)
            for sub in subscribers:
                await sub.notify("thread/status/changed",
                                 {"threadId": params.thread_id, "status": {"type": "notLoaded"}})
        try:
            await asyncio.to_thread(threads.store.archive, params.thread_id)
        except ThreadNotFoundError:
            raise InvalidRequest(f"no rollout found for thread id {params.thread_id}") from None
        except ThreadArchivedStateError as exc:
            raise InvalidRequest(str(exc)) from None
        session.after_response(lambda: session.notify("thread/archived", {"threadId": params.thread_id}))
        return {}

    async def unarchive(session: Session, params: p.ThreadUnarchiveParams) -> JsonObj:
        try:
            wire = await asyncio.to_thread(threads.store.unarchive, params.thread_id)
        except ThreadNotFoundError:
            raise InvalidRequest(f"no rollout found for thread id {params.thread_id}") from None
        except ThreadArchivedStateError as exc:
            raise InvalidRequest(str(exc)) from None
        session.after_response(lambda: session.notify("thread/unarchived", {"threadId": params.thread_id}))
        return {"thread": wire}

    async def unsubscribe(session: Session, params: p.ThreadUnsubscribeParams) -> JsonObj:
        parse_thread_id(params.thread_id)  # a malformed id is an error, as in Codex, not "notLoaded"
        loaded: ThreadRuntime | None = threads.loaded.get(params.thread_id)
        if loaded is None:
            return {"status": "notLoaded"}
        if session not in loaded.subscribers:
            return {"status": "notSubscribed"}
        loaded.subscribers.discard(session)
        return {"status": "unsubscribed"}

    router.add("thread/start", p.ThreadStartParams, thread_start,
               experimental_probe=app.experimental_probe(p.ThreadStartParams))
    router.add("thread/resume", p.ThreadResumeParams, thread_resume,
               experimental_probe=app.experimental_probe(p.ThreadResumeParams))
    router.add("thread/fork", p.ThreadForkParams, thread_fork,
               experimental_probe=app.experimental_probe(p.ThreadForkParams))
    router.add("thread/read", p.ThreadReadParams, thread_read)
    router.add("thread/list", ThreadListParams0171, thread_list,
               experimental_probe=app.experimental_probe(p.ThreadListParams))
    router.add("thread/loaded/list", p.ThreadLoadedListParams, loaded_list)
    router.add("thread/turns/list", p.ThreadTurnsListParams, turns_list)
    router.add("thread/name/set", p.ThreadSetNameParams, name_set)
    router.add("thread/archive", p.ThreadArchiveParams, archive)
    router.add("thread/unarchive", p.ThreadUnarchiveParams, unarchive)
    router.add("thread/unsubscribe", p.ThreadUnsubscribeParams, unsubscribe)
