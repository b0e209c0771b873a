"""Command approvals: when to ask, what the ``item/commandExecution/requestApproval`` request says,
and what each decision means for the command and the turn.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from pycodex.json_types import JsonObj

__all__ = [
    "APPROVAL_TIMEOUT_S",
    "DECLINED_OUTPUT",
    "NO_ENVIRONMENT",
    "Decision",
    "approval_params",
    "is_known_safe",
    "needs_approval",
    "parse_decision",
]

#: What the model is told when the user declines (the text Codex uses, so prompts tuned on it work).
DECLINED_OUTPUT = 'exec_command failed: CreateProcess { message: "Rejected(\\"rejected by user\\")" }'
CANCELLED_OUTPUT = "aborted by user"
#: How long a tool waits for the user's answer to an approval (or elicitation) request.
APPROVAL_TIMEOUT_S = float(os.environ.get("PYCODEX_APPROVAL_TIMEOUT_S", "3600"))
#: What a tool answers when the thread has no usable execution environment (Codex's text).
NO_ENVIRONMENT = (
    "No usable execution environment is available. Wait for an environment to become available before "
    "using this tool."
)

_SAFE_PROGRAMS = frozenset(
    {"ls", "cat", "pwd", "head", "tail", "wc", "grep", "rg", "echo", "true", "false", "which", "whoami",
     "date", "uname", "stat", "file", "nl", "sort", "uniq", "cut", "tr", "basename", "dirname", "realpath"}
)
_SHELL_META = re.compile(r"[<>|;&`$(){}\n]")


def is_known_safe(cmd: str) -> bool:
    """A single read-only command with no redirection, pipes or substitutions."""
    if _SHELL_META.search(cmd):
        return False
    try:
        words = shlex.split(cmd)
    except ValueError:
        return False
    return bool(words) and words[0] in _SAFE_PROGRAMS


def needs_approval(
    *, policy: str, escalated: bool, cmd: str, approved: set[str], argv: Sequence[str] = (),
    allowed_prefixes: Sequence[tuple[str, ...]] = (),
) -> bool:
    """Whether running ``cmd`` must be approved by the user first under approval ``policy``.

    Never for a command approved for the session or covered by an accepted prefix rule; under ``untrusted``
    for anything not known to be safe; otherwise only when the model asked to run outside the sandbox.
    """
    if cmd in approved:
        return False
    if any(prefix and tuple(argv[: len(prefix)]) == prefix for prefix in allowed_prefixes):
        return False  # an execpolicy amendment the user accepted earlier
    if policy == "never":
        return False
    if policy == "untrusted":
        return escalated or not is_known_safe(cmd)
    return escalated  # on-request (and granular policies, conservatively)


@dataclass(frozen=True)
class Decision:
    """The user's answer to a command approval, and the argv prefix to remember when they allowed one."""

    kind: str  # accept | acceptForSession | decline | cancel
    remember_prefix: tuple[str, ...] | None = None

    @property
    def runs(self) -> bool:
        """Whether the command runs (accepted once or for the session)."""
        return self.kind in ("accept", "acceptForSession")


def parse_decision(result: object) -> Decision:
    """Read the client's answer; anything unreadable counts as a decline (fail closed)."""
    decision = result.get("decision") if isinstance(result, dict) else None
    if decision in ("accept", "acceptForSession", "decline", "cancel"):
        return Decision(decision)
    if isinstance(decision, dict):
        amend = decision.get("acceptWithExecpolicyAmendment")
        if isinstance(amend, dict):
            prefix = amend.get("execpolicy_amendment")
            return Decision("accept", tuple(prefix) if isinstance(prefix, list) else None)
        if "applyNetworkPolicyAmendment" in decision:
            return Decision("accept")
    return Decision("decline")


def approval_params(
    *,
    thread_id: str,
    turn_id: str,
    item_id: str,
    started_at_ms: int,
    environment_id: str,
    reason: str | None,
    command: str,
    argv: list[str],
    cwd: str,
    user_cmd: str,
    prefix_rule: list[str] | None,
) -> JsonObj:
    """The params of ``item/commandExecution/requestApproval`` for one command, as Codex sends them."""
    amendment = list(prefix_rule) if prefix_rule else list(argv)
    params: JsonObj = {
        "kind": "command",
        "threadId": thread_id,
        "turnId": turn_id,
        "itemId": item_id,
        "startedAtMs": started_at_ms,
        "environmentId": environment_id,
    }
    if reason is not None:
        params["reason"] = reason
    params.update(
        {
            "command": command,
            "cwd": cwd,
            "commandActions": [{"type": "unknown", "command": user_cmd}],
            "proposedExecpolicyAmendment": amendment,
            "availableDecisions": [
                "accept",
                {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": amendment}},
                "cancel",
            ],
        }
    )
    return params
