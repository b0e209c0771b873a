"""The MCP approval rule, as a table: approval mode x annotations x approval policy."""

from __future__ import annotations

import pytest
from mcp.types import Tool, ToolAnnotations

from app_server.config.mcp_servers import ApprovalMode
from app_server.mcp.approval import (
    NEVER_MESSAGE,
    Answer,
    Decision,
    approval_request_params,
    decide,
    parse_approval_response,
    requires_approval,
)

READ_ONLY = ToolAnnotations(readOnlyHint=True)
DESTRUCTIVE = ToolAnnotations(destructiveHint=True)
READ_ONLY_DESTRUCTIVE = ToolAnnotations(readOnlyHint=True, destructiveHint=True)
CLOSED_WORLD_SAFE = ToolAnnotations(destructiveHint=False, openWorldHint=False)
SAFE_OPEN_UNKNOWN = ToolAnnotations(destructiveHint=False)


@pytest.mark.parametrize(
    ("mode", "annotations", "needs"),
    [
        ("approve", None, False),
        ("approve", DESTRUCTIVE, False),
        ("prompt", READ_ONLY, True),
        ("prompt", None, True),
        ("writes", READ_ONLY, False),
        ("writes", READ_ONLY_DESTRUCTIVE, False),  # writes looks at readOnlyHint only
        ("writes", None, True),
        ("writes", CLOSED_WORLD_SAFE, True),
        ("auto", None, True),
        ("auto", READ_ONLY, False),
        ("auto", READ_ONLY_DESTRUCTIVE, True),  # destructive wins in auto
        ("auto", DESTRUCTIVE, True),
        ("auto", CLOSED_WORLD_SAFE, False),
        ("auto", SAFE_OPEN_UNKNOWN, True),  # an absent openWorldHint counts as open
    ],
)
def test_requires_approval(mode: ApprovalMode, annotations: ToolAnnotations | None, needs: bool) -> None:
    assert requires_approval(mode, annotations) is needs


@pytest.mark.parametrize(
    ("policy", "mode", "annotations", "decision"),
    [
        ("never", "approve", None, Decision.ALLOW),
        ("never", "auto", None, Decision.REFUSE),
        ("never", "auto", READ_ONLY, Decision.ALLOW),
        ("never", "prompt", READ_ONLY, Decision.REFUSE),
        ("on-request", "auto", None, Decision.ASK),
        ("on-request", "approve", None, Decision.ALLOW),
        ("on-failure", "writes", None, Decision.ASK),
        (None, "auto", None, Decision.ASK),
        (None, "auto", CLOSED_WORLD_SAFE, Decision.ALLOW),
    ],
)
def test_decide(policy: str | None, mode: ApprovalMode, annotations: ToolAnnotations | None, decision: Decision) -> None:
    outcome = decide(policy, mode, annotations)
    assert outcome.decision is decision
    assert outcome.message == (NEVER_MESSAGE if decision is Decision.REFUSE else None)


@pytest.mark.parametrize(
    ("response", "mode", "answer"),
    [
        ({"action": "accept", "content": None}, "auto", Answer.ACCEPT),
        ({"action": "accept", "_meta": {"persist": "session"}}, "auto", Answer.ACCEPT_FOR_SESSION),
        ({"action": "accept", "_meta": {"persist": "always"}}, "approve", Answer.ACCEPT_AND_REMEMBER),
        ({"action": "accept", "_meta": {"persist": "always"}}, "prompt", Answer.ACCEPT),  # prompt always asks
        ({"action": "accept", "_meta": {"persist": "session"}}, "writes", Answer.ACCEPT),
        ({"action": "decline"}, "auto", Answer.DECLINE),
        ({"action": "cancel"}, "auto", Answer.CANCEL),
        ({"action": "maybe"}, "auto", Answer.CANCEL),
        ("accept", "auto", Answer.CANCEL),
    ],
)
def test_parse_approval_response(response: object, mode: ApprovalMode, answer: Answer) -> None:
    assert parse_approval_response(response, mode) is answer


def test_approval_request_persist_choices_follow_the_mode() -> None:
    tool = Tool(name="echo", inputSchema={"type": "object"})
    assert "persist" in approval_request_params("t", "u", "calc", tool, {}, "auto")["_meta"]
    assert "persist" not in approval_request_params("t", "u", "calc", tool, {}, "prompt")["_meta"]
