"""thread/* requests: start, resume, fork, read, list, archive, names and subscriptions."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

from app_server.context import HandlerContext
from app_server.handlers.announce import announce
from app_server.lazy import LazyModule
from app_server.protocol import notices
from app_server.protocol import threads as p
from app_server.protocol.codex_0171 import ThreadListParams0171, speaks_0171
from app_server.protocol.common import CollaborationMode, CollaborationModeSettings
from app_server.store import (
    InvalidCursorError,
    RolloutCorruptError,
    ThreadArchivedStateError,
    ThreadNotFoundError,
    parse_thread_id,
)
from app_server.threads import history
from app_server.threads.config_notices import thread_config_notices
from app_server.threads.manager import active_profile_wire, sandbox_policy_wire
from app_server.threads.overrides import apply_thread_overrides, resolve_cwd
from app_server.threads.sections import section_listing
from app_server.threads.skills_glue import ThreadSkills
from app_server.threads.state import ThreadRuntime
from app_server.threads.tool_policy import apply_start_params
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InternalError, InvalidRequest

if TYPE_CHECKING:
    from app_server.handlers import projects
    from app_server.threads.manager import ThreadManager
else:
    projects = LazyModule("app_server.handlers.projects")

__all__ = [
    "archive", "loaded_list", "name_set", "thread_fork", "thread_list", "thread_read", "thread_resume",
    "thread_start", "turns_list", "unarchive", "unsubscribe",
]

logger = logging.getLogger(__name__)

_Started = TypeVar("_Started", bound=p.ThreadStartResponse)  # thread/start's response or thread/fork's


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


def _turn_cursor(thread_id: str, turn_id: str, *, include_anchor: bool) -> str:
    return json.dumps({"requestedThreadId": thread_id, "turnId": turn_id, "includeAnchor": include_anchor,
                       "scope": {"kind": "turns"}}, separators=(",", ":"))


def _turns_page(
    thread_id: str, ordered: list[JsonObj], cursor: str | None, limit: int | None
) -> p.ThreadTurnsListResponse:
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
    return p.ThreadTurnsListResponse(
        data=page,
        next_cursor=_turn_cursor(thread_id, page[-1]["id"], include_anchor=False) if page and more else None,
        backwards_cursor=_turn_cursor(thread_id, page[0]["id"], include_anchor=True) if page else None,
    )


def _started(
    model: type[_Started], threads: ThreadManager, thread: ThreadRuntime, *, include_turns: bool,
    service_tier: str | None,
) -> _Started:
    """What thread/start and thread/fork answer (``model`` is either's response): the thread and its
    effective settings."""
    s = thread.settings
    return model(
        thread=threads.thread_wire(thread, include_turns=include_turns), model=s.model,
        model_provider=s.model_provider, service_tier=service_tier, disabled_plugin_ids=[], cwd=str(s.cwd),
        runtime_workspace_roots=[str(s.cwd)], instruction_sources=[], approval_policy=s.approval_policy,
        approvals_reviewer=s.approvals_reviewer, sandbox=sandbox_policy_wire(s),
        active_permission_profile=active_profile_wire(s), reasoning_effort=s.effort,
        multi_agent_mode="explicitRequestOnly",
    )


async def thread_start(ctx: HandlerContext, params: p.ThreadStartParams) -> p.ThreadStartResponse:
    services = ctx.services
    threads = services.threads
    # the defaults for the thread's own cwd: its project's trust decides an unconfigured sandbox
    cwd = resolve_cwd(params.cwd, services.working_dir())
    settings = apply_thread_overrides(services.thread_defaults(params.config, cwd=cwd), params)
    services.check_model(settings.model_provider)
    ThreadSkills.parse_roots(params.selected_capability_roots)  # reject bad roots before creating
    if params.project_id is not None:
        await projects.require_project(ctx, params.project_id)
    thread = await threads.start(ctx.session, settings, ephemeral=bool(params.ephemeral),
                                 thread_source=params.thread_source)
    if params.project_id is not None and not params.ephemeral:  # an ephemeral one shows it in answers only
        await projects.place_new_thread(ctx, thread.id, params.project_id)
    apply_start_params(thread, params.environments, params.config)
    await thread.services.skills.select_roots(thread, params.selected_capability_roots)
    explicit_null = params.service_tier is None and "service_tier" in params.model_fields_set
    tier = "default" if explicit_null else thread.settings.service_tier  # Codex's answer to an explicit null
    response = _started(p.ThreadStartResponse, threads, thread, include_turns=False, service_tier=tier)
    response.thread.project_id = params.project_id

    # what the config this thread was just built from draws (deprecated keys, ignored settings)
    config_notices = thread_config_notices(services.config.raw, services.config.warnings, thread.id)

    async def started() -> None:
        await thread.emit(notices.thread_started(dict(threads.thread_wire(thread), projectId=params.project_id)))
        for notice in config_notices:
            await notices.send(ctx.session, notice)
        services.prewarm_turns()  # the client composes its first prompt now

    ctx.session.after_response(started)
    return response


async def thread_resume(ctx: HandlerContext, params: p.ThreadResumeParams) -> p.ThreadResumeResponse:
    services = ctx.services
    threads = services.threads
    # Like Codex, joining a loaded thread needs no config; loading one reads config.toml again.
    cold = params.thread_id not in threads.loaded
    defaults = services.thread_defaults(params.config, reload=cold)
    with _rollout_errors():
        thread = await threads.resume(ctx.session, params.thread_id, defaults,
                                      lambda s: apply_thread_overrides(s, params))
    s = thread.settings
    cursors = history.resume_fields({}, thread.id, threads.turns_wire(thread), s)
    response = p.ThreadResumeResponse(
        thread=threads.thread_wire(thread, include_turns=not params.exclude_turns), model=s.model,
        model_provider=s.model_provider, service_tier=s.service_tier, disabled_plugin_ids=[], cwd=str(s.cwd),
        runtime_workspace_roots=[str(s.cwd)], instruction_sources=[], approval_policy=s.approval_policy,
        approvals_reviewer=s.approvals_reviewer, sandbox=sandbox_policy_wire(s),
        active_permission_profile=active_profile_wire(s), reasoning_effort=s.effort,
        collaboration_mode=CollaborationMode(mode="default", settings=CollaborationModeSettings(
            model=s.model, reasoning_effort=s.effort, developer_instructions=s.developer_instructions)),
        multi_agent_mode="explicitRequestOnly", initial_turns_page=None,
        turns_backwards_cursor=cursors["turnsBackwardsCursor"], items_backwards_cursor=cursors["itemsBackwardsCursor"],
    )
    response.thread.project_id = await projects.current_project(ctx, thread.id)
    if not params.exclude_turns:
        await notices.send(ctx.session, notices.deprecation_notice(history.HYDRATION_RESUME))
    if cold:  # loading the thread: its config's notices, then its status, before the answer (as Codex)
        for notice in thread_config_notices(services.config.raw, services.config.warnings, thread.id):
            await notices.send(ctx.session, notice)
        await thread.emit(notices.thread_status_changed(thread.id, thread.status()))
    goal = await asyncio.to_thread(services.thread_state.goal, thread.id)

    async def after() -> None:
        usage = thread.token_usage_wire()
        if cold and usage is not None:  # a client joining a loaded thread gets neither status nor usage
            usage_notice = notices.token_usage_updated(thread.id, _last_turn_id(thread), usage)
            await notices.send(ctx.session, usage_notice)
        # Codex tells every subscriber the goal state either way, the joining client included.
        if goal is None:
            await thread.emit(notices.thread_goal_cleared(thread.id))
        else:
            await thread.emit(notices.thread_goal_updated(thread.id, None, goal.wire()))
        active = thread.active
        if active is not None:  # a client that joins may answer open approvals
            for pending in list(active.open_requests.values()):
                pending.offer(ctx.session)
        services.prewarm_turns()

    ctx.session.after_response(after)
    return response


async def thread_fork(ctx: HandlerContext, params: p.ThreadForkParams) -> p.ThreadForkResponse:
    services = ctx.services
    threads = services.threads
    defaults = services.thread_defaults(params.config)
    with _rollout_errors():
        thread = await threads.fork(ctx.session, params.thread_id, defaults, ephemeral=params.ephemeral,
                                    overrides=lambda s: apply_thread_overrides(s, params))
    response = _started(p.ThreadForkResponse, threads, thread, include_turns=not params.exclude_turns,
                        service_tier=thread.settings.service_tier)
    project = await projects.current_project(ctx, params.thread_id)  # Codex: a fork stays in its project
    if project is not None and not params.ephemeral:
        await projects.place_new_thread(ctx, thread.id, project)
    response.thread.project_id = project
    if not params.exclude_turns:
        await notices.send(ctx.session, notices.deprecation_notice(history.HYDRATION_RESUME))
    for notice in thread_config_notices(services.config.raw, services.config.warnings, thread.id):
        await notices.send(ctx.session, notice)

    async def after() -> None:
        usage = thread.token_usage_wire()
        if usage is not None and not params.exclude_turns:  # as Codex: a fork without its turns gets none
            usage_notice = notices.token_usage_updated(thread.id, _last_turn_id(thread), usage)
            await notices.send(ctx.session, usage_notice)
        await thread.emit(notices.thread_started(dict(threads.thread_wire(thread), projectId=project)))
        services.prewarm_turns()

    ctx.session.after_response(after)
    return response


def _sub_agent(wire: JsonObj) -> bool:
    """Whether the thread was spawned by another thread's model (multi_agent_v1)."""
    source = wire.get("source")
    return isinstance(source, dict) and "subAgent" in source


async def thread_read(ctx: HandlerContext, params: p.ThreadReadParams) -> p.ThreadReadResponse:
    services = ctx.services
    threads = services.threads
    loaded = threads.loaded.get(params.thread_id)
    if loaded is not None:
        wire = threads.thread_wire(loaded, include_turns=params.include_turns)
        last = loaded.turns[-1]["id"] if loaded.turns and not loaded.ephemeral else None
    else:
        with _rollout_errors():
            stored = await threads.read_stored(params.thread_id)
        wire = stored.thread(include_turns=params.include_turns)
        last = stored.last_turn_id
    # Codex: a thread with no turn yet, an ephemeral one or a sub-agent has no read state (none is stored).
    state = None if last is None or _sub_agent(wire) else await asyncio.to_thread(
        services.thread_state.read_state, wire["id"], default_turn=last)
    if params.include_turns:
        await notices.send(ctx.session, notices.deprecation_notice(history.HYDRATION_READ))
    (wire,) = await projects.with_projects(ctx, [wire])
    return p.ThreadReadResponse(thread=wire, read_state=state)


async def thread_list(ctx: HandlerContext, params: ThreadListParams0171) -> p.ThreadListResponse:
    services = ctx.services
    threads = services.threads
    cwd = params.cwd
    if params.sort_key == "section_position":
        listing = await section_listing(threads, services.thread_state, params.section_id)
        return p.ThreadListResponse(data=listing["data"], read_states=listing["readStates"],
                                    next_cursor=listing["nextCursor"], backwards_cursor=listing["backwardsCursor"])
    included = params.included_thread_ids if speaks_0171(ctx.session.client_version) else None
    excluded = list(params.excluded_thread_ids or [])
    if "project_id" in params.model_fields_set:  # omitted: every project; null: threads in none
        members, outside = await projects.list_filter(ctx, params.project_id)
        excluded += outside
        if members is not None:
            included = members if included is None else [t for t in included if t in set(members)]
    try:
        page = await asyncio.to_thread(
            threads.store.list_threads, cursor=params.cursor, limit=params.limit,
            sort_key=params.sort_key or "created_at", sort_direction=params.sort_direction or "desc",
            archived=bool(params.archived), cwd=cwd, search_term=params.search_term,
            source_kinds=params.source_kinds, model_providers=params.model_providers,
            excluded_ids=excluded, included_ids=included,
        )
    except InvalidCursorError:
        raise InvalidRequest(f"invalid cursor: {params.cursor}") from None  # Codex's wording
    data = []
    for wire in page.threads:
        live = threads.loaded.get(wire["id"])
        if live is not None and not live.turns and live.active is None:
            continue  # Codex lists a thread only once it has a user message
        data.append(threads.listed_wire(wire))
    data = await projects.with_projects(ctx, data)
    read_states = await asyncio.to_thread(services.thread_state.read_states,
                                          {t["id"]: None for t in data if not _sub_agent(t)})
    return p.ThreadListResponse(data=data, read_states=read_states, next_cursor=page.next_cursor,
                                backwards_cursor=page.backwards_cursor)


async def loaded_list(ctx: HandlerContext, params: p.ThreadLoadedListParams) -> p.ThreadLoadedListResponse:
    return p.ThreadLoadedListResponse(data=list(ctx.services.threads.loaded), next_cursor=None)


async def turns_list(ctx: HandlerContext, params: p.ThreadTurnsListParams) -> p.ThreadTurnsListResponse:
    threads = ctx.services.threads
    loaded = threads.loaded.get(params.thread_id)
    if loaded is not None and loaded.ephemeral:  # Codex keeps no history to page (the TUI asks for title threads)
        raise InvalidRequest("ephemeral threads do not support thread/turns/list")
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


async def name_set(ctx: HandlerContext, params: p.ThreadSetNameParams) -> p.ThreadSetNameResponse:
    threads = ctx.services.threads
    loaded = threads.loaded.get(params.thread_id)
    try:
        if loaded is not None and loaded.writer.ephemeral_thread:
            loaded.name = params.name
        elif loaded is not None:  # the store appends through the open writer and tells session_index.jsonl
            await asyncio.to_thread(threads.store.set_name, params.thread_id, params.name)
            loaded.name = params.name
        else:
            with _rollout_errors():
                await asyncio.to_thread(threads.store.set_name, params.thread_id, params.name)
    except ThreadNotFoundError:
        raise InvalidRequest(f"no rollout found for thread id {params.thread_id}") from None

    note = notices.thread_name_updated(params.thread_id, params.name)
    ctx.session.after_response(lambda: announce(ctx, params.thread_id, note))
    return p.ThreadSetNameResponse()


async def archive(ctx: HandlerContext, params: p.ThreadArchiveParams) -> p.ThreadArchiveResponse:
    threads = ctx.services.threads
    loaded = threads.loaded.get(params.thread_id)
    if loaded is not None:  # Codex archives a busy thread by interrupting its turn
        await loaded.interrupt_and_wait(timeout=10.0)
    if loaded is not None:
        await threads.unload(loaded)
    try:
        await asyncio.to_thread(threads.store.archive, params.thread_id)
    except ThreadNotFoundError:
        raise InvalidRequest(f"no rollout found for thread id {params.thread_id}") from None
    except ThreadArchivedStateError as exc:
        raise InvalidRequest(str(exc)) from None
    notice = notices.thread_archived(params.thread_id)
    ctx.session.after_response(lambda: announce(ctx, params.thread_id, notice))
    return p.ThreadArchiveResponse()


async def unarchive(ctx: HandlerContext, params: p.ThreadUnarchiveParams) -> p.ThreadUnarchiveResponse:
    threads = ctx.services.threads
    try:
        wire = await asyncio.to_thread(threads.store.unarchive, params.thread_id)
    except ThreadNotFoundError:
        raise InvalidRequest(f"no rollout found for thread id {params.thread_id}") from None
    except ThreadArchivedStateError as exc:
        raise InvalidRequest(str(exc)) from None
    notice = notices.thread_unarchived(params.thread_id)
    ctx.session.after_response(lambda: announce(ctx, params.thread_id, notice))
    return p.ThreadUnarchiveResponse(thread=wire)


async def unsubscribe(ctx: HandlerContext, params: p.ThreadUnsubscribeParams) -> p.ThreadUnsubscribeResponse:
    threads = ctx.services.threads
    parse_thread_id(params.thread_id)  # a malformed id is an error, as in Codex, not "notLoaded"
    loaded: ThreadRuntime | None = threads.loaded.get(params.thread_id)
    if loaded is None:
        return p.ThreadUnsubscribeResponse(status="notLoaded")
    if ctx.session not in loaded.subscribers:
        return p.ThreadUnsubscribeResponse(status="notSubscribed")
    loaded.subscribers.discard(ctx.session)
    return p.ThreadUnsubscribeResponse(status="unsubscribed")
