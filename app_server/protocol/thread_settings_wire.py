"""Codex's ``ThreadSettings``: a loaded thread's effective settings, as `thread/settings/updated` carries them.

``settings_wire`` (``app_server/threads/manager.py``) builds the same keys in the same
order; this model is what the schema (and generate-ts) describe.
"""

from __future__ import annotations

from pydantic import Field

from .base import WireModel
from .common import (
    AbsolutePath,
    ActivePermissionProfile,
    ApprovalsReviewer,
    AskForApproval,
    CollaborationMode,
    MultiAgentMode,
    Personality,
    ReasoningEffort,
    ReasoningSummary,
    SandboxPolicy,
)
from .threads import ThreadEnvironment

__all__ = ["ThreadSettings"]


class ThreadSettings(WireModel):
    """The settings the next turn of a thread runs with."""

    disabled_plugin_ids: list[str] = Field(default_factory=list)
    cwd: AbsolutePath
    environments: list[ThreadEnvironment] | None = None
    approval_policy: AskForApproval
    approvals_reviewer: ApprovalsReviewer
    sandbox_policy: SandboxPolicy
    active_permission_profile: ActivePermissionProfile | None = None
    model: str
    model_provider: str
    service_tier: str | None = None
    effort: ReasoningEffort | None = None
    summary: ReasoningSummary | None = None
    collaboration_mode: CollaborationMode
    multi_agent_mode: MultiAgentMode = "explicitRequestOnly"
    personality: Personality | None = None
