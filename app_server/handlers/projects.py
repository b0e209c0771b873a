"""project/list, read, create, import, update, move, delete (Codex 0.169's experimental projects).

Projects live in Codex's state database (``app_server/store/projects.py``); the checks here, their order and
their texts are Codex's, as are the notifications: `project/changed` after every change and
`thread/project/updated` for each thread that joined (import) or left (delete) a project, sent before the
response to every connection that negotiated the experimental API. The thread side (a thread's ``projectId``
in thread/start, thread/read, thread/list, thread/resume and thread/metadata/update) calls the helpers below.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import TypeVar

from app_server.context import HandlerContext
from app_server.handlers.paging import page_size
from app_server.protocol import projects as p
from app_server.protocol.base import NOT_ABSOLUTE
from app_server.session import Session
from app_server.store.projects import ProjectError, ProjectStore, ProjectsUnavailable
from app_server.threads.state import fan_out
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidParams, InvalidRequest, MethodNotFound

__all__ = [
    "assign_thread",
    "current_project",
    "list_filter",
    "place_new_thread",
    "project_create",
    "project_delete",
    "project_import",
    "project_list",
    "project_move",
    "project_read",
    "project_update",
    "require_project",
    "with_projects",
]

_MAX_KEY_BYTES = 512
T = TypeVar("T")


async def project_list(ctx: HandlerContext, params: p.ProjectListParams) -> p.ProjectListResponse:
    """One page of projects, in position order unless ``sortKey`` says otherwise."""
    if params.sort_key is None and params.sort_direction is not None:
        raise InvalidParams("sortDirection requires sortKey")
    key = params.sort_key or "position"
    direction = params.sort_direction or ("asc" if key == "position" else "desc")
    limit = page_size(params.limit)
    store = _store(ctx)
    data, cursor = await _run(p.ProjectListParams.METHOD, lambda: store.page(params.cursor, limit, key, direction))
    return p.ProjectListResponse.model_validate({"data": data, "nextCursor": cursor})


async def project_read(ctx: HandlerContext, params: p.ProjectReadParams) -> p.ProjectReadResponse:
    """One project by id."""
    store = _store(ctx)
    project = await _run(params.METHOD, lambda: store.read(params.project_id))
    if project is None:
        raise InvalidParams(f"project not found: {params.project_id}")
    return p.ProjectReadResponse.model_validate({"project": project})


async def project_create(ctx: HandlerContext, params: p.ProjectCreateParams) -> p.ProjectCreateResponse:
    """Create a project (or, for a known idempotency key, answer the one it made)."""
    project, _ = await _create(ctx, params.METHOD, params.name, params.roots, params.metadata, [],
                               params.idempotency_key)  # fmt: skip
    return p.ProjectCreateResponse.model_validate({"project": project})


async def project_import(ctx: HandlerContext, params: p.ProjectImportParams) -> p.ProjectImportResponse:
    """Create a project holding existing threads; each is told it joined."""
    threads = params.threads or []
    project, created = await _create(ctx, params.METHOD, params.name, params.roots, params.metadata, threads,
                                     params.idempotency_key)  # fmt: skip
    if created:
        for thread_id in threads:
            await _thread_project_updated(ctx, thread_id, str(project["id"]))
    return p.ProjectImportResponse.model_validate({"project": project})


async def project_update(ctx: HandlerContext, params: p.ProjectUpdateParams) -> p.ProjectUpdateResponse:
    """Replace a project's name, roots or metadata."""
    _absolute(params.roots or [])
    name = None if params.name is None else _name(params.name)
    roots = None if params.roots is None else _roots(params.roots)
    store = _store(ctx)
    outcome = await _run(params.METHOD, lambda: store.update(params.project_id, name, roots, params.metadata))
    if outcome is None:
        raise InvalidParams(f"project not found: {params.project_id}")
    project, changed = outcome
    if changed:
        await _project_changed(ctx, params.project_id, "updated")
    return p.ProjectUpdateResponse.model_validate({"project": project})


async def project_move(ctx: HandlerContext, params: p.ProjectMoveParams) -> p.ProjectMoveResponse:
    """Move a project before another, or to the end."""
    store = _store(ctx)
    moved = await _run(params.METHOD, lambda: store.move(params.project_id, params.before_project_id))
    if moved is None:
        raise InvalidParams(f"project not found: {params.project_id}")
    if moved:
        await _project_changed(ctx, params.project_id, "updated")
    return p.ProjectMoveResponse()


async def project_delete(ctx: HandlerContext, params: p.ProjectDeleteParams) -> p.ProjectDeleteResponse:
    """Delete a project; its threads stay, in no project."""
    store = _store(ctx)
    left = await _run(params.METHOD, lambda: store.delete(params.project_id))
    if left is None:
        raise InvalidParams(f"project not found: {params.project_id}")
    await _project_changed(ctx, params.project_id, "deleted")
    for thread_id in left:  # archived members leave too, but Codex tells only about the active ones
        await _thread_project_updated(ctx, thread_id, None)
    return p.ProjectDeleteResponse()


async def assign_thread(ctx: HandlerContext, thread_id: str, project_id: str) -> str | None:
    """thread/metadata/update's ``projectId`` ("" clears it): the thread's project afterwards. Every
    experimental client is told when it changed."""
    target = project_id or None
    store = _store(ctx)
    try:
        before = await asyncio.to_thread(store.set_thread_project, thread_id, target)
    except ProjectsUnavailable:
        raise InvalidRequest("projectId is unavailable without sqlite state") from None
    except ProjectError as exc:
        raise InvalidRequest(str(exc)) from None
    if before != target:
        await _thread_project_updated(ctx, thread_id, target)
    return target


async def current_project(ctx: HandlerContext, thread_id: str) -> str | None:
    """The project a thread is in; None also where Codex's state database is missing."""
    store = _store(ctx)
    try:
        return await asyncio.to_thread(store.thread_project, thread_id)
    except ProjectsUnavailable:
        return None


async def require_project(ctx: HandlerContext, project_id: str) -> None:
    """thread/start's ``projectId`` must name a project (checked before the thread is made)."""
    store = _store(ctx)
    try:
        found = await asyncio.to_thread(store.read, project_id)
    except ProjectsUnavailable:
        raise InvalidRequest("projectId is unavailable without sqlite state") from None
    if found is None:
        raise InvalidRequest(f"project not found: {project_id}")


async def place_new_thread(ctx: HandlerContext, thread_id: str, project_id: str) -> None:
    """Store a new durable thread's project (Codex sends no notification for a thread/start)."""
    store = _store(ctx)
    try:
        await asyncio.to_thread(store.set_thread_project, thread_id, project_id)
    except (ProjectsUnavailable, ProjectError) as exc:  # checked just before; a concurrent delete lands here
        raise InvalidRequest(str(exc)) from None


async def with_projects(ctx: HandlerContext, wires: list[JsonObj]) -> list[JsonObj]:
    """Thread wires with the ``projectId`` Codex's state database gives each (unchanged without one)."""
    store = _store(ctx)
    try:
        found = await asyncio.to_thread(store.projects_of, [str(w["id"]) for w in wires])
    except ProjectsUnavailable:
        return wires
    return [dict(w, projectId=found.get(str(w["id"]), w.get("projectId"))) for w in wires]


async def list_filter(ctx: HandlerContext, project_id: str | None) -> tuple[list[str] | None, list[str]]:
    """thread/list's ``projectId`` as (only these ids or None for any, also leave out these): a project's
    threads, or (None) the threads in no project."""
    store = _store(ctx)
    try:
        ids = await asyncio.to_thread(store.assigned, project_id)
    except ProjectsUnavailable:
        ids = []  # no database: no thread is in any project
    return (None, ids) if project_id is None else (ids, [])


# -- helpers ---------------------------------------------------------------------------------------------------
async def _create(ctx: HandlerContext, method: str, name: str, roots: list[p.ProjectRoot],
                  metadata: dict[str, str] | None, threads: list[str], key: str) -> tuple[JsonObj, bool]:
    _absolute(roots)
    if not key.strip():
        raise InvalidParams("idempotencyKey must not be empty")
    if len(key.encode()) > _MAX_KEY_BYTES:
        raise InvalidParams(f"idempotencyKey must be at most {_MAX_KEY_BYTES} bytes")
    seen: set[str] = set()
    for thread_id in threads:
        if thread_id in seen:
            raise InvalidParams(f"duplicate thread id: {thread_id}")
        seen.add(thread_id)
    clean = _name(name)
    paths = _roots(roots)
    store = _store(ctx)
    project, created = await _run(method, lambda: store.create(clean, paths, metadata or {}, threads, key))
    if created:
        await _project_changed(ctx, str(project["id"]), "created")
    return project, created


def _name(name: str) -> str:
    clean = name.strip()
    if not clean:
        raise InvalidParams("project name must not be empty")
    return clean


def _absolute(roots: list[p.ProjectRoot]) -> None:
    """A relative root is refused before any other check: Codex fails to parse the params themselves."""
    if any(not os.path.isabs(root.path) for root in roots):
        raise InvalidRequest(NOT_ABSOLUTE)


def _roots(roots: list[p.ProjectRoot]) -> list[str]:
    """The roots as Codex stores them: normalized, each once (also once resolved)."""
    logical: set[str] = set()
    resolved: set[str] = set()
    paths = []
    for root in roots:
        path = os.path.normpath(root.path)
        if path.startswith("//"):  # POSIX keeps a leading "//"; Codex's normalization does not
            path = "/" + path.lstrip("/")
        if path in logical:
            raise InvalidParams(f"duplicate project root: {path}")
        logical.add(path)
        if os.path.exists(path):
            real = os.path.realpath(path)
            if real in resolved:
                raise InvalidParams(f"duplicate resolved project root: {path}")
            resolved.add(real)
        paths.append(path)
    return paths


def _store(ctx: HandlerContext) -> ProjectStore:
    return ProjectStore(ctx.services.codex_home)


async def _run(method: str, call: Callable[[], T]) -> T:
    try:
        return await asyncio.to_thread(call)
    except ProjectsUnavailable:
        # Codex's answer when its thread store has no sqlite state (pycodex never creates Codex's database).
        raise MethodNotFound(f"{method} is unavailable without sqlite state") from None
    except ProjectError as exc:
        raise InvalidParams(str(exc)) from None


async def _broadcast(ctx: HandlerContext, method: str, params: JsonObj) -> None:
    # Both notifications are experimental in Codex 0.169: every connection that negotiated the API gets them.
    audience = [s for s in ctx.services.threads.connections() if isinstance(s, Session) and s.experimental_api]
    await fan_out(audience, method, params)


async def _project_changed(ctx: HandlerContext, project_id: str, change: p.ProjectChangeType) -> None:
    note = p.ProjectChangedNotification(project_id=project_id, change_type=change)
    await _broadcast(ctx, "project/changed", note.model_dump(mode="json", by_alias=True))


async def _thread_project_updated(ctx: HandlerContext, thread_id: str, project_id: str | None) -> None:
    note = p.ThreadProjectUpdatedNotification(thread_id=thread_id, project_id=project_id)
    await _broadcast(ctx, "thread/project/updated", note.model_dump(mode="json", by_alias=True))
