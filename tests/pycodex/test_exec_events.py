"""The v2-notification → `codex exec --json` event mapper (pycodex.exec_cli.events), without any I/O."""

from __future__ import annotations

from typing import Any

from pycodex.exec_cli.events import ExecEventMapper, camel_to_snake

T = "01a22acd-b9e6-7da1-afdb-ccc86f377dfd"


def _cmd(status: str, output: str | None, code: int | None) -> dict[str, Any]:
    return {"type": "commandExecution", "id": "call_1", "command": "/bin/bash -lc 'echo hi'", "cwd": "/w",
            "status": status, "commandActions": [], "aggregatedOutput": output, "exitCode": code}


def _usage(inp: int, cached: int, out: int, reasoning: int) -> dict[str, Any]:
    total = {"inputTokens": inp, "cachedInputTokens": cached, "cacheWriteInputTokens": 0, "outputTokens": out,
             "reasoningOutputTokens": reasoning, "totalTokens": inp + out}
    return {"threadId": T, "turnId": "t", "tokenUsage": {"total": total, "last": total}}


def test_a_command_turn_maps_to_codex_events_field_for_field() -> None:
    m = ExecEventMapper()
    events = [m.thread_started(T)]
    for method, params in [
        ("thread/status/changed", {"threadId": T, "status": {"type": "active"}}),
        ("turn/started", {"threadId": T, "turn": {"id": "t", "status": "inProgress"}}),
        ("item/started", {"item": {"type": "userMessage", "id": "u", "content": []}}),
        ("item/completed", {"item": {"type": "userMessage", "id": "u", "content": []}}),
        ("item/started", {"item": _cmd("inProgress", None, None)}),
        ("item/commandExecution/outputDelta", {"itemId": "call_1", "delta": "hi\n"}),
        ("item/completed", {"item": _cmd("completed", "hi\n", 0)}),
        ("item/started", {"item": {"type": "agentMessage", "id": "m", "text": ""}}),
        ("item/agentMessage/delta", {"itemId": "m", "delta": "do"}),
        ("item/completed", {"item": {"type": "agentMessage", "id": "m", "text": "done"}}),
        ("thread/tokenUsage/updated", _usage(22, 6, 14, 4)),
        ("turn/completed", {"threadId": T, "turn": {"id": "t", "status": "completed", "error": None}}),
    ]:
        events += m.feed(method, params)
    cmd = {"id": "item_0", "type": "command_execution", "command": "/bin/bash -lc 'echo hi'"}
    assert events == [
        {"type": "thread.started", "thread_id": T},
        {"type": "turn.started"},
        {"type": "item.started", "item": {**cmd, "aggregated_output": "", "exit_code": None, "status": "in_progress"}},
        {"type": "item.completed", "item": {**cmd, "aggregated_output": "hi\n", "exit_code": 0, "status": "completed"}},
        {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": "done"}},
        {"type": "turn.completed", "usage": {"input_tokens": 22, "cached_input_tokens": 6,
                                             "cache_write_input_tokens": 0, "output_tokens": 14,
                                             "reasoning_output_tokens": 4}},
    ]
    # Codex's key order, which JSONL consumers see.
    assert list(events[3]["item"]) == ["id", "type", "command", "aggregated_output", "exit_code", "status"]
    assert m.outcome.last_message == "done" and not m.outcome.failed and m.outcome.total_tokens == 36


def test_a_failed_command_is_failed_with_its_exit_code() -> None:
    m = ExecEventMapper()
    m.feed("item/started", {"item": _cmd("inProgress", None, None)})
    [done] = m.feed("item/completed", {"item": _cmd("failed", "oops\n", 3)})
    assert done["item"]["status"] == "failed" and done["item"]["exit_code"] == 3 and done["item"]["id"] == "item_0"


def test_reasoning_file_change_and_warnings() -> None:
    m = ExecEventMapper()
    assert m.feed("item/completed", {"item": {"type": "reasoning", "id": "r", "summary": [], "content": []}}) == []
    [reasoning] = m.feed("item/completed", {"item": {"type": "reasoning", "id": "r2", "summary": ["**T** x"]}})
    assert reasoning["item"] == {"id": "item_0", "type": "reasoning", "text": "**T** x"}
    change = {"type": "fileChange", "id": "p", "status": "inProgress",
              "changes": [{"path": "/w/a.txt", "kind": {"type": "add"}, "diff": "+x"}]}
    [started] = m.feed("item/started", {"item": change})
    [completed] = m.feed("item/completed", {"item": {**change, "status": "completed"}})
    assert started["item"] == {"id": "item_1", "type": "file_change",
                               "changes": [{"path": "/w/a.txt", "kind": "add"}], "status": "in_progress"}
    assert completed["item"]["status"] == "completed" and completed["item"]["id"] == "item_1"
    [warning] = m.feed("warning", {"threadId": T, "message": "careful"})
    assert warning == {"type": "item.completed", "item": {"id": "item_2", "type": "error", "message": "careful"}}


def test_a_failed_turn_ends_with_error_then_turn_failed() -> None:
    m = ExecEventMapper()
    retry = m.feed("error", {"error": {"message": "Reconnecting... 1/2", "additionalDetails": "boom"},
                             "willRetry": True})
    assert retry == [{"type": "error", "message": "Reconnecting... 1/2 (boom)"}]
    assert not m.outcome.failed  # a retry notice does not end anything
    final = m.feed("error", {"error": {"message": "bad thing"}, "willRetry": False})
    failed = m.feed("turn/completed", {"turn": {"id": "t", "status": "failed", "error": {"message": "bad thing"}}})
    assert final == [{"type": "error", "message": "bad thing"}]
    assert failed == [{"type": "turn.failed", "error": {"message": "bad thing"}}]
    assert m.outcome.failed and m.outcome.error_message == "bad thing"


def test_an_interrupted_turn_fails_with_the_recorded_reason_and_usage_defaults_to_zero() -> None:
    m = ExecEventMapper()
    m.outcome.error_message = "the model provider is unreachable"
    [failed] = m.feed("turn/completed", {"turn": {"id": "t", "status": "interrupted", "error": None}})
    assert failed == {"type": "turn.failed", "error": {"message": "the model provider is unreachable"}}
    ok = ExecEventMapper().feed("turn/completed", {"turn": {"id": "t", "status": "completed"}})
    assert ok[0]["usage"] == {"input_tokens": 0, "cached_input_tokens": 0, "cache_write_input_tokens": 0,
                              "output_tokens": 0, "reasoning_output_tokens": 0}


def test_a_plan_becomes_a_todo_list_that_completes_with_the_turn() -> None:
    m = ExecEventMapper()
    plan = {"plan": [{"step": "a", "status": "completed"}, {"step": "b", "status": "pending"}]}
    [first] = m.feed("turn/plan/updated", plan)
    [second] = m.feed("turn/plan/updated", plan)
    end = m.feed("turn/completed", {"turn": {"id": "t", "status": "completed"}})
    items = [{"text": "a", "completed": True}, {"text": "b", "completed": False}]
    assert first == {"type": "item.started", "item": {"id": "item_0", "type": "todo_list", "items": items}}
    assert second["type"] == "item.updated" and end[0]["type"] == "item.completed"
    assert [e["type"] for e in end] == ["item.completed", "turn.completed"]


def test_unknown_notifications_and_items_are_ignored() -> None:
    m = ExecEventMapper()
    assert m.feed("thread/started", {"thread": {"id": T}}) == []
    assert m.feed("item/completed", {"item": {"type": "contextCompaction", "id": "c"}}) == []
    assert m.feed("item/completed", {"item": "not an object"}) == []
    assert camel_to_snake("inProgress") == "in_progress" and camel_to_snake("declined") == "declined"


def test_items_get_their_own_ids_when_the_model_reuses_one() -> None:
    """Codex 0.169 numbers every item (item_1, item_2, item_3) even when the model gives three the same id;
    the started and completed events of one item still share its number."""
    m = ExecEventMapper()
    events: list[dict[str, Any]] = []
    for method, params in [
        ("item/completed", {"item": {"type": "reasoning", "id": "dup", "summary": ["thinking"], "content": []}}),
        ("item/completed", {"item": {"type": "agentMessage", "id": "dup", "text": "one"}}),
        ("item/started", {"item": {**_cmd("inProgress", None, None), "id": "dup"}}),
        ("item/completed", {"item": {**_cmd("completed", "hi\n", 0), "id": "dup"}}),
        ("item/completed", {"item": {"type": "agentMessage", "id": "dup", "text": "two"}}),
    ]:
        events += m.feed(method, params)
    assert [(e["type"], e["item"]["id"]) for e in events] == [
        ("item.completed", "item_0"), ("item.completed", "item_1"), ("item.started", "item_2"),
        ("item.completed", "item_2"), ("item.completed", "item_3"),
    ]
