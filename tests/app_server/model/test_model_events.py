"""Typing Responses stream events from SSE events."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app_server.model.events import (
    CustomToolCallItem,
    EventParseError,
    FunctionCallItem,
    MessageItem,
    OtherItem,
    OutputItemAdded,
    OutputItemDone,
    OutputTextDelta,
    ReasoningItem,
    ReasoningSummaryPartAdded,
    ReasoningSummaryTextDelta,
    ResponseCompleted,
    ResponseCreated,
    ResponseFailed,
    UnknownEvent,
    Usage,
    parse_event,
)
from app_server.model.sse import SseEvent


def sse(data: dict[str, Any], event: str = "message") -> SseEvent:
    return SseEvent(event=event, data=json.dumps(data))


def test_created_delta_and_completed_with_usage_are_typed() -> None:
    assert parse_event(sse({"type": "response.created", "response": {"id": "r1"}})) == ResponseCreated("r1")
    delta = parse_event(sse({"type": "response.output_text.delta", "item_id": "m1", "delta": "hi"}))
    assert delta == OutputTextDelta(item_id="m1", delta="hi")
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 4},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 2},
        "total_tokens": 15,
    }
    completed = parse_event(sse({"type": "response.completed", "response": {"id": "r1", "usage": usage}}))
    assert completed == ResponseCompleted("r1", Usage(10, 4, 5, 2, 15))


def test_reasoning_summary_events_carry_their_index() -> None:
    part = parse_event(
        sse({"type": "response.reasoning_summary_part.added", "item_id": "rs", "summary_index": 1})
    )
    assert part == ReasoningSummaryPartAdded(item_id="rs", summary_index=1)
    delta = parse_event(
        sse(
            {
                "type": "response.reasoning_summary_text.delta",
                "item_id": "rs",
                "summary_index": 1,
                "delta": "x",
            }
        )
    )
    assert delta == ReasoningSummaryTextDelta(item_id="rs", summary_index=1, delta="x")


@pytest.mark.parametrize(
    ("item", "expected_type"),
    [
        (
            {
                "type": "message",
                "id": "m",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "a"}],
            },
            MessageItem,
        ),
        (
            {"type": "function_call", "id": "fc", "call_id": "c", "name": "n", "arguments": "{}"},
            FunctionCallItem,
        ),
        (
            {"type": "custom_tool_call", "id": "ct", "call_id": "c", "name": "apply_patch", "input": "x"},
            CustomToolCallItem,
        ),
        (
            {
                "type": "reasoning",
                "id": "rs",
                "summary": [{"type": "summary_text", "text": "s"}],
                "encrypted_content": "e",
            },
            ReasoningItem,
        ),
        ({"type": "web_search_call", "id": "ws", "status": "completed"}, OtherItem),
    ],
)
def test_output_items_are_typed_and_keep_their_raw_json(item: dict[str, Any], expected_type: type) -> None:
    added = parse_event(sse({"type": "response.output_item.added", "output_index": 0, "item": item}))
    done = parse_event(sse({"type": "response.output_item.done", "output_index": 0, "item": item}))
    assert isinstance(added, OutputItemAdded) and isinstance(done, OutputItemDone)
    assert isinstance(done.item, expected_type)
    assert done.item.raw == item


def test_item_fields_are_extracted() -> None:
    item = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "a"}, {"type": "output_text", "text": "b"}],
    }
    done = parse_event(sse({"type": "response.output_item.done", "item": item}))
    assert isinstance(done, OutputItemDone) and isinstance(done.item, MessageItem)
    assert (done.item.text, done.item.role, done.item.id) == ("ab", "assistant", None)
    reasoning = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "s1"}],
        "encrypted_content": "e",
    }
    done = parse_event(sse({"type": "response.output_item.done", "item": reasoning}))
    assert isinstance(done, OutputItemDone) and isinstance(done.item, ReasoningItem)
    assert (done.item.summary, done.item.encrypted_content) == (("s1",), "e")


def test_failed_and_error_events_carry_code_and_message() -> None:
    failed = parse_event(
        sse(
            {
                "type": "response.failed",
                "response": {"id": "r", "error": {"code": "server_error", "message": "m"}},
            }
        )
    )
    assert isinstance(failed, ResponseFailed) and (failed.code, failed.message) == ("server_error", "m")
    error = parse_event(sse({"type": "error", "code": "rate_limit_exceeded", "message": "slow"}))
    assert isinstance(error, ResponseFailed) and (error.code, error.message) == (
        "rate_limit_exceeded",
        "slow",
    )


def test_unknown_events_are_tolerated() -> None:
    event = parse_event(sse({"type": "response.in_progress", "response": {}}))
    assert event == UnknownEvent(
        type="response.in_progress", data={"type": "response.in_progress", "response": {}}
    )


def test_the_sse_event_name_is_used_when_the_json_has_no_type() -> None:
    assert parse_event(sse({"response": {"id": "r"}}, event="response.created")) == ResponseCreated("r")


@pytest.mark.parametrize("data", ["not json", "[1, 2]"])
def test_non_object_data_is_a_parse_error(data: str) -> None:
    with pytest.raises(EventParseError):
        parse_event(SseEvent(data=data))


def test_an_item_event_without_an_item_is_a_parse_error() -> None:
    with pytest.raises(EventParseError, match="without an `item`"):
        parse_event(sse({"type": "response.output_item.done"}))
