"""turn/* requests: start (or merge into the active turn), steer and interrupt."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from app_server.connection import Session
from app_server.protocol import turns as p
from app_server.protocol.base import to_wire
from app_server.store import new_uuid7
from app_server.threads.runner import TurnRunner
from app_server.threads.state import ThreadRuntime, TurnState
from pycodex.jsonrpc.errors import InvalidRequest

if TYPE_CHECKING:
    from app_server.app import AppServer

__all__ = ["register"]

JsonObj = dict[str, Any]


def _inputs(params: Any) -> list[JsonObj]:
    out: list[JsonObj] = []
    for part in params.input:
        out.append(to_wire(part) if hasattr(part, "model_dump") else dict(part))
    return out


def _apply_turn_overrides(thread: ThreadRuntime, params: p.TurnStartParams) -> bool:
    """Sticky overrides from turn/start; True when anything changed."""
    s = thread.settings
    before = s.to_record()
    if params.cwd:
        from app_server.handlers.threads import _resolve_cwd

        s.cwd = _resolve_cwd(params.cwd, s.cwd)
    if params.model:
        s.model = params.model
    if params.effort:
        s.effort = params.effort
    if params.summary:
        s.summary = params.summary
    if isinstance(params.approval_policy, str):
        s.approval_policy = params.approval_policy
    if params.approvals_reviewer:
        s.approvals_reviewer = params.approvals_reviewer
    if params.sandbox_policy is not None:
        kind = getattr(params.sandbox_policy, "type", None) or (
            params.sandbox_policy.get("type") if isinstance(params.sandbox_policy, dict) else None)
        s.sandbox_mode = {"dangerFullAccess": "danger-full-access", "readOnly": "read-only",
                          "workspaceWrite": "workspace-write"}.get(str(kind), s.sandbox_mode)
        roots = getattr(params.sandbox_policy, "writable_roots", None)
        if kind == "workspaceWrite" and roots is not None:
            s.writable_roots = [str(r) for r in roots]
    return s.to_record() != before


def register(app: AppServer) -> None:
    router, threads = app.router, app.threads

    async def turn_start(session: Session, params: p.TurnStartParams) -> JsonObj:
        thread = threads.get_loaded(params.thread_id)
        threads.subscribe(thread, session)
        inputs = _inputs(params)
        active = thread.active
        if active is not None:
            # Codex merges a start during an active turn into that turn (same id), like a steer.
            thread.steer(inputs)
            return {"turn": dict(active.wire(view="notLoaded"), startedAt=None)}
        if _apply_turn_overrides(thread, params):
            await asyncio.to_thread(thread.writer.settings_changed, thread.settings.to_record())
        turn = TurnState(new_uuid7(), inputs=inputs)
        turn.output_schema = params.output_schema if isinstance(params.output_schema, dict) else None
        runner = TurnRunner(thread=thread, turn=turn, services=await app.turn_services(thread, session))
        session.after_response(thread.start_turn(turn, runner, app.spawn))
        return {"turn": dict(turn.wire(view="notLoaded"), startedAt=None)}

    async def turn_steer(session: Session, params: p.TurnSteerParams) -> JsonObj:
        thread = threads.get_loaded(params.thread_id)
        active = thread.active
        if active is None:
            raise InvalidRequest("no active turn to steer")
        if active.id != params.expected_turn_id:
            raise InvalidRequest(f"expected active turn id `{params.expected_turn_id}` but found `{active.id}`")
        thread.steer(_inputs(params))
        return {"turnId": active.id}

    async def turn_interrupt(session: Session, params: p.TurnInterruptParams) -> JsonObj:
        thread = threads.get_loaded(params.thread_id)
        active = thread.active
        if active is None or active.id != params.turn_id:
            raise InvalidRequest("no active turn to interrupt")

        async def cancel() -> None:
            thread.interrupt()

        session.after_response(cancel)
        return {}

    router.add("turn/start", p.TurnStartParams, turn_start,
               experimental_probe=app.experimental_probe(p.TurnStartParams))
    router.add("turn/steer", p.TurnSteerParams, turn_steer)
    router.add("turn/interrupt", p.TurnInterruptParams, turn_interrupt)
