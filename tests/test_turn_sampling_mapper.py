"""The sampling mapper, sans IO: response events in, actions for the runner out (in order)."""

from __future__ import annotations

from typing import Any

from app_server.model import events as ev
from app_server.threads.sampling import (
    Action,
    Completed,
    Emit,
    HistoryAppend,
    ItemDone,
    SampleMapper,
    ToolCall,
)

T, U = "thread-1", "turn-1"


def kinds(actions: list[Action]) -> list[str]:
    out = []
    for a in actions:
        out.append(a.notice.method if isinstance(a, Emit) else type(a).__name__)
    return out


def feed_all(mapper: SampleMapper, events: list[Any]) -> list[Action]:
    return [action for event in events for action in mapper.feed(event)]


def message(text: str, item_id: str | None = "m1") -> ev.MessageItem:
    raw = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}
    return ev.MessageItem(id=item_id, role="assistant", text=text, raw=raw)


def test_streamed_message_starts_deltas_then_history_and_done_item() -> None:
    mapper = SampleMapper(T, U)
    actions = feed_all(mapper, [
        ev.OutputItemAdded(0, message("", "m1")),
        ev.OutputTextDelta("m1", "Hel"),
        ev.OutputTextDelta("m1", "lo"),
        ev.OutputItemDone(0, message("Hello", "m1")),
        ev.ResponseCompleted("r1", ev.Usage(total_tokens=3)),
    ])
    assert kinds(actions) == ["item/started", "item/agentMessage/delta", "item/agentMessage/delta",
                              "HistoryAppend", "ItemDone", "Completed"]
    deltas = [a.notice.params["delta"] for a in actions[1:3] if isinstance(a, Emit)]
    assert deltas == ["Hel", "lo"]
    done = next(a for a in actions if isinstance(a, ItemDone))
    assert done.item["type"] == "agentMessage" and done.item["text"] == "Hello" and done.item["id"] == "m1"
    assert "completedAtMs" in done.item
    last = actions[-1]
    assert isinstance(last, Completed) and last.usage is not None and last.usage.total_tokens == 3
    assert mapper.produced_output


def test_a_delta_without_an_added_item_opens_one() -> None:
    mapper = SampleMapper(T, U)
    actions = mapper.feed(ev.OutputTextDelta(None, "hi"))
    assert kinds(actions) == ["item/started", "item/agentMessage/delta"]
    started = actions[0]
    assert isinstance(started, Emit) and started.notice.params["item"]["id"] == f"msg_{U}_1"


def test_a_message_done_without_added_is_started_and_finished_at_once() -> None:
    actions = SampleMapper(T, U).feed(ev.OutputItemDone(0, message("whole", None)))
    assert kinds(actions) == ["HistoryAppend", "item/started", "ItemDone"]
    done = actions[-1]
    assert isinstance(done, ItemDone) and done.item["text"] == "whole"


def test_reasoning_summary_is_collected_into_the_item() -> None:
    mapper = SampleMapper(T, U)
    raw = {"type": "reasoning", "summary": []}
    actions = feed_all(mapper, [
        ev.OutputItemAdded(0, ev.ReasoningItem("rs1", (), (), None, raw)),
        ev.ReasoningSummaryPartAdded("rs1", 0),
        ev.ReasoningSummaryTextDelta("rs1", 0, "think"),
        ev.ReasoningSummaryTextDelta("rs1", 1, "more"),
        ev.OutputItemDone(0, ev.ReasoningItem("rs1", (), (), None, raw)),
    ])
    assert kinds(actions) == ["item/started", "item/reasoning/summaryPartAdded",
                              "item/reasoning/summaryTextDelta", "item/reasoning/summaryTextDelta",
                              "HistoryAppend", "ItemDone"]
    done = actions[-1]
    assert isinstance(done, ItemDone) and done.item["summary"] == ["think", "more"]
    assert not mapper.produced_output  # reasoning alone does not stop a steer from restarting


def test_summary_events_for_an_unknown_item_are_ignored() -> None:
    mapper = SampleMapper(T, U)
    assert mapper.feed(ev.ReasoningSummaryPartAdded("nope", 0)) == []
    assert mapper.feed(ev.ReasoningSummaryTextDelta("nope", 0, "x")) == []


def test_function_and_custom_tool_calls_become_history_then_tool_calls() -> None:
    mapper = SampleMapper(T, U)
    fn = ev.FunctionCallItem(None, "call_1", "exec_command", '{"cmd":"ls"}', {"type": "function_call"})
    custom = ev.CustomToolCallItem(None, "call_2", "apply_patch", "*** Begin", {"type": "custom_tool_call"})
    actions = feed_all(mapper, [ev.OutputItemDone(0, fn), ev.OutputItemDone(1, custom)])
    assert actions == [
        HistoryAppend(fn.raw), ToolCall("call_1", "exec_command", '{"cmd":"ls"}', None),
        HistoryAppend(custom.raw), ToolCall("call_2", "apply_patch", "*** Begin", custom=True),
    ]
    assert mapper.produced_output


def test_a_restart_forgets_half_built_items() -> None:
    mapper = SampleMapper(T, U)
    mapper.feed(ev.OutputItemAdded(0, message("", "m1")))
    assert mapper.feed(ev.ResponseRestarted(attempt=2)) == []
    # The next delta for m1 opens a fresh item rather than appending to the forgotten one.
    assert kinds(mapper.feed(ev.OutputTextDelta("m1", "x"))) == ["item/started", "item/agentMessage/delta"]


def test_other_items_only_reach_history_and_unknown_events_do_nothing() -> None:
    mapper = SampleMapper(T, U)
    other = ev.OtherItem(type="web_search_call", id="w1", raw={"type": "web_search_call"})
    assert mapper.feed(ev.OutputItemDone(0, other)) == [HistoryAppend(other.raw)]
    assert mapper.feed(ev.UnknownEvent("response.mystery", {})) == []
    assert mapper.feed(ev.ResponseCreated("r1")) == []
