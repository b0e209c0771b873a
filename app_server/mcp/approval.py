"""Whether a model-initiated MCP tool call may run: allow, ask the client, or refuse.

Codex's rule (core `mcp_tool_call.rs`), per approval mode:
* "approve": never needs approval;
* "prompt": always does;
* "writes": does unless the tool says `readOnlyHint: true`;
* "auto" (the default): does when `destructiveHint` is true; not when `readOnlyHint` is true; otherwise
  when `destructiveHint` or `openWorldHint` is true or absent.
A call that needs approval is refused outright under `approval_policy = "never"` (observed on 0.169:
"MCP tool call requires approval, but approval policy is never"), else the client is asked with an
`mcpServer/elicitation/request` server request (after the item's `item/started`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from mcp.types import Tool, ToolAnnotations

from app_server.config.mcp_servers import ApprovalMode
from pycodex.json_types import JsonObj

NEVER_MESSAGE = "MCP tool call requires approval, but approval policy is never"


class Decision(StrEnum):
    """What happens to an MCP tool call: it runs, the user is asked first, or it is refused."""

    ALLOW = "allow"
    ASK = "ask"
    REFUSE = "refuse"


@dataclass(frozen=True)
class ApprovalOutcome:
    """The decision for one MCP tool call, with the refusal text when it is refused."""

    decision: Decision
    message: str | None = None  # the refusal text the model and the item get


def requires_approval(mode: ApprovalMode, annotations: ToolAnnotations | None) -> bool:
    """Whether a call of a tool with ``annotations`` needs the user's approval under the server's ``mode``.

    ``approve`` never asks, ``prompt`` always does, ``writes`` asks unless the tool is read-only; the default
    asks for a destructive tool, or one that is not read-only and not known to stay in a closed world.
    """
    read_only = bool(annotations is not None and annotations.readOnlyHint)
    if mode == "approve":
        return False
    if mode == "prompt":
        return True
    if mode == "writes":
        return not read_only
    destructive = annotations.destructiveHint if annotations is not None else None
    if destructive is True:
        return True
    if read_only:
        return False
    open_world = annotations.openWorldHint if annotations is not None else None
    return destructive is None or open_world is None or open_world


def decide(approval_policy: str | None, mode: ApprovalMode, annotations: ToolAnnotations | None) -> ApprovalOutcome:
    """`approval_policy` is the thread's effective policy (None means Codex's default, "on-request")."""
    if not requires_approval(mode, annotations):
        return ApprovalOutcome(Decision.ALLOW)
    if approval_policy == "never":
        return ApprovalOutcome(Decision.REFUSE, NEVER_MESSAGE)
    return ApprovalOutcome(Decision.ASK)


ELICITATION_METHOD = "mcpServer/elicitation/request"  # the server request that asks the client


def approval_request_params(thread_id: str, turn_id: str, server: str, tool: Tool, arguments: object,
                            mode: ApprovalMode) -> JsonObj:
    """Params of the `mcpServer/elicitation/request` Codex 0.169 sends to ask about a tool call (recorded
    in tests/data/mcp/codex_0169_app_server.json). "prompt" and "writes" modes may not be remembered, so
    they offer no `persist` choices."""
    meta: JsonObj = {"codex_approval_kind": "mcp_tool_call"}
    if mode not in ("prompt", "writes"):
        meta["persist"] = ["session", "always"]
    meta["tool_name"] = tool.name
    if tool.description:
        meta["tool_description"] = tool.description
    if arguments is not None:
        meta["tool_params"] = arguments
    if isinstance(arguments, dict):
        meta["tool_params_display"] = [{"name": name, "value": arguments[name], "display_name": name}
                                       for name in sorted(arguments)]
    return {
        "threadId": thread_id, "turnId": turn_id, "serverName": server, "mode": "form", "_meta": meta,
        "message": f'Allow the {server} MCP server to run tool "{tool.name}"?',
        "requestedSchema": {"type": "object", "properties": {}},
    }


class Answer(StrEnum):
    """The user's answer to an MCP tool-call approval, as the client's elicitation response gives it."""

    ACCEPT = "accept"
    ACCEPT_FOR_SESSION = "accept_for_session"
    ACCEPT_AND_REMEMBER = "accept_and_remember"
    DECLINE = "decline"
    CANCEL = "cancel"


def parse_approval_response(response: object, mode: ApprovalMode) -> Answer:
    """The client's McpServerElicitationRequestResponse as a decision. `_meta.persist` of "session" or
    "always" remembers the approval, except in modes that always ask; anything malformed cancels."""
    if not isinstance(response, dict):
        return Answer.CANCEL
    action = response.get("action")
    if action == "decline":
        return Answer.DECLINE
    if action != "accept":
        return Answer.CANCEL
    meta = response.get("_meta")
    persist = meta.get("persist") if isinstance(meta, dict) else None
    if mode not in ("prompt", "writes"):
        if persist == "session":
            return Answer.ACCEPT_FOR_SESSION
        if persist == "always":
            return Answer.ACCEPT_AND_REMEMBER
    return Answer.ACCEPT
