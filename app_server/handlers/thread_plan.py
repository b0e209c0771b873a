"""thread/prepareApprovedPlan and turn/settings/update, as Codex 0.169 answers them.

thread/prepareApprovedPlan puts an approved plan into a loaded thread's model context before its first turn:
Codex appends it as the output of its ``proposed_plan`` tool (a ``function_call_output`` in the ``agent``
namespace) to the history and the rollout, and answers the prompt the client is to send, "Implement the
plan." It does so whether or not ``attachmentPath`` names a readable file (seen on the 0.169 binary); a
relative path is -32602.

turn/settings/update changes the settings of one running turn. Codex refuses it (-32600) unless the
``step_model_switching`` feature is on; with it on, a turn that is not the thread's running one is
``targetUnavailable``. Applying new settings to a running turn mid-way is not supported by pycodex yet:
that case gets a clear -32600 instead of a pretended "applied".
"""

from __future__ import annotations

import os

from app_server.context import HandlerContext
from app_server.handlers.thread_inject import append_history
from app_server.protocol import thread_experimental as p
from app_server.store import new_uuid7
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
    raise InvalidRequest("turn settings updates are not supported by pycodex yet: a running turn keeps the "
                         "settings it started with")
