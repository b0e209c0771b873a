"""thread/guardianReview and thread/approveGuardianDeniedAction (Codex 0.169's approval auto-review).

approveGuardianDeniedAction is the user overriding a denial: as Codex, a *denied* assessment puts a developer
message into the thread's history (no turn starts) telling the model that exact action is now approved; any
other status is accepted and ignored. guardianReview asks the auto-reviewer to judge the tool call that ends
the thread's history. Under the default ``approvals_reviewer = "user"`` policy Codex skips the review and
answers the call id with a null assessment, and so does pycodex; pycodex has no auto-reviewer, so under an
auto-review policy it refuses with a clear error rather than invent an assessment.
"""

from __future__ import annotations

import json
import re

from pydantic import ValidationError

from app_server.context import HandlerContext
from app_server.handlers.thread_inject import append_history
from app_server.protocol import responses_named as rn
from app_server.protocol import thread_controls as p
from app_server.threads.prompt import message_item
from app_server.tools.router import MCP_NAMESPACE_PREFIX
from pycodex.json_types import JsonObj, JsonValue
from pycodex.jsonrpc.errors import InvalidRequest
from pycodex.jsonrpc.serde import codex_error_message, describe_json_value

__all__ = ["approve_denied_action", "guardian_review"]


_REVIEWABLE = "plaintext exec_command, apply_patch, request_permissions, or MCP call"
_CALL_TYPES = frozenset({"function_call", "custom_tool_call"})
_REVIEWABLE_TOOLS = frozenset({"exec_command", "apply_patch", "request_permissions"})
#: Codex reads the event from an already-parsed JSON value, where serde names any number just "number".
_NUMBER = re.compile(r"(?:integer|floating point) `[^`]*`")


def parse_event(raw: JsonValue) -> p.GuardianAssessmentEvent:
    """The event as serde reads Codex's core type, errors in Codex's words."""
    if not isinstance(raw, dict):
        shown = _NUMBER.sub("number", describe_json_value(raw))
        detail = f"invalid type: {shown}, expected struct GuardianAssessmentEvent"
        raise InvalidRequest(f"invalid Guardian denial event: {detail}")
    try:
        return p.GuardianAssessmentEvent.model_validate(raw, strict=True)
    except ValidationError as exc:
        detail = _NUMBER.sub("number", codex_error_message(exc))
        raise InvalidRequest(f"invalid Guardian denial event: {detail}") from None


def approval_text(event: p.GuardianAssessmentEvent) -> str:
    approved = {"action": event.action.model_dump(mode="json"), "outcome": "allowed"}
    return (
        "The user reviewed an action that the automatic approval reviewer denied and approved it.\n\n"
        "This approval covers exactly the action below, in the context where it was first requested; "
        "it does not extend to similar actions with other arguments.\n\n"
        f"Approved action:\n{json.dumps(approved, indent=2)}"
    )


async def approve_denied_action(
    ctx: HandlerContext, params: p.ThreadApproveGuardianDeniedActionParams
) -> rn.ThreadApproveGuardianDeniedActionResponse:
    event = parse_event(params.event)  # Codex parses the event before it looks at the thread id
    thread = ctx.services.threads.get_loaded(params.thread_id)
    if event.status == "denied":
        await append_history(thread, [message_item("developer", [approval_text(event)])])
    return rn.ThreadApproveGuardianDeniedActionResponse()


def _final_call_id(history: list[JsonObj]) -> str:
    """The call id of the thread's final item when it is a reviewable tool call; Codex's errors otherwise."""
    if not history:
        raise InvalidRequest(f"expected a final {_REVIEWABLE}")
    last = history[-1]
    name = str(last.get("name", ""))
    reviewable = name in _REVIEWABLE_TOOLS or str(last.get("namespace", "")).startswith(MCP_NAMESPACE_PREFIX)
    call_id = last.get("call_id")
    if last.get("type") not in _CALL_TYPES or not reviewable or not isinstance(call_id, str) or not call_id:
        raise InvalidRequest(f"expected a completed {_REVIEWABLE} with a nonempty call ID")
    return call_id


async def guardian_review(
    ctx: HandlerContext, params: p.ThreadGuardianReviewParams
) -> p.ThreadGuardianReviewResponse:
    services = ctx.services
    thread = services.threads.get_loaded(params.thread_id)
    if thread.active is not None:
        raise InvalidRequest("thread has an active turn")
    call_id = _final_call_id(thread.history)
    services.threads.subscribe(thread, ctx.session)  # as Codex: the caller stays subscribed after the review
    if thread.settings.approvals_reviewer == "user":
        return p.ThreadGuardianReviewResponse(call_id=call_id, assessment=None)  # policy skips the review
    raise InvalidRequest("guardian review is unavailable: pycodex has no approval auto-reviewer")
