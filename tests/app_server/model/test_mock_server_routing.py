"""The mock model's routing for threads that run at once: `when` picks a reply by the requesting thread's
user text, `fill` copies a value from the request into the reply; a script without `when` keeps its order."""

from __future__ import annotations

from typing import Any

from app_server.model.mock_server import Script


def _body(*user_texts: str, extra: list[Any] | None = None) -> dict[str, Any]:
    items: list[Any] = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": t}]}
                        for t in user_texts]
    return {"input": items + (extra or [])}


def test_when_routes_each_request_to_its_threads_next_reply() -> None:
    script = Script([
        {"when": "PARENT", "output": ["parent one"]},
        {"when": "PARENT", "output": ["parent two"]},
        {"when": "CHILD", "output": ["child one"]},
    ])
    child = _body("CHILD task")
    parent = _body("PARENT task", extra=[{"type": "function_call", "arguments": "CHILD task"}])
    assert script.take(child) == (0, 2)  # a function call's arguments are not user text
    assert script.take(parent) == (1, 0)
    assert script.take(parent) == (2, 1)
    assert script.take(child) == (3, None)  # the child's replies are used up


def test_fill_copies_from_the_request_and_an_unrouted_script_keeps_its_order() -> None:
    script = Script([{"output": [{"type": "function_call", "name": "f", "arguments": '{"id": "{{ID}}"}'}],
                      "fill": {"ID": r"agent_id\W+([0-9a-f-]{36})"}}])
    output = '{"agent_id":"0190b2c8-0000-7000-8000-000000000001"}'
    body = {"input": [{"type": "function_call_output", "output": output}]}
    assert script.take(body) == (0, 0)
    (call,) = script.answer(0, body).items
    assert call["arguments"] == '{"id": "0190b2c8-0000-7000-8000-000000000001"}'
    assert script.parsed[0].items[0]["arguments"] == '{"id": "{{ID}}"}'  # the script itself is unchanged
    assert script.take(None) == (1, None)
