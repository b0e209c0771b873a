"""thread/approveGuardianDeniedAction: the user overrides an automatic reviewer's denial of one action.

The event is Codex's Guardian assessment event (snake_case). A malformed one is refused as Codex 0.169
refuses it ("invalid Guardian denial event: missing field `id`"); an event that is not a denial is
accepted and ignored; a denial adds a developer message to the thread's model-visible history (and its
rollout) allowing exactly that action. Answers ``{}``, with no notification."""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar

from app_server.connection import Session
from app_server.handlers.table import RouteSpec, app_of
from app_server.protocol.base import EmptyObject, ParamsModel
from app_server.protocol.common import ThreadId
from app_server.threads.prompt import developer_message
from pycodex.jsonrpc.errors import InvalidRequest

__all__ = ["ROUTES", "check_event"]

#: Required fields of the event in declaration order (serde names the first one missing).
REQUIRED = ("id", "status", "action")
STATUSES = ("in_progress", "approved", "denied", "timed_out", "aborted")
ACTIONS = ("command", "execve", "write_stdin", "apply_patch", "network_access", "mcp_tool_call", "request_permissions")


class ApproveGuardianDeniedActionParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/approveGuardianDeniedAction"

    thread_id: ThreadId
    event: Any = None


def _unexpected(value: Any) -> str:
    """A JSON value as serde names it in an "invalid type" error."""
    if isinstance(value, bool):
        return f"boolean `{str(value).lower()}`"
    if isinstance(value, str):
        return f"string {json.dumps(value)}"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value}`"
    if isinstance(value, list):
        return "sequence"
    return "map" if isinstance(value, dict) else "null"


def _variant(value: Any, allowed: tuple[str, ...]) -> str | None:
    if not isinstance(value, str):
        return f"invalid type: {_unexpected(value)}, expected a string"
    if value not in allowed:
        listed = ", ".join(f"`{v}`" for v in allowed)
        return f"unknown variant `{value}`, expected one of {listed}"
    return None


def check_event(event: Any) -> dict[str, Any]:
    """The event as a dict, or InvalidRequest naming what is wrong with it."""
    def bad(why: str) -> InvalidRequest:
        return InvalidRequest(f"invalid Guardian denial event: {why}")

    if not isinstance(event, dict):
        raise bad(f"invalid type: {_unexpected(event)}, expected struct GuardianAssessmentEvent")
    missing = next((name for name in REQUIRED if name not in event), None)
    if missing is not None:
        raise bad(f"missing field `{missing}`")
    if not isinstance(event["id"], str):
        raise bad(f"invalid type: {_unexpected(event['id'])}, expected a string")
    why = _variant(event["status"], STATUSES)
    action = event["action"]
    if why is None:
        why = (_variant(action.get("type"), ACTIONS) if isinstance(action, dict)
               else f"invalid type: {_unexpected(action)}, expected internally tagged enum GuardianAssessmentAction")
    if why is not None:
        raise bad(why)
    return event


def approval_text(action: dict[str, Any]) -> str:
    return ("The user has manually approved an action that the automatic approval reviewer had rejected. You may "
            "perform exactly this action once; it does not approve similar actions with other arguments or "
            "targets. Approved action: " + json.dumps({"action": action, "outcome": "allowed"}))


async def approve_denied(session: Session, params: ApproveGuardianDeniedActionParams) -> EmptyObject:
    event = check_event(params.event)
    thread = app_of(session).threads.get_loaded(params.thread_id)
    if event["status"] == "denied":
        entry = developer_message([approval_text(event["action"])])
        thread.history.append(entry)
        await asyncio.to_thread(thread.writer.response_items, [entry])
    return EmptyObject()


ROUTES = (RouteSpec("thread/approveGuardianDeniedAction", ApproveGuardianDeniedActionParams, approve_denied),)
