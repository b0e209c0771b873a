"""The app-server's approval requests as ACP ``session/request_permission``, and the user's choice back.

``item/commandExecution/requestApproval`` and ``item/fileChange/requestApproval`` (the v2 requests) become one
permission request each, on the tool call the item announced (same id); so does the
``mcpServer/elicitation/request`` Codex sends to approve an MCP tool call (``_meta.codex_approval_kind``),
on the session's running MCP call. Other elicitations (a server's own forms) are not approvals. The options are ACP's four kinds;
"allow always" is the session-wide grant v2 calls ``acceptForSession``. A ``cancelled`` outcome (the client
cancelled the prompt) is v2's ``cancel``, which ends the turn as ``interrupted``.
"""

from __future__ import annotations

from typing import Any

from acp import helpers
from acp.schema import AllowedOutcome, PermissionOption, RequestPermissionResponse, ToolCallUpdate

from acp_agent.updates import diff_contents, obj
from pycodex.json_types import JsonObj

__all__ = ["APPROVAL_METHODS", "MCP_APPROVAL", "decision_for", "elicitation_answer", "is_approval", "options_for",
           "tool_call_for"]

#: The v2 server requests that are questions for the editor's user.
APPROVAL_METHODS = frozenset({"item/commandExecution/requestApproval", "item/fileChange/requestApproval"})
#: The elicitation that asks about an MCP tool call.
MCP_APPROVAL = "mcpServer/elicitation/request"
_OPTIONS = (
    PermissionOption(option_id="allow_once", name="Allow", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Allow for this session", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
)
_DECISIONS = {"allow_once": "accept", "allow_always": "acceptForSession", "reject_once": "decline"}


def is_approval(method: str, params: JsonObj) -> bool:
    """Whether the server request is a question for the user that ACP's permission request can carry."""
    if method in APPROVAL_METHODS:
        return True
    meta = obj(params.get("_meta"))
    return method == MCP_APPROVAL and meta.get("codex_approval_kind") == "mcp_tool_call"


def options_for(method: str, params: JsonObj) -> list[PermissionOption]:
    """The choices offered: session-wide approval only where the server offers it."""
    if method == MCP_APPROVAL and "session" not in (obj(params.get("_meta")).get("persist") or []):
        return [o for o in _OPTIONS if o.option_id != "allow_always"]
    offered = params.get("availableDecisions")
    if isinstance(offered, list) and "acceptForSession" not in offered:
        return [o for o in _OPTIONS if o.option_id != "allow_always"]
    return list(_OPTIONS)


def tool_call_for(method: str, params: JsonObj, changes: list[JsonObj] | None) -> ToolCallUpdate:
    """The tool call the question is about (its id is the item's), with what the user needs to decide."""
    item_id = str(params.get("itemId", ""))
    reason = params.get("reason")
    if method == "item/commandExecution/requestApproval":
        title = str(params.get("command") or "Run a command")
        content = [helpers.tool_content(helpers.text_block(str(reason)))] if reason else None
        return ToolCallUpdate(tool_call_id=item_id, title=title, kind="execute", status="pending", content=content,
                              raw_input={"command": params.get("command"), "cwd": params.get("cwd"),
                                         "reason": reason})
    if method == MCP_APPROVAL:
        meta = obj(params.get("_meta"))
        title = f"{params.get('serverName', '')}.{meta.get('tool_name', '')}"
        return ToolCallUpdate(tool_call_id=item_id, title=title, kind="other", status="pending",
                              content=[helpers.tool_content(helpers.text_block(str(params.get("message", ""))))],
                              raw_input={"arguments": meta.get("tool_params")})
    diffs: list[Any] = list(diff_contents(changes or []))
    return ToolCallUpdate(tool_call_id=item_id, title="Apply the changes" if reason is None else str(reason),
                          kind="edit", status="pending", content=diffs or None,
                          raw_input={"reason": reason, "grantRoot": params.get("grantRoot")})


def elicitation_answer(decision: str) -> JsonObj:
    """The MCP approval elicitation's answer for a v2 decision (``acceptForSession`` persists for the session)."""
    if decision == "accept":
        return {"action": "accept", "content": {}}
    if decision == "acceptForSession":
        return {"action": "accept", "content": {}, "_meta": {"persist": "session"}}
    return {"action": decision, "content": None}


def decision_for(response: RequestPermissionResponse) -> str:
    """The v2 ``decision`` for the client's answer (``cancel`` for a cancelled prompt or an unknown option)."""
    outcome = response.outcome
    if isinstance(outcome, AllowedOutcome):
        return _DECISIONS.get(outcome.option_id, "cancel")
    return "cancel"
