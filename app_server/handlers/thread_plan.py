"""thread/prepareApprovedPlan and turn/settings/update, as Codex 0.169 answers them.

thread/prepareApprovedPlan puts an approved plan into a loaded thread's model context before its first turn:
Codex appends it as the output of its ``proposed_plan`` tool (a ``function_call_output`` in the ``agent``
namespace) to the history and the rollout, and answers the prompt the client is to send, "Implement the
plan." It does so whether or not ``attachmentPath`` names a readable file (seen on the 0.169 binary); a
relative path is -32602.

turn/settings/update changes the settings of one running turn, for its later model requests only. Codex
refuses it (-32600) unless the ``step_model_switching`` feature is on; with it on, a turn that is not the
thread's running one is ``targetUnavailable``; then an update on a model without catalog metadata is refused
("the active model has only fallback metadata"), as is a switch to such a model ("the destination model
..."). Otherwise model, effort and summary apply to the turn's next requests ("applied"); serviceTier is
kept, though pycodex sends no tier to the provider. A new approvalsReviewer or environments (which Codex
applies to the running turn's later steps) is refused with a clear -32600: pycodex cannot change them mid-turn.
"""

from __future__ import annotations

import os

from app_server.context import HandlerContext
from app_server.handlers.thread_inject import append_history
from app_server.protocol import thread_experimental as p
from app_server.store import new_uuid7
from app_server.threads.model_metadata import has_model_metadata
from pycodex.jsonrpc.errors import InvalidParams, InvalidRequest

__all__ = ["prepare_approved_plan", "turn_settings_update"]

IMPLEMENT_PROMPT = "Implement the plan."
FEATURE = "step_model_switching"


async def prepare_approved_plan(
    ctx: HandlerContext, params: p.ThreadPrepareApprovedPlanParams
) -> p.ThreadPrepareApprovedPlanResponse:
    thread = ctx.services.threads.get_loaded(params.thread_id)
    if params.attachment_path is not None and not os.path.isabs(params.attachment_path):
        raise InvalidParams("`attachmentPath` must be absolute on the app server")
    plan = {"type": "function_call_output", "id": f"fco_{new_uuid7()}", "name": "proposed_plan",
            "namespace": "agent", "output": params.markdown}
    await append_history(thread, [plan])
    return p.ThreadPrepareApprovedPlanResponse(prompt=IMPLEMENT_PROMPT)


async def turn_settings_update(
    ctx: HandlerContext, params: p.TurnSettingsUpdateParams
) -> p.TurnSettingsUpdateResponse:
    thread = ctx.services.threads.get_loaded(params.thread_id)
    if not ctx.services.config.features.get(FEATURE, False):
        raise InvalidRequest(f"turn settings updates require the {FEATURE} feature")
    active = thread.active
    if active is None or active.id != params.turn_id:
        return p.TurnSettingsUpdateResponse(status="targetUnavailable")
    given = params.model_fields_set
    if given & {"approvals_reviewer", "environments"}:
        raise InvalidRequest("turn settings updates of approvalsReviewer or environments are not supported by "
                             "pycodex yet: the running turn keeps its reviewer and environments")
    # Codex checks model metadata for every other update, the empty one included (seen on the 0.169 binary).
    current = active.model(thread.settings.model)
    if not has_model_metadata(current):
        raise InvalidRequest("the active model has only fallback metadata")
    if params.model is not None and not has_model_metadata(params.model):
        raise InvalidRequest("the destination model has only fallback metadata")
    step = active.step_settings
    for name in ("model", "effort", "summary"):
        value = getattr(params, name)
        if value is not None:  # omission or null leaves it unchanged
            step[name] = value
    if "service_tier" in given:  # null clears the requested tier; pycodex sends none to the provider
        step["serviceTier"] = params.service_tier
    return p.TurnSettingsUpdateResponse(status="applied")
