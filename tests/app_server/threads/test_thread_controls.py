"""The small thread controls: the out-of-band elicitation counter, thread/sample/cancel,
thread/prediction/request, thread/realtime/listVoices, thread/guardianReview and
thread/approveGuardianDeniedAction. Texts are Codex 0.169's (seen from the binary); answers are checked
against its schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import message, model_config, run_turn

MISSING = "00000000-0000-7000-8000-000000000000"
COMMAND = {"type": "command", "source": "shell", "command": "rm -rf build", "cwd": "/tmp"}


async def _started(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path) -> tuple[Any, Any, str]:
    model = await fake_model({"responses": [{"output": [message("hi")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    return client, model, thread_id


async def _error(client: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    response = await client.request(method, params)
    assert "error" in response, response
    error: dict[str, Any] = response["error"]
    return error


async def test_elicitation_counter_counts_per_thread_and_stops_at_zero(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, _, thread_id = await _started(app_server, fake_model, codex_home, workspace)
    other = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    inc, dec = "thread/increment_elicitation", "thread/decrement_elicitation"
    assert await client.call(inc, {"threadId": thread_id}) == {"count": 1, "paused": True}
    assert await client.call(inc, {"threadId": thread_id}) == {"count": 2, "paused": True}
    assert await client.call(inc, {"threadId": other}) == {"count": 1, "paused": True}
    assert await client.call(dec, {"threadId": thread_id}) == {"count": 1, "paused": True}
    assert await client.call(dec, {"threadId": thread_id}) == {"count": 0, "paused": False}
    assert await _error(client, dec, {"threadId": thread_id}) == {
        "code": -32600, "data": {"appErrorCode": "invalid_request"},
        "message": "out-of-band elicitation count is already zero"}
    for method in (inc, dec):
        assert await _error(client, method, {"threadId": MISSING}) == {
            "code": -32600, "data": {"appErrorCode": "thread_not_found", "threadId": MISSING},
            "message": f"thread not found: {MISSING}"}


async def test_sample_cancel_prediction_and_voices(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, _, thread_id = await _started(app_server, fake_model, codex_home, workspace)
    assert await client.call("thread/sample/cancel", {"requestId": 7}) == {}
    assert await client.call("thread/sample/cancel", {"requestId": "r"}) == {}
    # Codex refuses the unknown key; pycodex ignores it, as on every method (a newer client may send it).
    assert await client.call("thread/sample/cancel", {"requestId": 7, "extra": 1}) == {}
    assert await _error(client, "thread/prediction/request", {"threadId": thread_id, "sourceTurnId": MISSING}) == {
        "code": -32601, "data": {"appErrorCode": "method_not_supported", "method": "thread/prediction/request"},
        "message": "thread/prediction/request is not implemented yet"}
    voices = (await client.call("thread/realtime/listVoices", {}))["voices"]
    assert (voices["defaultV1"], voices["defaultV2"]) == ("cove", "marin")
    assert voices["defaultV1"] in voices["v1"] and voices["defaultV2"] in voices["v2"]
    assert set(voices["v1"]) <= set(voices["v3"])


async def test_controls_need_the_experimental_api(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client = await app_server()
    for method in ("thread/increment_elicitation", "thread/realtime/listVoices", "thread/guardianReview"):
        assert await _error(client, method, {"threadId": MISSING}) == {
            "code": -32600, "data": {"appErrorCode": "experimental_api_required", "feature": method},
            "message": f"{method} requires experimentalApi capability"}


async def test_approving_a_denied_action_tells_the_model(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, model, thread_id = await _started(app_server, fake_model, codex_home, workspace)
    method = "thread/approveGuardianDeniedAction"
    denied = {"id": "review-1", "status": "denied", "action": COMMAND, "rationale": "destructive"}
    assert await client.call(method, {"threadId": thread_id, "event": denied}) == {}
    approved = {"id": "review-2", "status": "approved", "action": {**COMMAND, "command": "ls"}}
    assert await client.call(method, {"threadId": thread_id, "event": approved}) == {}  # accepted, ignored
    await run_turn(client, thread_id, "go on")
    texts = [part["text"] for item in model.requests()[-1]["body"]["input"] if item.get("role") == "developer"
             for part in item["content"]]
    expected = json.dumps({"action": COMMAND, "outcome": "allowed"}, indent=2)
    assert sum(expected in text for text in texts) == 1
    assert not any('"ls"' in text for text in texts)


async def test_denied_action_event_errors_read_as_codex(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, _, thread_id = await _started(app_server, fake_model, codex_home, workspace)
    cases: list[tuple[Any, str]] = [
        ({}, "missing field `id`"),
        ({"id": "r"}, "missing field `status`"),
        ({"id": "r", "status": "denied"}, "missing field `action`"),
        ({"id": 5, "status": "denied", "action": COMMAND}, "invalid type: number, expected a string"),
        ({"id": "r", "status": "nope", "action": COMMAND},
         "unknown variant `nope`, expected one of `in_progress`, `approved`, `denied`, `timed_out`, `aborted`"),
        ({"id": "r", "status": "denied", "action": {"type": "command"}}, "missing field `source`"),
        ("text", 'invalid type: string "text", expected struct GuardianAssessmentEvent'),
        (None, "invalid type: null, expected struct GuardianAssessmentEvent"),
    ]
    for event, text in cases:
        error = await _error(client, "thread/approveGuardianDeniedAction", {"threadId": thread_id, "event": event})
        assert error == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                         "message": f"invalid Guardian denial event: {text}"}
    valid = {"id": "r", "status": "denied", "action": COMMAND}
    assert await _error(client, "thread/approveGuardianDeniedAction", {"threadId": MISSING, "event": valid}) == {
        "code": -32600, "data": {"appErrorCode": "thread_not_found", "threadId": MISSING},
        "message": f"thread not found: {MISSING}"}


async def test_guardian_review_looks_at_the_final_call(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, _, thread_id = await _started(app_server, fake_model, codex_home, workspace)
    review = {"threadId": thread_id}
    reviewable = "plaintext exec_command, apply_patch, request_permissions, or MCP call"
    assert await _error(client, "thread/guardianReview", review) == {
        "code": -32600, "data": {"appErrorCode": "invalid_request"},
        "message": f"expected a final {reviewable}"}
    await run_turn(client, thread_id, "hello")
    not_a_call = {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                  "message": f"expected a completed {reviewable} with a nonempty call ID"}
    assert await _error(client, "thread/guardianReview", review) == not_a_call
    call = {"type": "function_call", "name": "exec_command", "call_id": "c9", "arguments": '{"cmd": "ls"}'}
    await client.call("thread/inject_items", {"threadId": thread_id, "items": [call]})
    # the default reviewer is the user: the auto-review is skipped and its assessment is null
    assert await client.call("thread/guardianReview", review) == {"callId": "c9", "assessment": None}
    output = {"type": "function_call_output", "call_id": "c9", "output": "a.txt"}
    await client.call("thread/inject_items", {"threadId": thread_id, "items": [output]})
    assert await _error(client, "thread/guardianReview", review) == not_a_call
    assert await _error(client, "thread/guardianReview", {"threadId": MISSING}) == {
        "code": -32600, "data": {"appErrorCode": "thread_not_found", "threadId": MISSING},
        "message": f"thread not found: {MISSING}"}


async def test_guardian_review_refuses_without_an_auto_reviewer(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path, app_server_argv: list[str] | None
) -> None:
    """Under an auto-review policy pycodex has no reviewer to ask, and says so (Codex runs its reviewer)."""
    if app_server_argv is not None:
        pytest.skip("pycodex's own answer: Codex runs a real auto-review here")
    client, _, _ = await _started(app_server, fake_model, codex_home, workspace)
    thread_id = (await client.call("thread/start", {"cwd": str(workspace), "approvalsReviewer": "auto_review"}))[
        "thread"]["id"]
    call = {"type": "function_call", "name": "apply_patch", "call_id": "c1", "arguments": "{}"}
    await client.call("thread/inject_items", {"threadId": thread_id, "items": [call]})
    error = await _error(client, "thread/guardianReview", {"threadId": thread_id})
    assert error["code"] == -32600 and "no approval auto-reviewer" in error["message"]
