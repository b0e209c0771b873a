"""Several clients on one live thread, over two WebSocket connections to one app-server process.

What Codex 0.169 does and these tests hold pycodex to: every subscribed connection gets the thread's
notifications in the same order; an approval is offered to each client under that client's own request id,
the first answer wins and every asked client is told with ``serverRequest/resolved`` (params ``threadId`` and
``requestId``, the id on that client's connection); a client that joins or rejoins mid-turn gets the running
turn's items so far in ``thread/resume`` and everything after as notifications, so no item is lost.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import exec_call, message, model_config

APPROVAL = "item/commandExecution/requestApproval"


@pytest.fixture
def outside_dir() -> Iterator[Path]:
    """A folder outside the workspace, so writing there needs an approval."""
    path = Path("/var/tmp") / f"pycodex-multi-{uuid.uuid4().hex}"
    path.mkdir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _escalated(call_id: str, cmd: str) -> dict[str, Any]:
    return exec_call(call_id, cmd, sandbox_permissions="require_escalated", justification="write outside")


async def _start_turn(client: Any, thread_id: str, text: str) -> str:
    params = {"threadId": thread_id, "input": [{"type": "text", "text": text}]}
    turn_id: str = (await client.call("turn/start", params))["turn"]["id"]
    return turn_id


def _thread_stream(client: Any, thread_id: str, turn_id: str) -> list[tuple[str, Any]]:
    """The thread's notifications from the turn's start on, as (method, params) with the per-connection
    request id left out (each client has its own)."""
    stream: list[tuple[str, Any]] = []
    started = False
    for note in client.notifications():
        params = note.get("params") or {}
        if note["method"] == "turn/started" and params.get("turn", {}).get("id") == turn_id:
            started = True
        if not started or params.get("threadId") != thread_id:
            continue
        if note["method"] == "serverRequest/resolved":
            params = {k: v for k, v in params.items() if k != "requestId"}
        stream.append((note["method"], params))
    return stream


async def _second_client(first: Any, codex_schemas: Any, label: str) -> Any:
    from tests.support.appserver_ws import WsAppServerClient

    assert first.process is not None
    client = await WsAppServerClient.connect(first.process.argv[-1], codex_schemas, label=label)
    await client.initialize(name=label)
    return client


async def test_two_clients_see_the_turn_one_answers_the_approval_the_other_is_told(
    app_server_ws, codex_schemas, fake_model, codex_home: Path, workspace: Path, outside_dir: Path
) -> None:
    model = await fake_model(
        [
            {"output": [message("asking"), _escalated("call_two", f"printf 2 > {outside_dir}/two.txt")]},
            {"output": [message("done")]},
        ]
    )
    model_config(codex_home, model.url, approval_policy="on-request")
    first = await app_server_ws()
    second = await _second_client(first, codex_schemas, "second")
    try:
        thread_id = (await first.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
        await second.call("thread/resume", {"threadId": thread_id})
        turn_id = await _start_turn(first, thread_id, "ask both")
        # Both connections are asked, each under its own request id.
        asked_first = await first.wait_server_request(APPROVAL)
        asked_second = await second.wait_server_request(APPROVAL)
        assert asked_first["params"] == asked_second["params"]
        assert asked_second["params"]["itemId"] == "call_two" and asked_second["params"]["turnId"] == turn_id
        # The client that did not start the turn answers first: its answer wins.
        await second.respond(asked_second["id"], {"decision": "accept"})
        told = await first.wait_notification("serverRequest/resolved", timeout=15)
        assert told["params"] == {"threadId": thread_id, "requestId": asked_first["id"]}
        resolved = await second.wait_notification("serverRequest/resolved", timeout=15)
        assert resolved["params"] == {"threadId": thread_id, "requestId": asked_second["id"]}
        # A late answer from the other client changes nothing (the request is closed) and breaks nothing.
        await first.respond(asked_first["id"], {"decision": "decline"})
        for client in (first, second):
            done = await client.wait_notification(
                "turn/completed", lambda p: p["turn"]["id"] == turn_id, timeout=15
            )
            assert done["params"]["turn"]["status"] == "completed"
        assert (outside_dir / "two.txt").read_text() == "2"
        assert len(model.requests()) == 2
        # Both saw the same notifications of the thread, in the same order.
        stream = _thread_stream(first, thread_id, turn_id)
        assert [m for m, _ in stream].count("item/completed") >= 3  # user message, agent message, command
        assert stream == _thread_stream(second, thread_id, turn_id)
        # Each connection was asked once and told once.
        assert len([m for m in first.messages if m.get("method") == APPROVAL]) == 1
        assert len(first.notifications("serverRequest/resolved")) == 1
        assert len(second.notifications("serverRequest/resolved")) == 1
        # The server still serves both after the late answer.
        assert (await first.call("thread/loaded/list", {}))["data"] == [thread_id]
        assert "Traceback" not in first.stderr_text  # the late answer is only logged as unmatched
    finally:
        await second.close()


async def test_a_client_that_reconnects_mid_turn_loses_no_item(
    app_server_ws, codex_schemas, fake_model, codex_home: Path, workspace: Path, outside_dir: Path
) -> None:
    model = await fake_model(
        [
            {"output": [message("before the ask", item_id="msg_before"), _escalated("call_back", f"printf b > {outside_dir}/b.txt")]},
            {"output": [message("after the answer", item_id="msg_after")]},
        ]
    )
    model_config(codex_home, model.url, approval_policy="on-request")
    owner = await app_server_ws()
    first = await _second_client(owner, codex_schemas, "first")
    rejoined = None
    try:
        thread_id = (await first.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
        turn_id = await _start_turn(first, thread_id, "ask, then drop")
        await first.wait_server_request(APPROVAL)
        seen_before = {n["params"]["item"]["id"] for n in first.notifications("item/started")}
        assert "call_back" in seen_before
        await first.close()  # the connection drops mid-turn, with the approval open
        rejoined = await _second_client(owner, codex_schemas, "rejoined")
        resumed = await rejoined.call("thread/resume", {"threadId": thread_id})
        running = resumed["thread"]["turns"][-1]
        assert running["id"] == turn_id and running["status"] == "inProgress"
        snapshot = {item["id"]: item for item in running["items"]}
        # Everything the first connection had seen is in the running turn that resume replays.
        assert seen_before <= set(snapshot)
        assert any(i["type"] == "agentMessage" and i["text"] == "before the ask" for i in snapshot.values())
        replayed = await rejoined.wait_server_request(APPROVAL)
        assert replayed["params"]["itemId"] == "call_back"
        await rejoined.respond(replayed["id"], {"decision": "accept"})
        done = await rejoined.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn_id, timeout=15)
        assert done["params"]["turn"]["status"] == "completed"
        # The turn as stored has no item the rejoined client did not get, in the snapshot or after it.
        after = {n["params"]["item"]["id"] for n in rejoined.notifications("item/completed")}
        read = await rejoined.call("thread/read", {"threadId": thread_id, "includeTurns": True})
        stored = next(t for t in read["thread"]["turns"] if t["id"] == turn_id)
        stored_ids = [item["id"] for item in stored["items"]]
        assert len(stored_ids) == 4 and {"msg_before", "call_back", "msg_after"} <= set(stored_ids)
        assert set(stored_ids) <= set(snapshot) | after
        # The command was still running when the client rejoined: it is shown in progress, then completed.
        assert snapshot["call_back"]["status"] == "inProgress" and "call_back" in after
        assert (outside_dir / "b.txt").read_text() == "b"
    finally:
        if rejoined is not None:
            await rejoined.close()
        await first.close()
