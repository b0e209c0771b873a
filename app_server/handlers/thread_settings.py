"""thread/settings/update: change a loaded thread's sticky settings for its later turns without starting one.

As Codex 0.169: the answer is ``{}``; when anything changed, ``thread/settings/updated`` follows with the
thread's whole settings. Fields pycodex does not model (collaboration mode, personality, environments...)
are accepted and leave nothing changed."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, ClassVar

from app_server.context import HandlerContext
from app_server.handlers.announce import announce
from app_server.protocol import notices
from app_server.protocol.base import EmptyObject, ParamsModel
from app_server.protocol.common import (
    ApprovalsReviewer,
    AskForApproval,
    ReasoningEffort,
    ReasoningSummary,
    SandboxPolicy,
    ThreadId,
)
from app_server.protocol.turns import GRANULAR_APPROVAL
from app_server.threads.manager import sandbox_policy_wire
from app_server.threads.overrides import apply_turn_overrides
from app_server.threads.state import ThreadSettings
from pycodex.json_types import JsonObj

__all__ = ["ThreadSettingsUpdateParams", "settings_update", "settings_wire"]


class ThreadSettingsUpdateParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/settings/update"

    thread_id: ThreadId
    cwd: str | None = None
    approval_policy: Annotated[AskForApproval | None, GRANULAR_APPROVAL] = None
    approvals_reviewer: ApprovalsReviewer | None = None
    sandbox_policy: SandboxPolicy | None = None
    model: str | None = None
    service_tier: str | None = None
    effort: ReasoningEffort | None = None
    summary: ReasoningSummary | None = None
    collaboration_mode: dict[str, Any] | None = None
    disabled_plugin_ids: list[str] | None = None
    environments: list[Any] | None = None
    multi_agent_mode: str | None = None
    permissions: str | None = None
    personality: str | None = None


def settings_wire(s: ThreadSettings) -> JsonObj:
    """Codex's ``ThreadSettings``, in its key order."""
    cwd = str(s.cwd)
    return {
        "disabledPluginIds": [], "cwd": cwd,
        "environments": [{"environmentId": "local", "cwd": cwd, "runtimeWorkspaceRoots": [cwd]}],
        "approvalPolicy": s.approval_policy, "approvalsReviewer": s.approvals_reviewer,
        "sandboxPolicy": sandbox_policy_wire(s), "activePermissionProfile": None, "model": s.model,
        "modelProvider": s.model_provider, "serviceTier": s.service_tier, "effort": s.effort, "summary": s.summary,
        "collaborationMode": {"mode": "default", "settings": {"model": s.model, "reasoning_effort": s.effort,
                                                              "developer_instructions": None}},
        "multiAgentMode": "explicitRequestOnly", "personality": None,
    }


async def settings_update(ctx: HandlerContext, params: ThreadSettingsUpdateParams) -> EmptyObject:
    services = ctx.services
    thread = services.threads.get_loaded(params.thread_id)
    changed = apply_turn_overrides(thread.settings, params)
    if params.service_tier is not None and params.service_tier != thread.settings.service_tier:
        thread.settings.service_tier, changed = params.service_tier, True
    if changed:
        await asyncio.to_thread(thread.writer.settings_changed, thread.settings.to_record())
        note = notices.thread_settings_updated(thread.id, settings_wire(thread.settings))
        ctx.session.after_response(lambda: announce(ctx, thread.id, note))
    return EmptyObject()
