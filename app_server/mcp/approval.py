"""Whether a model-initiated MCP tool call may run: allow, ask the client, or refuse.

Codex's rule (core `mcp_tool_call.rs`), per approval mode:
* "approve": never needs approval;
* "prompt": always does;
* "writes": does unless the tool says `readOnlyHint: true`;
* "auto" (the default): does when `destructiveHint` is true; not when `readOnlyHint` is true; otherwise
  when `destructiveHint` or `openWorldHint` is true or absent.
A call that needs approval is refused outright under `approval_policy = "never"` (observed on 0.169:
"MCP tool call requires approval, but approval policy is never"), else the client is asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from mcp.types import ToolAnnotations

from app_server.mcp.config import ApprovalMode

NEVER_MESSAGE = "MCP tool call requires approval, but approval policy is never"


class Decision(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    REFUSE = "refuse"


@dataclass(frozen=True)
class ApprovalOutcome:
    decision: Decision
    message: str | None = None  # the refusal text the model and the item get


def requires_approval(mode: ApprovalMode, annotations: ToolAnnotations | None) -> bool:
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
