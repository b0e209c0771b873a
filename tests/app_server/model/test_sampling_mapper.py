"""The sampling mapper on its own: model response events in, turn-runner actions out (no IO, no server)."""

from __future__ import annotations

from typing import Any

from app_server.model import events as ev
from app_server.protocol.notices import Notice
from app_server.threads.sampling import Completed, Emit, HistoryAppend, ItemDone, SampleMapper, ToolCall

THREAD, TURN = "thr_1", "turn_1"


def _mapper() -> SampleMapper:
    return SampleMapper(THREAD, TURN)


def _message(
    item_id: str | None, text: str, *, role: str = "assistant", phase: str | None = None
) -> ev.MessageItem:
    raw: dict[str, Any] = {
        "type": "message",
        "role": role,
        "content": [{"type": "output_text", "text": text}],
    }
    if item_id:
        raw["id"] = item_id
    return ev.MessageItem(id=item_id, role=role, text=text, raw=raw, phase=phase)


def _reasoning(
    item_id: str, summary: tuple[str, ...] = (), content: tuple[str, ...] = ()
) -> ev.ReasoningItem:
    raw = {
        "type": "reasoning",
        "id": item_id,
        "summary": [{"type": "summary_text", "text": s} for s in summary],
    }
    return ev.ReasoningItem(id=item_id, summary=summary, content=content, encrypted_content=None, raw=raw)


def _kinds(actions: list[Any]) -> list[str]:
    return [a.notice.method if isinstance(a, Emit) else type(a).__name__ for a in actions]


def test_a_streamed_assistant_message_starts_streams_and_completes_one_item() -> None:
    mapper = _mapper()
    added = mapper.feed(ev.OutputItemAdded(0, _message("msg_a", "")))
    assert _kinds(added) == ["item/started"]
    started = added[0]
    assert isinstance(started, Emit)
    assert started.notice.params["threadId"] == THREAD and started.notice.params["turnId"] == TURN
    assert started.notice.params["item"]["type"] == "agentMessage" and started.notice.params["item"]["id"] == "msg_a"
    assert started.notice.params["startedAtMs"] == started.notice.params["item"]["startedAtMs"]

    deltas = mapper.feed(ev.OutputTextDelta("msg_a", "Hel")) + mapper.feed(ev.OutputTextDelta("msg_a", "lo"))
    assert [a.notice.params["delta"] for a in deltas if isinstance(a, Emit)] == ["Hel", "lo"]
    assert all(isinstance(a, Emit) and a.notice.method == "item/agentMessage/delta" for a in deltas)
    assert {a.notice.params["itemId"] for a in deltas if isinstance(a, Emit)} == {"msg_a"}

    done_item = _message("msg_a", "Hello", phase="final_answer")
    done = mapper.feed(ev.OutputItemDone(0, done_item))
    assert _kinds(done) == ["HistoryAppend", "ItemDone"]
    assert done[0] == HistoryAppend(done_item.raw)
    finished = done[1]
    assert isinstance(finished, ItemDone)
    assert finished.item["text"] == "Hello" and finished.item["phase"] == "final_answer"
    assert finished.item["completedAtMs"] >= finished.item["startedAtMs"]
    assert mapper.produced_output


def test_deltas_fill_the_text_when_the_done_item_carries_none() -> None:
    mapper = _mapper()
    mapper.feed(ev.OutputItemAdded(0, _message("msg_a", "")))
    mapper.feed(ev.OutputTextDelta("msg_a", "from "))
    mapper.feed(ev.OutputTextDelta("msg_a", "deltas"))
    done = mapper.feed(ev.OutputItemDone(0, _message("msg_a", "")))
    finished = [a for a in done if isinstance(a, ItemDone)]
    assert finished[0].item["text"] == "from deltas"


def test_a_delta_for_an_unannounced_item_opens_one_and_ids_are_unique_per_turn() -> None:
    mapper = _mapper()
    first = mapper.feed(ev.OutputTextDelta(None, "a"))
    assert _kinds(first) == ["item/started", "item/agentMessage/delta"]
    second = mapper.feed(ev.OutputTextDelta(None, "b"))
    ids = {a.notice.params["itemId"] for a in first + second if isinstance(a, Emit) and "itemId" in a.notice.params}
    assert len(ids) == 2 and all(i.startswith(f"msg_{TURN}_") for i in ids)


def test_a_done_message_never_announced_is_started_then_completed() -> None:
    mapper = _mapper()
    done = mapper.feed(ev.OutputItemDone(0, _message(None, "whole")))
    assert _kinds(done) == ["HistoryAppend", "item/started", "ItemDone"]
    completed = done[2]
    assert isinstance(completed, ItemDone) and completed.item["text"] == "whole"


def test_user_and_developer_messages_only_go_to_history() -> None:
    mapper = _mapper()
    item = _message("m_user", "echo", role="user")
    assert mapper.feed(ev.OutputItemDone(0, item)) == [HistoryAppend(item.raw)]
    assert not mapper.produced_output


def test_reasoning_summaries_stream_by_index_and_complete() -> None:
    mapper = _mapper()
    assert _kinds(mapper.feed(ev.OutputItemAdded(0, _reasoning("rs_1")))) == ["item/started"]
    part = mapper.feed(ev.ReasoningSummaryPartAdded("rs_1", 1))
    assert part == [
        Emit(Notice(
            "item/reasoning/summaryPartAdded",
            {"threadId": THREAD, "turnId": TURN, "itemId": "rs_1", "summaryIndex": 1},
        ))
    ]
    delta = mapper.feed(ev.ReasoningSummaryTextDelta("rs_1", 1, "thinking"))
    assert isinstance(delta[0], Emit) and delta[0].notice.params["delta"] == "thinking"
    done = mapper.feed(ev.OutputItemDone(0, _reasoning("rs_1", content=("raw",))))
    finished = next(a for a in done if isinstance(a, ItemDone))
    # The done item had no summary: what streamed (index 0 padded) is kept.
    assert finished.item["summary"] == ["", "thinking"] and finished.item["content"] == ["raw"]
    assert not mapper.produced_output  # reasoning alone is not visible output


def test_summary_events_for_an_unknown_item_are_dropped() -> None:
    mapper = _mapper()
    assert mapper.feed(ev.ReasoningSummaryPartAdded("rs_missing", 0)) == []
    assert mapper.feed(ev.ReasoningSummaryTextDelta("rs_missing", 0, "x")) == []


def test_function_and_custom_tool_calls_become_history_then_tool_calls() -> None:
    mapper = _mapper()
    raw = {"type": "function_call", "call_id": "call_1", "name": "exec_command", "arguments": '{"cmd":"ls"}'}
    call = ev.FunctionCallItem(
        id="fc_1",
        call_id="call_1",
        name="exec_command",
        arguments='{"cmd":"ls"}',
        raw=raw,
        namespace="mcp__calc",
    )
    assert mapper.feed(ev.OutputItemDone(0, call)) == [
        HistoryAppend(raw),
        ToolCall("call_1", "exec_command", '{"cmd":"ls"}', "mcp__calc"),
    ]
    custom_raw = {
        "type": "custom_tool_call",
        "call_id": "call_2",
        "name": "apply_patch",
        "input": "*** Begin",
    }
    custom = ev.CustomToolCallItem(
        id=None, call_id="call_2", name="apply_patch", input="*** Begin", raw=custom_raw
    )
    assert mapper.feed(ev.OutputItemDone(1, custom)) == [
        HistoryAppend(custom_raw),
        ToolCall("call_2", "apply_patch", "*** Begin", custom=True),
    ]
    assert mapper.produced_output


def test_other_items_are_kept_for_history_and_completion_carries_usage() -> None:
    mapper = _mapper()
    # (web_search_call has its own item now: tests/app_server/tools/test_web_search.py)
    other = ev.OtherItem(type="image_generation_call", id="ig_1", raw={"type": "image_generation_call", "id": "ig_1"})
    assert mapper.feed(ev.OutputItemDone(0, other)) == [HistoryAppend(other.raw)]
    usage = ev.Usage(input_tokens=3, output_tokens=2, total_tokens=5)
    assert mapper.feed(ev.ResponseCompleted("resp_1", usage)) == [Completed(usage)]
    assert mapper.feed(ev.ResponseCreated("resp_1")) == []


def test_a_restart_forgets_half_built_items() -> None:
    mapper = _mapper()
    mapper.feed(ev.OutputItemAdded(0, _message("msg_a", "")))
    mapper.feed(ev.OutputTextDelta("msg_a", "stale "))
    assert mapper.feed(ev.ResponseRestarted(attempt=2)) == []
    # After the restart the same id is new again: a fresh item/started and only the new text.
    again = mapper.feed(ev.OutputTextDelta("msg_a", "fresh"))
    assert _kinds(again) == ["item/started", "item/agentMessage/delta"]
    done = mapper.feed(ev.OutputItemDone(0, _message("msg_a", "")))
    assert next(a for a in done if isinstance(a, ItemDone)).item["text"] == "fresh"


def test_unknown_events_do_nothing() -> None:
    assert _mapper().feed(ev.UnknownEvent("response.mystery", {})) == []
