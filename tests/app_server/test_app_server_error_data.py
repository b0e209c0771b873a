"""Real requests get the `error.data` code docs/errors.md gives them, with Codex's `code` and `message` kept:
before initialize, an unknown method, bad params, an unknown thread, a turn already running, a thread another
server writes, and Codex's own data (a config write conflict) passed through untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import exec_call, message, model_config, ok_model, run_turn

MISSING = "019a0000-0000-7000-8000-000000000000"  # a well-formed thread id no thread has


async def refused(client: Any, method: str, params: Any) -> dict[str, Any]:
    answer = await client.request(method, params, timeout=30)
    assert "error" in answer, answer
    error: dict[str, Any] = answer["error"]
    return error


async def test_handshake_method_and_params_errors_carry_their_codes(app_server: Any) -> None:
    fresh = await app_server(initialize=False)
    assert await refused(fresh, "thread/loaded/list", {}) == {
        "code": -32600, "data": {"appErrorCode": "not_initialized"}, "message": "Not initialized"}
    client = await app_server()
    again = await refused(client, "initialize", {"clientInfo": {"name": "t", "version": "0"}})
    assert again["data"] == {"appErrorCode": "already_initialized"}
    unknown = await refused(client, "bogus/method", {})
    assert unknown["data"] == {"appErrorCode": "method_not_found", "method": "bogus/method"}
    assert unknown["message"].startswith("Invalid request: unknown variant `bogus/method`")
    bad = await refused(client, "turn/start", {"threadId": 5, "input": []})
    assert bad["data"] == {"appErrorCode": "invalid_params"} and bad["message"].startswith("Invalid request: ")
    gated = await refused(client, "thread/search", {"searchTerm": "x"})
    assert gated == {"code": -32600, "data": {"appErrorCode": "experimental_api_required", "feature": "thread/search"},
                     "message": "thread/search requires experimentalApi capability"}


async def test_an_unknown_thread_is_thread_not_found_with_its_id(app_server: Any) -> None:
    client = await app_server()
    for method, params, text in [
        ("thread/resume", {"threadId": MISSING}, f"no rollout found for thread id {MISSING}"),
        ("turn/steer", {"threadId": MISSING, "input": [], "expectedTurnId": "t"}, f"thread not found: {MISSING}"),
    ]:
        assert await refused(client, method, params) == {
            "code": -32600, "data": {"appErrorCode": "thread_not_found", "threadId": MISSING}, "message": text}
    unloaded = await refused(client, "thread/read", {"threadId": MISSING})
    assert unloaded["data"] == {"appErrorCode": "thread_not_loaded", "threadId": MISSING}


async def test_a_running_turn_refuses_a_second_one_with_turn_in_progress(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    # The turn waits on a command approval: it is running for as long as the test does not answer.
    waiting = exec_call("call_wait", "printf x", sandbox_permissions="require_escalated", justification="why")
    model = await fake_model([{"output": [waiting]}, {"output": [message("done")]}])
    model_config(codex_home, model.url, approval_policy="on-request")
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "go"}]})
    approval = await client.wait_server_request("item/commandExecution/requestApproval", timeout=30)
    assert await refused(client, "thread/compact/start", {"threadId": thread_id}) == {
        "code": -32600, "data": {"appErrorCode": "turn_in_progress", "threadId": thread_id},
        "message": f"thread {thread_id} already has an active turn"}
    mismatch = await refused(client, "turn/steer", {"threadId": thread_id, "input": [], "expectedTurnId": "nope"})
    assert mismatch["data"]["appErrorCode"] == "turn_id_mismatch" and mismatch["data"]["expectedTurnId"] == "nope"
    await client.respond(approval["id"], {"decision": "decline"})
    await client.wait_notification("turn/completed", timeout=30)
    idle = await refused(client, "turn/interrupt", {"threadId": thread_id, "turnId": "any"})
    assert idle["data"] == {"appErrorCode": "no_active_turn"}


async def test_a_thread_another_server_writes_is_thread_locked(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    await ok_model(fake_model, codex_home)
    owner = await app_server()
    thread_id = (await owner.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(owner, thread_id, "hello")
    intruder = await app_server(subprocess=True)  # another process on the same CODEX_HOME
    assert await refused(intruder, "thread/resume", {"threadId": thread_id}) == {
        "code": -32600, "data": {"appErrorCode": "thread_locked", "threadId": thread_id},
        "message": f"thread {thread_id} already has an active writer"}


async def test_codexs_own_error_data_is_sent_as_codex_sends_it(app_server: Any) -> None:
    client = await app_server()
    conflict = await refused(client, "config/value/write", {
        "keyPath": "model", "value": "m", "mergeStrategy": "replace", "expectedVersion": "sha256:stale"})
    assert conflict == {"code": -32600, "data": {"config_write_error_code": "configVersionConflict"},
                        "message": "Configuration was modified since last read. Fetch latest version and retry."}
