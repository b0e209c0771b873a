"""Every notification constructor builds exactly the dict its pydantic model dumps (key order included).

The constructors keep plain dicts for the hot path; these tests are what keeps them equal to the schema.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any, get_args

import pytest

from app_server.protocol import notices
from app_server.protocol.base import to_wire
from app_server.protocol.notifications import NOTIFICATIONS, parse_notification
from app_server.store.thread_shape import build_thread
from app_server.threads import items as it
from app_server.threads.lifecycle import TurnEvent
from app_server.threads.state import TurnState, empty_usage

TID = "019a0000-0000-7000-8000-000000000001"
#: A thread's settings as app_server/handlers/thread_settings.py builds them (Codex's ThreadSettings).
SETTINGS = {
    "disabledPluginIds": [], "cwd": "/w",
    "environments": [{"environmentId": "local", "cwd": "/w", "runtimeWorkspaceRoots": ["/w"]}],
    "approvalPolicy": "on-request", "approvalsReviewer": "user", "sandboxPolicy": {"type": "dangerFullAccess"},
    "activePermissionProfile": None, "model": "m", "modelProvider": "openai", "serviceTier": None,
    "effort": "low", "summary": "auto",
    "collaborationMode": {"mode": "default", "settings": {"model": "m", "reasoning_effort": "low",
                                                          "developer_instructions": None}},
    "multiAgentMode": "explicitRequestOnly", "personality": None,
}
TURN = "019a0000-0000-7000-8000-000000000002"


def _turn_wire(status_done: bool) -> dict[str, Any]:
    turn = TurnState(TURN, inputs=[])
    if status_done:
        turn.apply(TurnEvent.LAUNCH)
        turn.finish(TurnEvent.COMPLETE)
    return turn.wire(view="notLoaded")


def _thread() -> dict[str, Any]:
    meta = {"id": TID, "sessionId": TID, "forkedFromId": None, "ephemeral": False, "modelProvider": "openai",
            "model": "gpt-5", "cwd": "/tmp", "cliVersion": "0.169.0", "originator": "t", "source": "vscode",
            "threadSource": None, "name": None}
    return build_thread(meta, thread_id=TID, path=None, preview="hi", name=None, created_at_ms=1_000,
                        updated_at_ms=2_000, turns=[], status={"type": "idle"})


def _usage() -> dict[str, Any]:
    return {"total": empty_usage(), "last": empty_usage(), "modelContextWindow": 258_400}


def _cases() -> list[notices.Notice]:
    async def build() -> list[notices.Notice]:  # TurnState wants a running loop for its events
        user = it.user_message("u1", [{"type": "text", "text": "hi", "text_elements": []}], started_at_ms=5)
        agent = dict(it.agent_message("m1", "hello", phase=None, started_at_ms=5), completedAtMs=9)
        command = it.command_execution("c1", argv=["/bin/bash", "-lc", "ls"], user_cmd="ls", cwd="/tmp",
                                       process_id=None, source="agent", started_at_ms=5)
        return [
            notices.thread_started(_thread()),
            notices.thread_status_changed(TID, {"type": "active", "activeFlags": []}),
            notices.thread_status_changed(TID, {"type": "notLoaded"}),
            notices.thread_read_state_changed(TID, {"firstUnread": {"type": "turn", "turnId": TURN},
                                                    "revision": "r1"}),
            notices.thread_archived(TID),
            notices.thread_unarchived(TID),
            notices.thread_name_updated(TID, "a name"),
            notices.thread_name_updated(TID, None),
            notices.token_usage_updated(TID, TURN, _usage()),
            notices.turn_started(TID, _turn_wire(False)),
            notices.turn_completed(TID, _turn_wire(True)),
            notices.turn_diff_updated(TID, TURN, "diff --git a/x b/x\n"),
            notices.error({"message": "boom", "codexErrorInfo": "other", "additionalDetails": None,
                           "misalignment": None},
                          will_retry=False, thread_id=TID, turn_id=TURN),
            notices.item_started(user, TID, TURN),
            notices.item_started(command, TID, TURN),
            notices.item_completed(agent, TID, TURN),
            notices.agent_message_delta(TID, TURN, "m1", "hel"),
            notices.command_output_delta(TID, TURN, "c1", "out\n"),
            notices.reasoning_summary_part_added(TID, TURN, "r1", 0),
            notices.reasoning_summary_text_delta(TID, TURN, "r1", "think", 1),
            notices.server_request_resolved(TID, 3),
            notices.rate_limits_updated(),
            notices.warning(TID, "model metadata missing"),
            notices.warning(None, "no thread"),
            notices.config_warning({"summary": "bad key", "details": None}),
            notices.mcp_startup_status(TID, "calc", "failed", "boom"),
            notices.deprecation_notice("hydration is deprecated"),
            notices.thread_deleted(TID),
            notices.thread_goal_cleared(TID),
            notices.thread_realtime_error(TID, "realtime conversation requires API key auth"),
            notices.thread_realtime_closed(TID, "requested"),
            notices.thread_queue_changed(TID),
            notices.thread_reverted(TID),
            notices.thread_settings_updated(TID, SETTINGS),
            notices.thread_attachment_updated(TID, "pr", "k1", TURN, "created"),
            notices.thread_attachment_updated(TID, "pr", "k1", TURN, "deleted"),
            notices.thread_goal_updated(TID, None, {
                "threadId": TID, "objective": "ship it", "status": "active", "tokenBudget": None,
                "tokensUsed": 0, "timeUsedSeconds": 0, "createdAt": 1, "updatedAt": 2}),
            notices.thread_section_changed(TID, "pinned"),
            notices.thread_section_changed(TID, None),
            notices.thread_search_partial(7, [{"threadId": TID, "snippet": "hi"}]),
            notices.fuzzy_session_updated("s1", "main", [{"root": "/r", "path": "main.py", "match_type": "file",
                                                           "file_name": "main.py", "score": 9, "indices": [0]}]),
            notices.fuzzy_session_completed("s1"),
        ]

    return asyncio.run(build())


CASES = _cases()


@pytest.mark.parametrize("notice", CASES, ids=[n.method for n in CASES])
def test_constructor_dict_equals_the_model_dump(notice: notices.Notice) -> None:
    model = parse_notification(notice.method, notice.params)
    # Compare the serialised text, so key order counts too (Codex writes a fixed order).
    assert json.dumps(to_wire(model)) == json.dumps(notice.params)


def test_every_constructor_is_covered_and_every_method_has_a_model() -> None:
    constructors = {name for name, fn in inspect.getmembers(notices, inspect.isfunction)
                    if fn.__module__ == notices.__name__ and name != "send"}
    covered = {n.method for n in CASES}
    assert set(get_args(notices.NoticeMethod)) == covered
    assert covered <= set(NOTIFICATIONS)
    assert len(constructors) == len(covered)


def test_send_hands_method_and_params_to_the_sink() -> None:
    seen: list[tuple[str, Any]] = []

    class Sink:
        async def notify(self, method: str, params: Any) -> None:
            seen.append((method, params))

    asyncio.run(notices.send(Sink(), notices.thread_archived(TID)))
    assert seen == [("thread/archived", {"threadId": TID})]


def test_experimental_notices_are_known_experimental_notifications() -> None:
    from app_server.protocol.notifications import EXPERIMENTAL_NOTIFICATIONS

    assert notices.EXPERIMENTAL <= set(get_args(notices.NoticeMethod))
    assert notices.EXPERIMENTAL <= EXPERIMENTAL_NOTIFICATIONS
