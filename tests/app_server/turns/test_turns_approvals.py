"""Command approvals end to end: the request, each decision, and what resolves a pending one."""

from __future__ import annotations

import asyncio
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import exec_call, message, model_config

DECLINED = 'exec_command failed: CreateProcess { message: "Rejected(\\"rejected by user\\")" }'
REASON = "Need to write outside the workspace"


@pytest.fixture
def outside_dir() -> Iterator[Path]:
    path = Path("/var/tmp") / f"pycodex-approvals-{uuid.uuid4().hex}"
    path.mkdir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _escalated(call_id: str, cmd: str) -> dict[str, Any]:
    return exec_call(call_id, cmd, sandbox_permissions="require_escalated", justification=REASON)


async def _start_turn(client: Any, thread_id: str, text: str) -> str:
    turn = (
        await client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": text}]})
    )["turn"]
    turn_id: str = turn["id"]
    return turn_id


async def _completed(client: Any, turn_id: str, timeout: float = 15) -> dict[str, Any]:
    done = await client.wait_notification(
        "turn/completed", lambda p: p["turn"]["id"] == turn_id, timeout=timeout
    )
    final: dict[str, Any] = done["params"]["turn"]
    return final


def _outputs(model: Any) -> dict[str, str]:
    return {
        i["call_id"]: i["output"]
        for r in model.requests()
        for i in r["body"].get("input", [])
        if i.get("type") == "function_call_output"
    }


def _index(client: Any, pred: Any) -> int:
    return next(i for i, m in enumerate(client.messages) if pred(m))


async def test_accept_decline_and_accept_for_session(
    app_server, fake_model, codex_home: Path, workspace: Path, outside_dir: Path
) -> None:
    accepted = f"printf esc > {outside_dir}/accepted.txt"
    session_cmd = f"printf s >> {outside_dir}/session.txt"
    model = await fake_model(
        [
            {"output": [_escalated("call_acc", accepted)]},
            {"output": [message("accepted done")]},
            {"output": [_escalated("call_dec", f"printf no > {outside_dir}/declined.txt")]},
            {"output": [message("declined done")]},
            {"output": [_escalated("call_s1", session_cmd)]},
            {"output": [_escalated("call_s2", session_cmd)]},
            {"output": [message("session done")]},
        ]
    )
    model_config(codex_home, model.url, approval_policy="on-request")
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]

    turn_id = await _start_turn(client, thread_id, "accept it")
    request = await client.wait_server_request("item/commandExecution/requestApproval")
    params = request["params"]
    argv = ["/bin/bash", "-lc", accepted]
    assert params == {
        "kind": "command",
        "threadId": thread_id,
        "turnId": turn_id,
        "itemId": "call_acc",
        "startedAtMs": params["startedAtMs"],
        "environmentId": "local",
        "reason": REASON,
        "command": f"/bin/bash -lc '{accepted}'",
        "cwd": str(workspace),
        "commandActions": [{"type": "unknown", "command": accepted}],
        "proposedExecpolicyAmendment": argv,
        "availableDecisions": [
            "accept",
            {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": argv}},
            "cancel",
        ],
    }
    assert list(params) == [
        "kind",
        "threadId",
        "turnId",
        "itemId",
        "startedAtMs",
        "environmentId",
        "reason",
        "command",
        "cwd",
        "commandActions",
        "proposedExecpolicyAmendment",
        "availableDecisions",
    ]
    waiting = client.notifications("thread/status/changed")[-1]["params"]["status"]
    assert waiting == {"type": "active", "activeFlags": ["waitingOnApproval"]}
    await client.respond(request["id"], {"decision": "accept"})
    resolved = await client.wait_notification(
        "serverRequest/resolved", lambda p: p["requestId"] == request["id"]
    )
    assert resolved["params"] == {"threadId": thread_id, "requestId": request["id"]}
    final = await _completed(client, turn_id)
    assert final["status"] == "completed"
    assert (outside_dir / "accepted.txt").read_text() == "esc"
    items = {m["params"]["item"]["id"]: m["params"]["item"] for m in client.notifications("item/completed")}
    assert items["call_acc"]["status"] == "completed" and items["call_acc"]["exitCode"] == 0
    assert "Process exited with code 0" in _outputs(model)["call_acc"]
    # serverRequest/resolved comes before the item completes, and after the answer.
    assert _index(client, lambda m: m.get("method") == "serverRequest/resolved") < _index(
        client, lambda m: m.get("method") == "item/completed" and m["params"]["item"]["id"] == "call_acc"
    )

    turn_id = await _start_turn(client, thread_id, "decline it")
    request = await client.wait_server_request("item/commandExecution/requestApproval")
    await client.respond(request["id"], {"decision": "decline"})
    await client.wait_notification("serverRequest/resolved", lambda p: p["requestId"] == request["id"])
    final = await _completed(client, turn_id)
    assert final["status"] == "completed" and final["items"][0]["text"] == "declined done"
    assert not (outside_dir / "declined.txt").exists()
    assert _outputs(model)["call_dec"] == DECLINED
    items = {m["params"]["item"]["id"]: m["params"]["item"] for m in client.notifications("item/completed")}
    assert items["call_dec"]["status"] == "declined"

    turn_id = await _start_turn(client, thread_id, "for the session")
    request = await client.wait_server_request("item/commandExecution/requestApproval")
    assert request["params"]["itemId"] == "call_s1"
    await client.respond(request["id"], {"decision": "acceptForSession"})
    final = await _completed(client, turn_id)
    assert final["status"] == "completed"
    assert (outside_dir / "session.txt").read_text() == "ss"  # the second identical command ran unasked
    assert len(client.server_requests) == 3


async def test_cancel_interrupts_the_turn_and_the_model_learns_it_next_time(
    app_server, fake_model, codex_home: Path, workspace: Path, outside_dir: Path
) -> None:
    model = await fake_model(
        [
            {"output": [_escalated("call_can", f"printf x > {outside_dir}/cancelled.txt")]},
            {"output": [message("next turn")]},
        ]
    )
    model_config(codex_home, model.url, approval_policy="on-request")
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn_id = await _start_turn(client, thread_id, "cancel it")
    request = await client.wait_server_request("item/commandExecution/requestApproval")
    await client.respond(request["id"], {"decision": "cancel"})
    await client.wait_notification("serverRequest/resolved", lambda p: p["requestId"] == request["id"])
    final = await _completed(client, turn_id)
    assert final["status"] == "interrupted" and final["error"] is None and final["items"] == []
    assert not (outside_dir / "cancelled.txt").exists()
    items = {m["params"]["item"]["id"]: m["params"]["item"] for m in client.notifications("item/completed")}
    assert items["call_can"]["status"] == "declined"
    turn_id = await _start_turn(client, thread_id, "again")
    assert (await _completed(client, turn_id))["status"] == "completed"
    output = _outputs(model)["call_can"]
    assert output.endswith("aborted by user") and output.startswith("Wall time: ")
    user = [
        c["text"]
        for i in model.requests()[-1]["body"]["input"]
        if i.get("role") == "user"
        for c in i["content"]
    ]
    assert any("<turn_aborted>" in t for t in user) and user[-1] == "again"


async def test_untrusted_policy_from_thread_start_asks_for_a_plain_write(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(
        [
            {"output": [exec_call("call_untr", "printf u > untrusted.txt")]},
            {"output": [message("written")]},
        ]
    )
    model_config(codex_home, model.url, approval_policy="on-request")
    client = await app_server()
    started = await client.call("thread/start", {"cwd": str(workspace), "approvalPolicy": "untrusted"})
    assert started["approvalPolicy"] == "untrusted"
    turn_id = await _start_turn(client, started["thread"]["id"], "write a file")
    request = await client.wait_server_request("item/commandExecution/requestApproval")
    assert request["params"]["itemId"] == "call_untr" and "reason" not in request["params"]
    await client.respond(request["id"], {"decision": "accept"})
    assert (await _completed(client, turn_id))["status"] == "completed"
    assert (workspace / "untrusted.txt").read_text() == "u"
    assert model.requests()


async def test_interrupt_resolves_a_pending_approval_after_turn_completed(
    app_server, fake_model, codex_home: Path, workspace: Path, outside_dir: Path
) -> None:
    model = await fake_model(
        [
            {"output": [_escalated("call_pend", f"printf p > {outside_dir}/pending.txt")]},
            {"output": [message("after interrupt")]},
        ]
    )
    model_config(codex_home, model.url, approval_policy="on-request")
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn_id = await _start_turn(client, thread_id, "wait for me")
    request = await client.wait_server_request("item/commandExecution/requestApproval")
    assert await client.call("turn/interrupt", {"threadId": thread_id, "turnId": turn_id}) == {}
    final = await _completed(client, turn_id)
    assert final["status"] == "interrupted"
    await client.wait_notification("serverRequest/resolved", lambda p: p["requestId"] == request["id"])
    done_at = _index(client, lambda m: m.get("method") == "turn/completed")
    resolved_at = _index(client, lambda m: m.get("method") == "serverRequest/resolved")
    assert done_at < resolved_at
    assert not [m for m in client.notifications("item/completed") if m["params"]["item"]["id"] == "call_pend"]
    # A late answer to the resolved request changes nothing; the thread takes the next turn.
    await client.respond(request["id"], {"decision": "accept"})
    turn_id = await _start_turn(client, thread_id, "next")
    assert (await _completed(client, turn_id))["status"] == "completed"
    assert not (outside_dir / "pending.txt").exists()


async def test_stdin_eof_with_a_pending_approval_exits_cleanly(
    app_server, fake_model, codex_home: Path, workspace: Path, outside_dir: Path
) -> None:
    model = await fake_model([{"output": [_escalated("call_eof", f"printf e > {outside_dir}/eof.txt")]}])
    model_config(codex_home, model.url, approval_policy="on-request")
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await _start_turn(client, thread_id, "then hang up")
    await client.wait_server_request("item/commandExecution/requestApproval")
    await client.close_stdin()
    assert await client.wait_exit(10) == 0
    await asyncio.sleep(0.2)
    assert not (outside_dir / "eof.txt").exists()
    assert len(model.requests()) == 1


async def test_a_client_that_disconnects_with_a_pending_approval_leaves_the_server_serving(
    app_server_ws, codex_schemas, fake_model, codex_home: Path, workspace: Path, outside_dir: Path
) -> None:
    from tests.support.appserver_ws import WsAppServerClient

    model = await fake_model(
        [
            {"output": [_escalated("call_gone", f"printf g > {outside_dir}/gone.txt")]},
            {"output": [message("carried on")]},
            {"output": [message("second client turn")]},
        ]
    )
    model_config(codex_home, model.url, approval_policy="on-request")
    first = await app_server_ws()
    assert first.process is not None
    url = first.process.argv[-1]
    second = await WsAppServerClient.connect(url, codex_schemas, label="second")
    try:
        await second.initialize(name="second_client")
        thread_id = (await first.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
        turn_id = await _start_turn(first, thread_id, "ask and leave")
        await first.wait_server_request("item/commandExecution/requestApproval")
        resumed = await second.call("thread/resume", {"threadId": thread_id})
        assert resumed["thread"]["status"] == {"type": "active", "activeFlags": ["waitingOnApproval"]}
        # The pending approval is offered again to the client that joined, on its own connection.
        replayed = await second.wait_server_request("item/commandExecution/requestApproval")
        assert replayed["params"]["itemId"] == "call_gone" and replayed["params"]["turnId"] == turn_id
        await first.ws.close()
        await asyncio.sleep(0.3)
        assert (await second.call("thread/loaded/list", {}))["data"] == [thread_id]
        await second.respond(replayed["id"], {"decision": "accept"})
        await second.wait_notification("serverRequest/resolved", lambda p: p["requestId"] == replayed["id"])
        final = await _completed(second, turn_id)
        assert final["status"] == "completed" and final["items"][0]["text"] == "carried on"
        assert (outside_dir / "gone.txt").read_text() == "g"
        turn_id = await _start_turn(second, thread_id, "still here")
        assert (await _completed(second, turn_id))["status"] == "completed"
    finally:
        await second.close()


async def test_accepting_an_execpolicy_amendment_allows_the_same_command_later(
    app_server, fake_model, codex_home: Path, workspace: Path, outside_dir: Path
) -> None:
    cmd = f"printf s >> {outside_dir}/amended.txt"
    model = await fake_model(
        [
            {"output": [_escalated("call_a1", cmd)]},
            {"output": [_escalated("call_a2", cmd)]},
            {"output": [message("done")]},
            {"output": [_escalated("call_a3", cmd)]},
            {"output": [message("done in a new process")]},
        ]
    )
    model_config(codex_home, model.url, approval_policy="on-request")
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn_id = await _start_turn(client, thread_id, "amend")
    request = await client.wait_server_request("item/commandExecution/requestApproval")
    amendment = request["params"]["proposedExecpolicyAmendment"]
    assert amendment == ["/bin/bash", "-lc", cmd]
    decision = {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": amendment}}
    await client.respond(request["id"], {"decision": decision})
    assert (await _completed(client, turn_id))["status"] == "completed"
    assert (outside_dir / "amended.txt").read_text() == "ss"
    assert len(client.server_requests) == 1
    rules = (codex_home / "rules" / "default.rules").read_text()
    assert f'prefix_rule(pattern=["/bin/bash", "-lc", "{cmd}"], decision="allow")' in rules
    assert await client.close() == 0

    # The rule is kept: a new process runs the same command in a new thread without asking.
    later = await app_server()
    thread_id = (await later.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn_id = await _start_turn(later, thread_id, "again")
    assert (await _completed(later, turn_id))["status"] == "completed"
    assert (outside_dir / "amended.txt").read_text() == "sss"
    assert not later.server_requests
