"""Pinned messages and the not-found heuristics (agent_wrapper.md §5.5, extended per §8.2)."""

from __future__ import annotations

from agent_api.values import SessionSelector

__all__ = [
    "ADD_DIRS_RUNTIME_REJECTION",
    "APPROVAL_REQUIRED",
    "CANCELLED",
    "EXTERNAL_SANDBOX_FLAG_UNSUPPORTED",
    "EXTERNAL_SANDBOX_WARNING",
    "MODEL_RUNTIME_REJECTION",
    "is_not_found_signal",
    "selection_failure_message",
    "timeout_message",
]

ADD_DIRS_RUNTIME_REJECTION = "add_dirs rejected by runtime"
CANCELLED = "cancelled"
APPROVAL_REQUIRED = "approval required"
EXTERNAL_SANDBOX_WARNING = (
    "DANGEROUS: external sandbox exec policy enabled (agent_api.exec.external_sandbox.v1=true)"
)
MODEL_RUNTIME_REJECTION = "codex backend error: model rejected by runtime (details redacted)"
EXTERNAL_SANDBOX_FLAG_UNSUPPORTED = (
    "codex backend error: installed codex does not support "
    "--dangerously-bypass-approvals-and-sandbox (details redacted)"
)


def timeout_message(agent_kind: str) -> str:
    """The error text of a run that exceeded its timeout."""
    return f"{agent_kind} backend error: timeout (details redacted when unsafe)"


def selection_failure_message(selector: SessionSelector) -> str:
    """``no session found`` for ``last``, ``session not found`` for an id."""
    return "no session found" if selector.is_last else "session not found"


_NOT_FOUND_PHRASES = (
    "no session",
    "no sessions",
    "unknown session",
    "no thread",
    "no threads",
    "unknown thread",
    # Codex 0.169 words it this way for `exec resume <unknown uuid>` and `thread/fork` (§8.2).
    "no rollout found",
)


def is_not_found_signal(text: str) -> bool:
    """Whether stderr, an error line or an RPC error says the requested session does not exist."""
    lowered = text.lower()
    if "not found" in lowered and ("session" in lowered or "thread" in lowered):
        return True
    return any(phrase in lowered for phrase in _NOT_FOUND_PHRASES)
