"""request_user_input end to end: the item/tool/requestUserInput round trip, the Default-mode refusal,
an error answer and an interrupted turn (Codex 0.169's texts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config

ARGS = {"questions": [{"id": "color", "header": "Color", "question": "Which color?",
                       "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}]}]}
ASKS = "[features]\ndefault_mode_request_user_input = true\n"


def _ask(call_id: str = "call_rui") -> dict[str, Any]:
    return {"type": "function_call", "name": "request_user_input", "arguments": ARGS, "call_id": call_id}


def _outputs(model: Any) -> dict[str, str]:
    return {i["call_id"]: i["output"] for r in model.requests() for i in r["body"].get("input", [])
            if i.get("type") == "function_call_output"}


async def _start(client: Any, workspace: Path) -> tuple[str, str]:
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn = await client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "ask"}]})
    return thread_id, turn["turn"]["id"]


async def _setup(app_server: Any, fake_model: Any, codex_home: Path, script: list[Any], extra: str = "") -> Any:
    model = await fake_model(script)
    model_config(codex_home, model.url, extra=extra)
    return model, await app_server()


async def test_the_client_answers_and_the_model_gets_the_answer(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client = await _setup(app_server, fake_model, codex_home,
                                 [{"output": [_ask()]}, {"output": [message("done")]}], ASKS)
    thread_id, turn_id = await _start(client, workspace)
    request = await client.wait_server_request("item/tool/requestUserInput")
    assert request["params"] == {
        "threadId": thread_id, "turnId": turn_id, "itemId": "call_rui",
        "questions": [{"id": "color", "header": "Color", "question": "Which color?", "isOther": True,
                       "isSecret": False, "options": ARGS["questions"][0]["options"]}],
        "isBlocking": False, "autoResolutionMs": None,
    }
    status = client.notifications("thread/status/changed")[-1]["params"]["status"]
    assert status == {"type": "active", "activeFlags": ["waitingOnUserInput"]}
    await client.respond(request["id"], {"answers": {"color": {"answers": ["Blue"]}}})
    await client.wait_notification("serverRequest/resolved", timeout=10)
    await client.wait_notification("turn/completed", timeout=15)
    assert _outputs(model) == {"call_rui": '{"answers":{"color":{"answers":["Blue"]}}}'}
    items = [n["params"]["item"]["type"] for n in client.notifications("item/completed")]
    assert items == ["userMessage", "agentMessage"]  # Codex emits no item for the question


async def test_default_mode_refuses_without_asking(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client = await _setup(app_server, fake_model, codex_home,
                                 [{"output": [_ask()]}, {"output": [message("done")]}])
    await _start(client, workspace)
    await client.wait_notification("turn/completed", timeout=15)
    assert _outputs(model) == {"call_rui": "request_user_input is unavailable in Default mode"}
    assert not [m for m in client.messages if m.get("method") == "item/tool/requestUserInput"]


async def test_an_error_answer_is_no_answers(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client = await _setup(app_server, fake_model, codex_home,
                                 [{"output": [_ask()]}, {"output": [message("done")]}], ASKS)
    await _start(client, workspace)
    request = await client.wait_server_request("item/tool/requestUserInput")
    await client.respond_error(request["id"], -32000, "nope")
    await client.wait_notification("turn/completed", timeout=15)
    assert _outputs(model) == {"call_rui": '{"answers":{}}'}


async def test_an_interrupt_ends_the_turn_and_resolves_the_question(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    _, client = await _setup(app_server, fake_model, codex_home, [{"output": [_ask()]}], ASKS)
    thread_id, turn_id = await _start(client, workspace)
    request = await client.wait_server_request("item/tool/requestUserInput")
    await client.call("turn/interrupt", {"threadId": thread_id, "turnId": turn_id})
    done = await client.wait_notification("turn/completed", timeout=15)
    assert done["params"]["turn"]["status"] == "interrupted"
    resolved = await client.wait_notification("serverRequest/resolved", timeout=10)
    assert resolved["params"] == {"threadId": thread_id, "requestId": request["id"]}
